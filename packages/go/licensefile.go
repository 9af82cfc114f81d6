package licensing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Air-gapped activation, by the rules of the TypeScript SDK's license-file.ts: write an
// activation request, check the license file that answers it (plain or encrypted), and keep the
// revocations learnt whenever the machine is online. Everything here runs offline.

const (
	// LicenseFileUse is the token_use of license files.
	LicenseFileUse = "service_license_file_v1"
	// RevocationListUse is the token_use of revocation lists.
	RevocationListUse = "service_revocation_list_v1"
)

var (
	fileKeySalt     = []byte("licensing-service/license-file")
	fileKeyInfo     = []byte("A256GCM key v1")
	canonicalKeyRE  = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{30}$`)
	defaultFileSkew = 300 * time.Second
)

// CanonicalLicenseKey answers the canonical form of a license key as a person typed it
// (any case, with or without dashes and spaces, O for 0, I and L for 1), as the service reads it;
// ok is false when it cannot be a license key.
func CanonicalLicenseKey(typed string) (canonical string, ok bool) {
	compact := strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r) || r == '-':
			return -1
		case r == 'O':
			return '0'
		case r == 'I' || r == 'L':
			return '1'
		}
		return r
	}, strings.ToUpper(typed))
	if !canonicalKeyRE.MatchString(compact) {
		return "", false
	}
	groups := make([]string, 0, 6)
	for i := 0; i < 30; i += 5 {
		groups = append(groups, compact[i:i+5])
	}
	return strings.Join(groups, "-"), true
}

// OfflineActivationRequest makes the request a person carries to POST
// /licenses/offline-activations (or the seller's portal) from a machine with no network. Keep
// the nonce: the file that answers must carry it (LicenseFileOptions.Nonce). appID may be "".
func OfflineActivationRequest(key, hwuid, appID string, now time.Time) (request, nonce string, err error) {
	if _, ok := CanonicalLicenseKey(key); !ok {
		return "", "", errors.New("licensing: key: must be a license key")
	}
	if strings.TrimSpace(hwuid) == "" || utf8.RuneCountInString(hwuid) > 200 {
		return "", "", errors.New("licensing: hwuid: must be 1 to 200 characters, not blank")
	}
	random := make([]byte, 16)
	if _, err := rand.Read(random); err != nil {
		return "", "", err
	}
	nonce = base64.RawURLEncoding.EncodeToString(random)
	if now.IsZero() {
		now = time.Now()
	}
	// Fields in the order the other SDKs write them.
	type activationRequest struct {
		V         int    `json:"v"`
		Key       string `json:"key"`
		HWUID     string `json:"hwuid"`
		Nonce     string `json:"nonce"`
		AppID     string `json:"appId,omitempty"`
		CreatedAt string `json:"createdAt"`
	}
	body, err := json.Marshal(activationRequest{1, key, hwuid, nonce, appID, now.UTC().Format("2006-01-02T15:04:05.000Z")})
	if err != nil {
		return "", "", err
	}
	return base64.RawURLEncoding.EncodeToString(body), nonce, nil
}

// LicenseFileOptions say what a license file must match. KeySet, AppID and HWUID are required.
type LicenseFileOptions struct {
	KeySet KeySet
	AppID  string
	// HWUID: this machine's device id (MachineFingerprint).
	HWUID string
	// LicenseKey: the license key as typed, to open an encrypted file.
	LicenseKey string
	// Nonce: the activation request's nonce; "" compares none.
	Nonce  string
	Issuer string
	// Clock: the clock-rollback guard, kept between runs.
	Clock Store[ClockState]
	// Revocations: the revocations in force (CheckRevocations keeps them).
	Revocations Store[RevocationSnapshot]
	// Leeway for the times; default 300 s.
	Leeway time.Duration
	Now    func() time.Time
}

// VerifyLicenseFile checks a license file offline: opens it when encrypted (with LicenseKey),
// then the signature against KeySet, token_use, app, device, nonce, times, the clock-rollback
// guard and the revocations. Answers the claims, with "expired": true added when the license
// ended but the file still grants access; or an *Error (KindFile) with the reason.
func VerifyLicenseFile(file string, opts LicenseFileOptions) (map[string]any, error) {
	if opts.AppID == "" {
		return nil, errors.New("licensing: AppID: must be your app id")
	}
	if opts.HWUID == "" {
		return nil, errors.New("licensing: HWUID: must be this machine's device id")
	}
	text := strings.TrimSpace(file)
	if text == "" {
		return nil, fileError("invalid_file", "The license file is missing")
	}
	jws := text
	if strings.Count(text, ".") == 4 {
		opened, err := decryptLicenseFile(text, opts.LicenseKey)
		if err != nil {
			return nil, err
		}
		jws = opened
	}
	claims, err := verifySigned(jws, opts.KeySet.Keys)
	if err != nil {
		return nil, err
	}
	if claims["token_use"] != LicenseFileUse {
		return nil, fileError("wrong_token_use", "Not a license file (token_use)")
	}
	sub, subOK := claims["sub"].(string)
	hwuid, hwuidOK := claims["hwuid"].(string)
	iat, iatOK := number(claims["iat"])
	exp, expOK := number(claims["exp"])
	if !subOK || !hwuidOK || !iatOK || !expOK {
		return nil, fileError("invalid_file", "The license file lacks sub, hwuid, iat or exp")
	}
	if opts.Issuer != "" && claims["iss"] != opts.Issuer {
		return nil, fileError("invalid_file", "The license file was issued by another service")
	}
	if claims["aud"] != opts.AppID {
		return nil, fileError("wrong_app", "The license file was issued for another app")
	}
	if hwuid != opts.HWUID {
		return nil, fileError("wrong_device", "The license file was issued for another device")
	}
	if opts.Nonce != "" && claims["nonce"] != opts.Nonce {
		return nil, fileError("wrong_nonce", "The license file answers another activation request")
	}

	leeway := opts.Leeway
	if leeway == 0 {
		leeway = defaultFileSkew
	}
	tolerance := leeway.Milliseconds()
	moment := nowMs(opts.Now)
	held, err := loadClock(opts.Clock)
	if err != nil {
		return nil, err
	}
	issuedAt := int64(iat * 1000)
	reset := held != nil && held.VouchedAt != nil && issuedAt > *held.VouchedAt
	// A file is never issued in the future, and time never runs backwards: either means the
	// clock was set back, perhaps to stretch an expired file.
	rollback := ""
	if moment < issuedAt-tolerance {
		rollback = "The clock is earlier than the license file's issue time"
	} else if held != nil && !reset && moment < held.LastSeen-tolerance {
		rollback = "The clock is earlier than a time this machine has already seen"
	}
	if rollback != "" {
		// A guard kept before vouchedAt existed starts keeping it here.
		if opts.Clock != nil && (held == nil || held.VouchedAt == nil) {
			if err := rememberClock(opts.Clock, held, issuedAt, nil, false); err != nil {
				return nil, err
			}
		}
		return nil, fileError("clock_rollback", rollback)
	}
	ms := func(seconds float64) float64 { return seconds * 1000 }
	if nbf, ok := number(claims["nbf"]); ok && float64(moment) < ms(nbf)-float64(tolerance) {
		return nil, fileError("not_yet_valid", "The license file is not valid yet")
	}
	if float64(moment) > ms(exp)+float64(tolerance) {
		return nil, fileError("expired", "The license file has expired")
	}
	if checkInBy, ok := number(claims["check_in_by"]); ok && float64(moment) > ms(checkInBy)+float64(tolerance) {
		return nil, fileError("check_in_overdue", "The license must check in: a new activation request gets a new file")
	}
	if opts.Revocations != nil {
		snapshot, err := opts.Revocations.Load()
		if err != nil {
			return nil, &Error{Kind: KindFile, Code: "revocations_unavailable", Message: "The revocations in force could not be read", Err: err}
		}
		if snapshot != nil && snapshot.AppID == opts.AppID && containsString(snapshot.Revoked, sub) {
			return nil, fileError("revoked", "The license is revoked or suspended")
		}
	}
	if opts.Clock != nil {
		if err := rememberClock(opts.Clock, held, issuedAt, &moment, reset); err != nil {
			return nil, err
		}
	}
	if licenseExp, ok := number(claims["license_exp"]); ok && float64(moment) > ms(licenseExp) {
		claims["expired"] = true
	}
	return claims, nil
}

func verifySigned(jws string, keys []map[string]any) (map[string]any, error) {
	claims, err := verifyCompact(jws, keys)
	var refused *jwsError
	if errors.As(err, &refused) {
		if refused.reason == jwsMalformed {
			return nil, fileError("invalid_file", "Not a signed file: "+refused.message)
		}
		return nil, fileError("bad_signature", "Not signed by a key of the key set")
	}
	return claims, err
}

// decryptLicenseFile opens an encrypted file: JWE dir + A256GCM, the key HKDF-SHA256 over the
// canonical license key.
func decryptLicenseFile(jwe, licenseKey string) (string, error) {
	failed := fileError("decryption_failed", "The license file does not open with this license key")
	canonical, ok := CanonicalLicenseKey(licenseKey)
	if !ok {
		return "", fileError("decryption_failed", "The license file is encrypted: give LicenseKey")
	}
	parts := strings.Split(jwe, ".")
	header, err := decodeJSONPart(parts[0])
	fields, isObject := header.(map[string]any)
	if err != nil || !isObject || fields["alg"] != "dir" || fields["enc"] != "A256GCM" {
		return "", failed
	}
	if _, compressed := fields["zip"]; compressed || parts[1] != "" {
		return "", failed
	}
	iv, errIV := b64urlDecode(parts[2])
	ciphertext, errText := b64urlDecode(parts[3])
	tag, errTag := b64urlDecode(parts[4])
	if errIV != nil || errText != nil || errTag != nil || len(iv) != 12 || len(tag) != 16 {
		return "", failed
	}
	block, err := aes.NewCipher(hkdfSHA256([]byte(canonical), fileKeySalt, fileKeyInfo, 32))
	if err != nil {
		return "", failed
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return "", failed
	}
	plaintext, err := gcm.Open(nil, iv, append(ciphertext, tag...), []byte(parts[0]))
	if err != nil || !utf8.Valid(plaintext) {
		return "", failed
	}
	return string(plaintext), nil
}

// hkdfSHA256 is RFC 5869 HKDF with SHA-256. The standard library has it only from Go 1.24
// (crypto/hkdf) and this module keeps to Go 1.19 with no dependency, so it is written here:
// extract PRK = HMAC(salt, secret), then expand T(i) = HMAC(PRK, T(i-1) | info | i).
func hkdfSHA256(secret, salt, info []byte, length int) []byte {
	extract := hmac.New(sha256.New, salt)
	extract.Write(secret)
	prk := extract.Sum(nil)
	var okm, block []byte
	for counter := byte(1); len(okm) < length; counter++ {
		expand := hmac.New(sha256.New, prk)
		expand.Write(block)
		expand.Write(info)
		expand.Write([]byte{counter})
		block = expand.Sum(nil)
		okm = append(okm, block...)
	}
	return okm[:length]
}

func containsString(list []string, wanted string) bool {
	for _, item := range list {
		if item == wanted {
			return true
		}
	}
	return false
}
