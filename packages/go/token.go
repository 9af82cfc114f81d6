package licensing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// TokenUse is the token_use of license tokens (and of seat tokens, which are license tokens).
const TokenUse = "service_license_v1"

// TokenVerifierOptions configure a TokenVerifier. AppID and one of JWKSURL or KeySet are required.
type TokenVerifierOptions struct {
	// AppID: your app id; a token for any other app is refused (wrong_audience).
	AppID string
	// JWKSURL: the key set address (Client.JWKSURL()), fetched when needed and cached.
	JWKSURL string
	// KeySet: a stored key set, so checks work with no network. With JWKSURL as well, the stored
	// set is used first and fetched again only for a kid it does not know (a rotated key).
	KeySet *KeySet
	// OnKeySet is called with each key set fetched, to store it for offline use.
	OnKeySet func(KeySet)
	// Issuer, when set, must be the token's iss.
	Issuer string
	// Leeway for exp and nbf; default 30 s.
	Leeway time.Duration
	// CacheFor: how long a fetched key set is used before it is fetched again; default 5 min.
	CacheFor time.Duration
	// RefetchCooldown: the least time between two fetches; default 10 s.
	RefetchCooldown time.Duration
	// Now: the current time (tests); default time.Now.
	Now func() time.Time
	// Clock: the clock-rollback guard a token newer than any checked before resets.
	Clock Store[ClockState]
	// HTTPClient for fetching the key set; default one with a 10 s timeout.
	HTTPClient *http.Client
}

// TokenVerifier checks license tokens (and seat tokens) offline, by the same rules as the
// TypeScript and Python SDKs: RS256 or EdDSA, each only with a key of its own kind, chosen by
// kid among the keys not reserved for offline use; aud, token_use and times checked with 30 s
// of leeway. Safe for concurrent use.
type TokenVerifier struct {
	opts      TokenVerifierOptions
	stored    bool
	mu        sync.Mutex
	keySet    *KeySet
	fetchedAt time.Time
	lastTry   time.Time
}

