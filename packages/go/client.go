package licensing

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client makes the online calls client software makes: verify, validate-hardware, seat
// checkout and checkin, usage consume, the revocation list and the key set. Every non-2xx
// answer is an *Error (KindAPI) read from the service's error body {"error": {code, message,
// details, requestId}}; no answer at all is Status 0, code network_error. Safe for concurrent use.
type Client struct {
	base          string
	http          *http.Client
	retries       int
	retryDelay    time.Duration
	maxRetryDelay time.Duration
	appVersion    string
}

// ClientOption changes a Client's defaults.
type ClientOption func(*Client)

// WithHTTPClient sends through your *http.Client (proxy, TLS settings, timeout).
func WithHTTPClient(client *http.Client) ClientOption { return func(c *Client) { c.http = client } }

// WithRetries sets the retries after the first attempt (default 2; 0 turns retrying off).
func WithRetries(retries int) ClientOption { return func(c *Client) { c.retries = retries } }

// WithRetryDelay sets the first backoff step (default 500 ms; each retry doubles it, with
// jitter) and the longest wait (default 20 s; a Retry-After longer than it is not waited for).
func WithRetryDelay(first, longest time.Duration) ClientOption {
	return func(c *Client) { c.retryDelay, c.maxRetryDelay = first, longest }
}

// WithAppVersion sends your software's version (2.4.1: 1 to 64 visible ASCII characters) as
// X-App-Version with every call, so the seller sees in the license's timeline which version
// called. NewClient refuses a version outside that shape.
func WithAppVersion(version string) ClientOption {
	return func(c *Client) { c.appVersion = version }
}

// NewClient answers a client of the service at baseURL, e.g. https://api.example.com (a
// trailing /v1 is accepted).
func NewClient(baseURL string, options ...ClientOption) (*Client, error) {
	parsed, err := url.Parse(baseURL)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return nil, errors.New("licensing: baseURL: must be the service address, e.g. https://api.example.com")
	}
	base := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1") + "/v1"
	client := &Client{
		base:          base,
		http:          &http.Client{Timeout: 30 * time.Second},
		retries:       2,
		retryDelay:    500 * time.Millisecond,
		maxRetryDelay: 20 * time.Second,
	}
	for _, option := range options {
		option(client)
	}
	if client.appVersion != "" && !visibleASCII(client.appVersion, 64) {
		return nil, errors.New("licensing: appVersion: must be 1 to 64 visible ASCII characters, e.g. 2.4.1")
	}
	return client, nil
}

// JWKSURL is the key set address, for TokenVerifierOptions.JWKSURL.
func (c *Client) JWKSURL() string { return c.base + "/licenses/jwks" }

// LicenseRequest is what verify, validate-hardware and checkout send.
type LicenseRequest struct {
	Key   string `json:"key"`
	AppID string `json:"appId"`
	// HWUID: the device id (MachineFingerprint); required except for Verify.
	HWUID string `json:"hwuid,omitempty"`
	// CheckIn false asks without counting as the license's online check-in (default: it counts).
	CheckIn *bool `json:"checkIn,omitempty"`
	// Name and Platform label the device in the seller's and buyer's lists.
	Name     string `json:"name,omitempty"`
	Platform string `json:"platform,omitempty"`
}

// Verification is the answer of verify, validate-hardware and checkout. A refusal is an answer
// too: Valid false with Code (license_expired, device_limit_reached, no_seat_available…).
type Verification struct {
	Valid                 bool     `json:"valid"`
	Code                  string   `json:"code,omitempty"`
	AppID                 *string  `json:"appId"`
	Status                string   `json:"status"`
	ExpiresAt             *string  `json:"expiresAt"`
	Email                 *string  `json:"email"`
	VerificationType      *string  `json:"verificationType"`
	HWBound               bool     `json:"hw_bound"`
	LicenseToken          string   `json:"license_token,omitempty"`
	LicenseTokenExpiresAt string   `json:"license_token_expires_at,omitempty"`
	LicenseJWKSURI        string   `json:"license_jwks_uri,omitempty"`
	Features              []string `json:"features,omitempty"`
	// LeaseExpiresAt: floating licenses: when this device's seat lapses without a heartbeat.
	LeaseExpiresAt string `json:"lease_expires_at,omitempty"`
	// Expired: past its expiry under the maintain_access strategy: valid, status EXPIRED.
	Expired       bool   `json:"expired,omitempty"`
	CheckInBy     string `json:"check_in_by,omitempty"`
	UsesRemaining *int64 `json:"uses_remaining,omitempty"`
}

// Verify is POST /licenses/verify: whether the key is good for this app (and device, with
// HWUID), with a signed license token to check offline afterwards.
func (c *Client) Verify(ctx context.Context, request LicenseRequest) (*Verification, error) {
	return c.checkingIn(ctx, "/licenses/verify", request)
}

// ValidateHardware is POST /licenses/validate-hardware: whether this device may use the license.
func (c *Client) ValidateHardware(ctx context.Context, request LicenseRequest) (*Verification, error) {
	return c.checkingIn(ctx, "/licenses/validate-hardware", request)
}

