package licensing

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The conformance vectors (packages/conformance) through this SDK: every verdict must be the one
// the TypeScript SDK reaches. The vectors come from CONFORMANCE_VECTORS (the folder the service
// wrote them to), else from ../conformance/vectors when generated there.

var vectorKinds = []string{"license_token", "seat_token", "license_file", "revocation_list", "webhook", "release_manifest"}

type vector struct {
	Name  string                     `json:"name"`
	Kind  string                     `json:"kind"`
	Input map[string]json.RawMessage `json:"input"`
	Keys  struct {
		JWKS   *KeySet `json:"jwks"`
		Secret string  `json:"secret"`
	} `json:"keys"`
	Context struct {
		Now         float64             `json:"now"`
		AppID       string              `json:"appId"`
		HWUID       string              `json:"hwuid"`
		Nonce       string              `json:"nonce"`
		LicenseKey  string              `json:"licenseKey"`
		Clock       *ClockState         `json:"clock"`
		Revocations *RevocationSnapshot `json:"revocations"`
		Version     string              `json:"version"`
		Filename    string              `json:"filename"`
	} `json:"context"`
	Expect struct {
		Valid       bool           `json:"valid"`
		Error       string         `json:"error"`
		Claims      map[string]any `json:"claims"`
		Clock       any            `json:"clock"`
		Revocations any            `json:"revocations"`
	} `json:"expect"`
}

type outcome struct {
	valid       bool
	code        string
	claims      map[string]any
	clock       *ClockState
	revocations *RevocationSnapshot
}

func vectorDir() string {
	if given := os.Getenv("CONFORMANCE_VECTORS"); given != "" {
		return given
	}
	local := filepath.Join("..", "conformance", "vectors")
	if _, err := os.Stat(filepath.Join(local, "license_token.json")); err == nil {
		return local
	}
	return ""
}

func loadVectors(t *testing.T, folder string) []vector {
	var vectors []vector
	for _, kind := range vectorKinds {
		data, err := os.ReadFile(filepath.Join(folder, kind+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var document struct {
			Vectors []vector `json:"vectors"`
		}
		if err := json.Unmarshal(data, &document); err != nil {
			t.Fatalf("%s.json: %v", kind, err)
		}
		vectors = append(vectors, document.Vectors...)
	}
	return vectors
}

func inputString(v vector, field string) string {
	var text string
	_ = json.Unmarshal(v.Input[field], &text)
	return text
}

// outcomeOf checks the vector as a program using this SDK would.
func outcomeOf(v vector) outcome {
	moment := time.UnixMilli(int64(v.Context.Now * 1000))
	now := func() time.Time { return moment }
	keys := KeySet{}
	if v.Keys.JWKS != nil {
		keys = *v.Keys.JWKS
	}
	var clock Store[ClockState]
	if v.Context.Clock != nil {
		clock = v.Context.Clock
	}
	result := outcome{clock: v.Context.Clock}
	var claims map[string]any
	var err error
	switch v.Kind {
	case "license_token", "seat_token":
		var verifier *TokenVerifier
		verifier, err = NewTokenVerifier(TokenVerifierOptions{AppID: v.Context.AppID, KeySet: &keys, Now: now, Clock: clock})
		if err == nil {
			claims, err = verifier.Verify(context.Background(), inputString(v, "token"))
		}
	case "license_file":
		options := LicenseFileOptions{
			KeySet: keys, AppID: v.Context.AppID, HWUID: v.Context.HWUID, LicenseKey: v.Context.LicenseKey,
			Nonce: v.Context.Nonce, Clock: clock, Now: now,
		}
		if v.Context.Revocations != nil {
			options.Revocations = &MemoryStore[RevocationSnapshot]{Value: v.Context.Revocations}
		}
		claims, err = VerifyLicenseFile(inputString(v, "file"), options)
	case "revocation_list":
		store := &MemoryStore[RevocationSnapshot]{Value: v.Context.Revocations}
		_, err = CheckRevocations(inputString(v, "list"), RevocationOptions{
			KeySet: keys, AppID: v.Context.AppID, Store: store, Clock: clock, Now: now,
		})
		result.revocations = store.Value
	case "webhook":
		var headers map[string]string
		_ = json.Unmarshal(v.Input["headers"], &headers)
		claims, err = VerifyWebhook(v.Keys.Secret, []byte(inputString(v, "body")),
			headers["x-webhook-signature"], headers["x-webhook-timestamp"], &WebhookOptions{Now: moment})
	case "release_manifest":
		artifact, decodeErr := base64.StdEncoding.DecodeString(inputString(v, "artifact"))
		if decodeErr != nil {
			err = decodeErr
			break
		}
		var manifest *ReleaseManifest
		manifest, err = VerifyArtifact(context.Background(), bytes.NewReader(artifact), inputString(v, "manifest"),
			ArtifactOptions{AppID: v.Context.AppID, KeySet: &keys, Version: v.Context.Version, Filename: v.Context.Filename})
		if err == nil {
			claims = manifest.Claims
		}
	default:
		err = fmt.Errorf("unknown kind %q", v.Kind)
	}
	if err != nil {
		result.code = CodeOf(err)
		if result.code == "" {
			result.code = "unexpected: " + err.Error()
		}
		return result
	}
	result.valid, result.claims = true, claims
	return result
}

// asJSON gives a value the shape encoding/json would decode it to, so DeepEqual compares JSON.
func asJSON(value any) any {
	data, _ := json.Marshal(value)
	var decoded any
	_ = json.Unmarshal(data, &decoded)
	return decoded
}

func disagreement(v vector, got outcome) string {
	if !v.Expect.Valid {
		if got.valid || got.code != v.Expect.Error {
			return fmt.Sprintf("expected %s, got %s", v.Expect.Error, orValid(got))
		}
	} else {
		if !got.valid {
			return "expected valid, got " + got.code
		}
		for claim, value := range v.Expect.Claims {
			if !reflect.DeepEqual(asJSON(got.claims[claim]), value) {
				return fmt.Sprintf("claim %s: expected %v, got %v", claim, value, got.claims[claim])
			}
		}
		if v.Expect.Revocations != nil && !reflect.DeepEqual(asJSON(got.revocations), v.Expect.Revocations) {
			return fmt.Sprintf("revocations: expected %v, got %v", v.Expect.Revocations, asJSON(got.revocations))
		}
	}
	if v.Expect.Clock != nil && !reflect.DeepEqual(asJSON(got.clock), v.Expect.Clock) {
		return fmt.Sprintf("clock: expected %v, got %v", v.Expect.Clock, asJSON(got.clock))
	}
	return ""
}

func orValid(got outcome) string {
	if got.valid {
		return "valid"
	}
	return got.code
}

func TestEveryConformanceVectorGetsItsVerdict(t *testing.T) {
	folder := vectorDir()
	if folder == "" {
		t.Skip("no vectors: set CONFORMANCE_VECTORS or run packages/conformance/src/generate.ts")
	}
	vectors := loadVectors(t, folder)
	if len(vectors) == 0 {
		t.Fatal("no vectors in " + folder)
	}
	var wrong []string
	for _, v := range vectors {
		if problem := disagreement(v, outcomeOf(v)); problem != "" {
			wrong = append(wrong, v.Name+": "+problem)
		}
	}
	// The TypeScript test reads this line.
	fmt.Fprintf(os.Stderr, "conformance: %d vectors, %d wrong\n", len(vectors), len(wrong))
	if len(wrong) > 0 {
		t.Errorf("%d verdicts differ:\n%s", len(wrong), strings.Join(wrong, "\n"))
	}
}