// NewTokenVerifier checks the options and answers a verifier.
func NewTokenVerifier(opts TokenVerifierOptions) (*TokenVerifier, error) {
	if opts.AppID == "" {
		return nil, errors.New("licensing: AppID: must be your app id (tokens for other apps are refused)")
	}
	if opts.JWKSURL == "" && opts.KeySet == nil {
		return nil, errors.New("licensing: JWKSURL or KeySet: give the key set address, a stored key set, or both")
	}
	if opts.Leeway == 0 {
		opts.Leeway = 30 * time.Second
	}
	if opts.CacheFor == 0 {
		opts.CacheFor = 5 * time.Minute
	}
	if opts.RefetchCooldown == 0 {
		opts.RefetchCooldown = 10 * time.Second
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	verifier := &TokenVerifier{opts: opts, stored: opts.KeySet != nil}
	if opts.KeySet != nil {
		held := *opts.KeySet
		verifier.keySet = &held
	}
	return verifier, nil
}

// KeySet answers the key set in use (nil before the first fetch).
func (v *TokenVerifier) KeySet() *KeySet {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.keySet
}

// Refresh fetches the key set from JWKSURL now and uses it from then on.
func (v *TokenVerifier) Refresh(ctx context.Context) (KeySet, error) {
	if v.opts.JWKSURL == "" {
		return KeySet{}, tokenError("key_set_unavailable", "No JWKSURL: this verifier works offline only")
	}
	v.mu.Lock()
	v.lastTry = time.Now()
	v.mu.Unlock()
	set, err := FetchKeySet(ctx, v.opts.HTTPClient, v.opts.JWKSURL)
	if err != nil {
		return KeySet{}, err
	}
	v.mu.Lock()
	v.keySet = &set
	v.fetchedAt = time.Now()
	v.mu.Unlock()
	if v.opts.OnKeySet != nil {
		v.opts.OnKeySet(set)
	}
	return set, nil
}

// Verify answers the token's claims, or an *Error (KindToken) with the reason.
func (v *TokenVerifier) Verify(ctx context.Context, token string) (map[string]any, error) {
	if token == "" {
		return nil, tokenError("invalid_token", "The license token is missing (expected a JWT string)")
	}
	payload, err := v.verifiedPayload(ctx, token)
	if err != nil {
		return nil, err
	}
	claims, err := v.checkedClaims(payload)
	if err != nil {
		return nil, err
	}
	if claims["token_use"] != TokenUse {
		return nil, tokenError("wrong_token_use", "Not a license token (token_use)")
	}
	if iat, ok := number(claims["iat"]); ok && v.opts.Clock != nil {
		leeway := v.opts.Leeway.Milliseconds()
		if err := vouchForClock(v.opts.Clock, int64(iat*1000), nowMs(v.opts.Now), leeway); err != nil {
			return nil, err
		}
	}
	return claims, nil
}

func (v *TokenVerifier) verifiedPayload(ctx context.Context, token string) (map[string]any, error) {
	online := v.opts.JWKSURL != ""
	v.mu.Lock()
	missing := v.keySet == nil
	stale := time.Since(v.fetchedAt) > v.opts.CacheFor
	v.mu.Unlock()
	if online && (missing || (stale && !v.stored && v.cooled())) {
		if _, err := v.Refresh(ctx); err != nil && v.KeySet() == nil {
			return nil, err
		}
	}
	payload, err := verifyCompact(token, v.tokenKeys())
	var refused *jwsError
	if errors.As(err, &refused) && refused.reason == jwsNoKey && online && v.cooled() {
		if _, err := v.Refresh(ctx); err != nil {
			return nil, err
		}
		payload, err = verifyCompact(token, v.tokenKeys())
	}
	if errors.As(err, &refused) {
		if refused.reason == jwsNoKey || refused.reason == jwsBadSignature {
			return nil, tokenError("invalid_signature", "The license token is not signed by a published key")
		}
		return nil, tokenError("invalid_token", "The license token is not valid: "+refused.message)
	}
	return payload, err
}

func (v *TokenVerifier) checkedClaims(claims map[string]any) (map[string]any, error) {
	// The same order as the other SDKs, so a token missing several claims gets the same code.
	presence := []string{"sub", "exp", "iat", "jti", "aud"}
	if v.opts.Issuer != "" {
		presence = append(presence, "iss")
	}
	for i := len(presence) - 1; i >= 0; i-- {
		if _, ok := claims[presence[i]]; !ok {
			code := "invalid_token"
			if presence[i] == "aud" {
				code = "wrong_audience"
			}
			return nil, tokenError(code, fmt.Sprintf(`The license token is not valid: missing required %q claim`, presence[i]))
		}
	}
	if v.opts.Issuer != "" && claims["iss"] != v.opts.Issuer {
		return nil, tokenError("invalid_token", `The license token is not valid: unexpected "iss" claim value`)
	}
	if !audienceIncludes(claims["aud"], v.opts.AppID) {
		return nil, tokenError("wrong_audience", "The license token was issued for another app")
	}
	now := math.Floor(float64(nowMs(v.opts.Now)) / 1000)
	for _, claim := range []string{"iat", "nbf", "exp"} {
		if value, present := claims[claim]; present {
			if _, ok := number(value); !ok {
				return nil, tokenError("invalid_token", fmt.Sprintf("The license token is not valid: %q claim must be a number", claim))
			}
		}
	}
	leeway := v.opts.Leeway.Seconds()
	if nbf, ok := number(claims["nbf"]); ok && nbf > now+leeway {
		return nil, tokenError("invalid_token", "The license token is not valid yet (nbf)")
	}
	if exp, ok := number(claims["exp"]); ok && exp <= now-leeway {
		return nil, tokenError("token_expired", "The license token has expired")
	}
	return claims, nil
}

func audienceIncludes(aud any, appID string) bool {
	if aud == appID {
		return true
	}
	list, isList := aud.([]any)
	return isList && containsValue(list, appID)
}

// tokenKeys: the offline key signs license files and revocation lists, never a license token.
func (v *TokenVerifier) tokenKeys() []map[string]any {
	set := v.KeySet()
	if set == nil {
		return nil
	}
	keys := make([]map[string]any, 0, len(set.Keys))
	for _, key := range set.Keys {
		if key["purpose"] != "offline" {
			keys = append(keys, key)
		}
	}
	return keys
}

func (v *TokenVerifier) cooled() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return time.Since(v.lastTry) >= v.opts.RefetchCooldown
}

// FetchKeySet fetches a key set once (GET jwksURL), to store and give a verifier later. An
// answer that is not a key set is an *Error key_set_unavailable. client nil: http.DefaultClient.
func FetchKeySet(ctx context.Context, client *http.Client, jwksURL string) (KeySet, error) {
	if client == nil {
		client = http.DefaultClient
	}
	unavailable := func(err error) (KeySet, error) {
		return KeySet{}, &Error{
			Kind:    KindToken,
			Code:    "key_set_unavailable",
			Message: fmt.Sprintf("The key set could not be fetched from %s: %v", jwksURL, err),
			Err:     err,
		}
	}
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, jwksURL, nil)
	if err != nil {
		return unavailable(err)
	}
	request.Header.Set("Accept", "application/json")
	response, err := client.Do(request)
	if err != nil {
		return unavailable(err)
	}
	defer response.Body.Close()
	body, err := io.ReadAll(io.LimitReader(response.Body, 1<<20))
	if err != nil {
		return unavailable(err)
	}
	if response.StatusCode < 200 || response.StatusCode > 299 {
		return unavailable(errors.New("HTTP " + strconv.Itoa(response.StatusCode)))
	}
	set, err := ParseKeySet(body)
	if err != nil {
		return unavailable(err)
	}
	return set, nil
}