// Checkout is POST /licenses/checkout: takes a seat on a floating license, or renews the one
// this device holds (the heartbeat). Client.Seat keeps one renewed in the background.
func (c *Client) Checkout(ctx context.Context, request LicenseRequest) (*Verification, error) {
	return c.checkingIn(ctx, "/licenses/checkout", request)
}

// SeatCheckin is the answer of Checkin: whether a live seat was given back, and why not.
type SeatCheckin struct {
	Released bool   `json:"released"`
	Code     string `json:"code,omitempty"`
}

// Checkin is POST /licenses/checkin: gives the seat back (a repeated checkin answers Released
// false, seat_not_held).
func (c *Client) Checkin(ctx context.Context, key, hwuid, appID string) (*SeatCheckin, error) {
	var answer SeatCheckin
	body := map[string]string{"key": key, "hwuid": hwuid, "appId": appID}
	return &answer, c.send(ctx, http.MethodPost, "/licenses/checkin", body, "", &answer)
}

// UsageRequest consumes Amount uses of a license's quota.
type UsageRequest struct {
	Key    string `json:"key"`
	AppID  string `json:"appId"`
	HWUID  string `json:"hwuid,omitempty"`
	Amount int64  `json:"amount"`
	// IdempotencyKey: yours, to repeat the consume later and have it count once; "" makes one
	// per call (its retries share it).
	IdempotencyKey string `json:"-"`
}

// UsageResult is what a consume did and the count after it; Consumed false leaves the count as
// it was, with Code (usage_exhausted, no_usage_quota, license_expired…).
type UsageResult struct {
	Consumed      bool    `json:"consumed"`
	Code          string  `json:"code,omitempty"`
	Uses          *int64  `json:"uses"`
	MaxUses       *int64  `json:"max_uses"`
	UsesRemaining *int64  `json:"uses_remaining"`
	ResetsAt      *string `json:"resets_at"`
}

// ConsumeUsage is POST /licenses/usage: consumes Amount uses, all or none. Sent with an
// Idempotency-Key, so a retried consume counts once.
func (c *Client) ConsumeUsage(ctx context.Context, request UsageRequest) (*UsageResult, error) {
	key := request.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	} else if len(key) > 255 {
		return nil, errors.New("licensing: IdempotencyKey: must be 1 to 255 characters")
	}
	var answer UsageResult
	return &answer, c.send(ctx, http.MethodPost, "/licenses/usage", request, key, &answer)
}

// RevocationList is GET /licenses/revocations: give RevocationList to CheckRevocations.
type RevocationList struct {
	AppID          string `json:"appId"`
	Version        int64  `json:"version"`
	Count          int64  `json:"count"`
	RevocationList string `json:"revocationList"`
	IssuedAt       string `json:"issuedAt"`
	ExpiresAt      string `json:"expiresAt"`
}

// Revocations fetches the app's signed revocation list; fetch it whenever the machine is online.
func (c *Client) Revocations(ctx context.Context, appID string) (*RevocationList, error) {
	var answer RevocationList
	path := "/licenses/revocations?appId=" + url.QueryEscape(appID)
	return &answer, c.send(ctx, http.MethodGet, path, nil, "", &answer)
}

// FetchKeySet fetches the key set once, to store for offline checks.
func (c *Client) FetchKeySet(ctx context.Context) (KeySet, error) {
	return FetchKeySet(ctx, c.http, c.JWKSURL())
}

// checkingIn: a license past its check-in deadline answers check_in_overdue once and records
// the check-in; asked again, it answers as the license now stands.
func (c *Client) checkingIn(ctx context.Context, path string, request LicenseRequest) (*Verification, error) {
	if request.Key == "" || request.AppID == "" {
		return nil, errors.New("licensing: Key and AppID: both are required")
	}
	var answer Verification
	if err := c.send(ctx, http.MethodPost, path, request, "", &answer); err != nil {
		return nil, err
	}
	if answer.Code != "check_in_overdue" || (request.CheckIn != nil && !*request.CheckIn) {
		return &answer, nil
	}
	answer = Verification{}
	return &answer, c.send(ctx, http.MethodPost, path, request, "", &answer)
}

type errorBody struct {
	Error *struct {
		Code      string        `json:"code"`
		Message   string        `json:"message"`
		RequestID string        `json:"requestId"`
		Details   []ErrorDetail `json:"details"`
	} `json:"error"`
}

