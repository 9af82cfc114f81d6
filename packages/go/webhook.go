package licensing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WebhookOptions: Tolerance is how far X-Webhook-Timestamp may be from now (default 300 s);
// Now the current time (default time.Now()).
type WebhookOptions struct {
	Tolerance time.Duration
	Now       time.Time
}

// VerifyWebhook checks a delivery to your backend and answers its envelope {id, type, data,
// timestamp, signature}: X-Webhook-Signature is the HMAC-SHA256 of the raw body with the
// endpoint's secret (the "sha256=" prefix optional), compared in constant time, and
// X-Webhook-Timestamp must be within Tolerance of now, so an old delivery replayed is refused.
// Answer 401 when it returns an error, 2xx within 5 s when not, and process each id once.
// body must be the raw request body, not JSON parsed and written again.
func VerifyWebhook(secret string, body []byte, signature, timestamp string, opts *WebhookOptions) (map[string]any, error) {
	if secret == "" {
		return nil, errors.New("licensing: secret: must be the endpoint's webhook secret")
	}
	if opts == nil {
		opts = &WebhookOptions{}
	}
	if signature == "" || timestamp == "" || !allDigits(timestamp) {
		return nil, webhookError("malformed", "Missing or malformed signature headers")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	expected := hex.EncodeToString(mac.Sum(nil))
	given := strings.TrimPrefix(strings.TrimSpace(signature), "sha256=")
	if !hmac.Equal([]byte(expected), []byte(given)) {
		return nil, webhookError("bad_signature", "The signature does not match the body")
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	tolerance := opts.Tolerance
	if tolerance == 0 {
		tolerance = 300 * time.Second
	}
	sent, err := strconv.ParseInt(timestamp, 10, 64)
	age := math.Abs(float64(now.Unix()) - float64(sent))
	if err != nil || age > tolerance.Seconds() {
		return nil, webhookError("stale_timestamp", "The delivery is too old (or from the future)")
	}
	envelope, err := decodeJSON(body)
	object, isObject := envelope.(map[string]any)
	if err != nil || !isObject {
		return nil, webhookError("malformed", "The body is not a JSON object")
	}
	return object, nil
}

// VerifyWebhookRequest is VerifyWebhook with the headers of an *http.Request; read the body
// first (io.ReadAll(r.Body)) and give it here as it came.
func VerifyWebhookRequest(secret string, body []byte, header http.Header, opts *WebhookOptions) (map[string]any, error) {
	return VerifyWebhook(secret, body, header.Get("X-Webhook-Signature"), header.Get("X-Webhook-Timestamp"), opts)
}

func allDigits(text string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return false
		}
	}
	return text != ""
}
