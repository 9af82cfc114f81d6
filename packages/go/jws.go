package licensing

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"unicode/utf8"
)

// Compact JWS checks against a JSON Web Key Set, as the service signs: RS256 with an RSA key,
// EdDSA with an Ed25519 key. The key set decides the algorithm, never the token: a key answers
// only a header whose alg is the key's own kind and whose kid is its own.

const minRSABits = 2048

var keyTypeOf = map[string]string{"RS256": "RSA", "EdDSA": "OKP"}

// Why a JWS was not accepted; each caller maps these to its own codes.
const (
	jwsMalformed     = "malformed"       // not a compact JWS, or a part does not decode
	jwsAlgNotAllowed = "alg_not_allowed" // a header alg other than RS256 and EdDSA
	jwsNoKey         = "no_key"          // no key of the set has this kid, kind and alg
	jwsBadSignature  = "bad_signature"   // a key matched, the signature did not
)

type jwsError struct {
	reason  string
	message string
}

func (e *jwsError) Error() string { return e.message }

// KeySet is a JSON Web Key Set as GET /licenses/jwks answers it. Each key stays the JSON object
// the service sent, so a stored set written back with encoding/json keeps every member.
type KeySet struct {
	Keys []map[string]any `json:"keys"`
}

// UnmarshalJSON reads {"keys": [...]}, keeping the entries that are objects (as the other SDKs
// do) and refusing a document without a keys array.
func (s *KeySet) UnmarshalJSON(data []byte) error {
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	if doc.Keys == nil {
		return errors.New(`not a key set ({"keys": [...]})`)
	}
	s.Keys = make([]map[string]any, 0, len(*doc.Keys))
	for _, raw := range *doc.Keys {
		var key map[string]any
		if json.Unmarshal(raw, &key) == nil && key != nil {
			s.Keys = append(s.Keys, key)
		}
	}
	return nil
}

// ParseKeySet reads a key set stored as JSON (the body of GET /licenses/jwks).
func ParseKeySet(data []byte) (KeySet, error) {
	var set KeySet
	err := json.Unmarshal(data, &set)
	return set, err
}

func b64urlDecode(part string) ([]byte, error) {
	// encoding/base64 skips \r and \n; a JWS part holds neither, so anything outside the
	// alphabet is refused first.
	for i := 0; i < len(part); i++ {
		c := part[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, errors.New("not base64url")
		}
	}
	return base64.RawURLEncoding.DecodeString(part)
}

func decodeJSONPart(part string) (any, error) {
	raw, err := b64urlDecode(part)
	if err != nil {
		return nil, err
	}
	return decodeJSON(raw)
}

func decodeJSON(raw []byte) (any, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("not UTF-8")
	}
	var value any
	decoder := json.NewDecoder(bytes.NewReader(raw))
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	if decoder.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return value, nil
}

// verifyCompact checks the signature of a compact JWS and answers its payload.
func verifyCompact(jws string, keys []map[string]any) (map[string]any, error) {
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		return nil, &jwsError{jwsMalformed, "Invalid Compact JWS"}
	}
	header, err := decodeJSONPart(parts[0])
	headerObject, isObject := header.(map[string]any)
	if err != nil || !isObject {
		return nil, &jwsError{jwsMalformed, "JWS Protected Header is invalid"}
	}
	alg, _ := headerObject["alg"].(string)
	if alg == "" {
		return nil, &jwsError{jwsMalformed, `JWS "alg" (Algorithm) Header Parameter missing or invalid`}
	}
	if _, allowed := keyTypeOf[alg]; !allowed {
		return nil, &jwsError{jwsAlgNotAllowed, `"alg" (Algorithm) Header Parameter value not allowed`}
	}
	kid, hasKid := headerObject["kid"]
	var candidates []map[string]any
	for _, key := range keys {
		if usable(key, alg, kid, hasKid) {
			candidates = append(candidates, key)
		}
	}
	if len(candidates) == 0 {
		return nil, &jwsError{jwsNoKey, "no applicable key found in the JSON Web Key Set"}
	}
	signature, err := b64urlDecode(parts[2])
	if err != nil {
		return nil, &jwsError{jwsMalformed, "the signature is not base64url"}
	}
	signingInput := []byte(parts[0] + "." + parts[1])
	verified := false
	for _, key := range candidates {
		if verifies(key, alg, signature, signingInput) {
			verified = true
			break
		}
	}
	if !verified {
		return nil, &jwsError{jwsBadSignature, "signature verification failed"}
	}
	payload, err := decodeJSONPart(parts[1])
	if err != nil {
		return nil, &jwsError{jwsMalformed, "the payload is not JSON"}
	}
	claims, isObject := payload.(map[string]any)
	if !isObject {
		return nil, &jwsError{jwsMalformed, "the payload is not a JSON object"}
	}
	return claims, nil
}

func usable(key map[string]any, alg string, kid any, hasKid bool) bool {
	if key["kty"] != keyTypeOf[alg] {
		return false
	}
	if hasKid {
		wanted, isString := kid.(string)
		if !isString || key["kid"] != wanted {
			return false
		}
	}
	if keyAlg, ok := key["alg"]; ok && keyAlg != alg {
		return false
	}
	if use, ok := key["use"]; ok && use != "sig" {
		return false
	}
	if ops, ok := key["key_ops"]; ok && ops != nil {
		list, isList := ops.([]any)
		if !isList || !containsValue(list, "verify") {
			return false
		}
	}
	return alg != "EdDSA" || key["crv"] == "Ed25519"
}

func verifies(key map[string]any, alg string, signature, signingInput []byte) bool {
	if alg == "RS256" {
		n, errN := keyBytes(key, "n")
		e, errE := keyBytes(key, "e")
		if errN != nil || errE != nil || len(e) == 0 || len(e) > 8 {
			return false
		}
		modulus := new(big.Int).SetBytes(n)
		exponent := new(big.Int).SetBytes(e)
		if modulus.BitLen() < minRSABits || !exponent.IsInt64() || exponent.Int64() > 1<<31-1 {
			return false
		}
		public := &rsa.PublicKey{N: modulus, E: int(exponent.Int64())}
		digest := sha256.Sum256(signingInput)
		return rsa.VerifyPKCS1v15(public, crypto.SHA256, digest[:], signature) == nil
	}
	x, err := keyBytes(key, "x")
	if err != nil || len(x) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.Verify(ed25519.PublicKey(x), signingInput, signature)
}

func keyBytes(key map[string]any, member string) ([]byte, error) {
	text, isString := key[member].(string)
	if !isString {
		return nil, errors.New("missing " + member)
	}
	return b64urlDecode(text)
}

func containsValue(list []any, wanted string) bool {
	for _, item := range list {
		if item == wanted {
			return true
		}
	}
	return false
}

// number answers a JSON number's value (JSON's true and false are no numbers).
func number(value any) (float64, bool) {
	n, ok := value.(float64)
	return n, ok
}
