package licensing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"strings"
)

// ReleaseManifestUse is the token_use of a release manifest.
const ReleaseManifestUse = "service_release_manifest_v1"

// ReleaseManifest is what a checked manifest says about one published file.
type ReleaseManifest struct {
	Issuer string
	// IssuedAt: when the release was published (Unix seconds).
	IssuedAt int64
	// App is the app id, Release the release id.
	App      string
	Release  string
	Version  string
	Filename string
	// Platform and Arch are "" for a file of every platform or architecture.
	Platform string
	Arch     string
	Size     int64
	// SHA256 and SHA512 are hex.
	SHA256 string
	SHA512 string
	// Claims holds every claim as the manifest carries it.
	Claims map[string]any
}

// ArtifactOptions says what VerifyArtifact checks a file's manifest against.
type ArtifactOptions struct {
	// AppID: your app id; a manifest of another app's file is refused (wrong_app).
	AppID string
	// KeySet: the key set shipped with your software or stored from GET /licenses/jwks.
	KeySet *KeySet
	// JWKSURL: the key set address (Client.JWKSURL), fetched when there is no KeySet or it lacks
	// the manifest's key (a rotation since it was stored).
	JWKSURL string
	// Version and Filename, when not "", must be the manifest's (wrong_version, wrong_file).
	Version  string
	Filename string
	// Issuer, when not "", must be the manifest's iss (invalid_manifest otherwise).
	Issuer string
	// HTTPClient fetches JWKSURL; nil: http.DefaultClient.
	HTTPClient *http.Client
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

const maxSafeInteger = 1<<53 - 1

// VerifyArtifact checks a downloaded file against its signed manifest (the Manifest of each file
// of an update check): the signature by an offline key of the key set, token_use, app, the
// version and file name when given, then the size and SHA-256 of the bytes, read as they come
// (one buffer of memory for a file of any size). A refusal is an *Error of KindArtifact; codes:
// invalid_manifest, invalid_signature, wrong_token_use, wrong_app, wrong_version, wrong_file,
// size_mismatch, digest_mismatch, key_set_unavailable. An error reading artifact is answered as it is.
func VerifyArtifact(ctx context.Context, artifact io.Reader, manifest string, options ArtifactOptions) (*ReleaseManifest, error) {
	checked, err := checkManifest(ctx, manifest, options)
	if err != nil {
		return nil, err
	}
	hash := sha256.New()
	// One byte past the manifest's size is enough to know the file is larger.
	read, err := io.Copy(hash, io.LimitReader(artifact, checked.Size+1))
	if err != nil {
		return nil, err
	}
	if read != checked.Size {
		return nil, artifactError("size_mismatch", fmt.Sprintf("The file's size is not the manifest's %d bytes", checked.Size))
	}
	if hex.EncodeToString(hash.Sum(nil)) != checked.SHA256 {
		return nil, artifactError("digest_mismatch", "The file's SHA-256 is not the manifest's")
	}
	return checked, nil
}

// VerifyArtifactFile is VerifyArtifact on the file at path.
func VerifyArtifactFile(ctx context.Context, path string, manifest string, options ArtifactOptions) (*ReleaseManifest, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return VerifyArtifact(ctx, file, manifest, options)
}

func checkManifest(ctx context.Context, manifest string, options ArtifactOptions) (*ReleaseManifest, error) {
	if options.AppID == "" {
		return nil, errors.New("licensing: AppID: must be your app id")
	}
	if options.KeySet == nil && options.JWKSURL == "" {
		return nil, errors.New("licensing: KeySet or JWKSURL: give the key set, its address, or both")
	}
	manifest = strings.TrimSpace(manifest)
	if manifest == "" {
		return nil, artifactError("invalid_manifest", "The manifest is missing")
	}
	claims, err := verifyManifestSignature(ctx, manifest, options)
	if err != nil {
		return nil, err
	}
	if claims["token_use"] != ReleaseManifestUse {
		return nil, artifactError("wrong_token_use", "Not a release manifest (token_use)")
	}
	app, okApp := claims["app"].(string)
	version, okVersion := claims["version"].(string)
	filename, okFilename := claims["filename"].(string)
	size, okSize := number(claims["size"])
	digest, okDigest := claims["sha256"].(string)
	if !okApp || !okVersion || !okFilename || !okSize || size != math.Trunc(size) || size < 0 ||
		size > maxSafeInteger || !okDigest || !sha256Hex.MatchString(digest) {
		return nil, artifactError("invalid_manifest", "The manifest lacks app, version, filename, size or sha256")
	}
	if options.Issuer != "" && claims["iss"] != options.Issuer {
		return nil, artifactError("invalid_manifest", "The manifest was signed by another service")
	}
	if app != options.AppID {
		return nil, artifactError("wrong_app", "The manifest is of another app's file")
	}
	if options.Version != "" && version != options.Version {
		return nil, artifactError("wrong_version", "The manifest is of version "+version)
	}
	if options.Filename != "" && filename != options.Filename {
		return nil, artifactError("wrong_file", "The manifest is of "+filename)
	}
	text := func(name string) string {
		value, _ := claims[name].(string)
		return value
	}
	issuedAt, _ := number(claims["iat"])
	return &ReleaseManifest{
		Issuer: text("iss"), IssuedAt: int64(issuedAt), App: app, Release: text("release"), Version: version,
		Filename: filename, Platform: text("platform"), Arch: text("arch"), Size: int64(size),
		SHA256: digest, SHA512: text("sha512"), Claims: claims,
	}, nil
}

// verifyManifestSignature checks the manifest with the offline keys of the stored set, or of
// the set fetched from JWKSURL when there is none or it lacks the manifest's key.
func verifyManifestSignature(ctx context.Context, manifest string, options ArtifactOptions) (map[string]any, error) {
	fetched := func() ([]map[string]any, error) {
		set, err := FetchKeySet(ctx, options.HTTPClient, options.JWKSURL)
		if err != nil {
			return nil, &Error{Kind: KindArtifact, Code: "key_set_unavailable", Message: err.Error(), Err: err}
		}
		return offlineKeys(set.Keys), nil
	}
	var keys []map[string]any
	if options.KeySet != nil {
		keys = offlineKeys(options.KeySet.Keys)
	} else {
		var err error
		if keys, err = fetched(); err != nil {
			return nil, err
		}
	}
	claims, err := verifyCompact(manifest, keys)
	var refused *jwsError
	if errors.As(err, &refused) && refused.reason == jwsNoKey && options.KeySet != nil && options.JWKSURL != "" {
		if keys, err = fetched(); err != nil {
			return nil, err
		}
		claims, err = verifyCompact(manifest, keys)
	}
	if errors.As(err, &refused) {
		switch refused.reason {
		case jwsAlgNotAllowed, jwsNoKey, jwsBadSignature:
			return nil, artifactError("invalid_signature", "The manifest is not signed by a key of the key set")
		default:
			return nil, artifactError("invalid_manifest", "Not a signed manifest: "+refused.message)
		}
	}
	return claims, err
}

func artifactError(code, message string) *Error {
	return &Error{Kind: KindArtifact, Code: code, Message: message}
}