// send makes one logical call with retries. Every call here is repeatable, or carries an
// Idempotency-Key, so a lost answer is asked for again; 429 and 503 (refused before any work),
// 502 and 504, and 409 idempotency_key_in_use (the first attempt still running) are retried,
// waiting as Retry-After says.
func (c *Client) send(ctx context.Context, method, path string, body any, idempotencyKey string, answer any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 1; ; attempt++ {
		request, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(payload))
		if err != nil {
			return err
		}
		request.Header.Set("Accept", "application/json")
		if body != nil {
			request.Header.Set("Content-Type", "application/json")
		}
		if idempotencyKey != "" {
			request.Header.Set("Idempotency-Key", idempotencyKey)
		}
		if c.appVersion != "" {
			request.Header.Set("X-App-Version", c.appVersion)
		}
		response, err := c.http.Do(request)
		if err != nil {
			if ctx.Err() == nil && attempt <= c.retries {
				if c.sleep(ctx, c.backoff(attempt)) == nil {
					continue
				}
			}
			return &Error{
				Kind:    KindAPI,
				Code:    "network_error",
				Message: fmt.Sprintf("No answer from %s after %d attempt(s): %v", c.base, attempt, err),
				Err:     err,
			}
		}
		text, err := io.ReadAll(io.LimitReader(response.Body, 10<<20))
		response.Body.Close()
		if err != nil {
			return &Error{Kind: KindAPI, Code: "network_error", Message: "The answer was cut off: " + err.Error(), Err: err}
		}
		if response.StatusCode >= 200 && response.StatusCode <= 299 {
			// No content (an update check with nothing newer): the answer stays as it was.
			if response.StatusCode == http.StatusNoContent && len(text) == 0 {
				return nil
			}
			if json.Unmarshal(text, answer) != nil {
				return unexpectedAnswer(response.StatusCode, text)
			}
			return nil
		}
		var refused errorBody
		parsed := json.Unmarshal(text, &refused) == nil && refused.Error != nil
		code := ""
		if parsed {
			code = refused.Error.Code
		}
		if wait, again := c.retryWait(response, code, idempotencyKey != "", attempt); again {
			if c.sleep(ctx, wait) == nil {
				continue
			}
		}
		if !parsed {
			return unexpectedAnswer(response.StatusCode, text)
		}
		if code == "" {
			code = "http_error"
		}
		message := refused.Error.Message
		if message == "" {
			message = http.StatusText(response.StatusCode)
		}
		return &Error{
			Kind:      KindAPI,
			Code:      code,
			Message:   message,
			Status:    response.StatusCode,
			RequestID: refused.Error.RequestID,
			Details:   refused.Error.Details,
		}
	}
}

func (c *Client) retryWait(response *http.Response, code string, keyed bool, attempt int) (time.Duration, bool) {
	if attempt > c.retries {
		return 0, false
	}
	status := response.StatusCode
	refusedBeforeWork := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
	keyInUse := status == http.StatusConflict && code == "idempotency_key_in_use" && keyed
	gateway := status == http.StatusBadGateway || status == http.StatusGatewayTimeout
	if !refusedBeforeWork && !keyInUse && !gateway {
		return 0, false
	}
	after, given := retryAfter(response.Header.Get("Retry-After"))
	if !given {
		return c.backoff(attempt), true
	}
	return after, after <= c.maxRetryDelay
}

// backoff: 0.5 to 1 times the first step doubled per attempt, capped.
func (c *Client) backoff(attempt int) time.Duration {
	step := math.Min(float64(c.maxRetryDelay), float64(c.retryDelay)*math.Pow(2, float64(attempt-1)))
	return time.Duration(step * (0.5 + mathrand.Float64()/2))
}

func (c *Client) sleep(ctx context.Context, wait time.Duration) error {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// retryAfter reads Retry-After as delay-seconds or an HTTP date.
func retryAfter(header string) (time.Duration, bool) {
	value := strings.TrimSpace(header)
	if value == "" {
		return 0, false
	}
	if seconds, err := strconv.ParseUint(value, 10, 32); err == nil {
		return time.Duration(seconds) * time.Second, true
	}
	if date, err := http.ParseTime(value); err == nil {
		wait := time.Until(date)
		if wait < 0 {
			wait = 0
		}
		return wait, true
	}
	return 0, false
}

func unexpectedAnswer(status int, text []byte) *Error {
	// Not the service's answer (a proxy's error page, say): reported as such.
	if len(text) > 200 {
		text = text[:200]
	}
	return &Error{Kind: KindAPI, Code: "unexpected_response", Status: status, Message: fmt.Sprintf("HTTP %d: %s", status, text)}
}

// newIdempotencyKey: a random UUID (version 4), the shape the other SDKs send.
func newIdempotencyKey() string {
	random := make([]byte, 16)
	_, _ = rand.Read(random)
	random[6] = random[6]&0x0f | 0x40
	random[8] = random[8]&0x3f | 0x80
	text := hex.EncodeToString(random)
	return text[:8] + "-" + text[8:12] + "-" + text[12:16] + "-" + text[16:20] + "-" + text[20:]
}

// visibleASCII says whether text is 1 to most characters from ! to ~.
func visibleASCII(text string, most int) bool {
	if len(text) == 0 || len(text) > most {
		return false
	}
	for i := 0; i < len(text); i++ {
		if text[i] < 0x21 || text[i] > 0x7e {
			return false
		}
	}
	return true
}
