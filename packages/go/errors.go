package licensing

import (
	"errors"
	"fmt"
)

// Kind says which check or call refused: the codes of each kind are listed on its constant.
type Kind string

const (
	// KindToken: a license or seat token. Codes: invalid_token, invalid_signature,
	// token_expired, wrong_audience, wrong_token_use, key_set_unavailable.
	KindToken Kind = "token"
	// KindFile: a license file or a revocation list. Codes: invalid_file, decryption_failed,
	// bad_signature, wrong_token_use, wrong_app, wrong_device, wrong_nonce, clock_rollback,
	// not_yet_valid, expired, check_in_overdue, revoked.
	KindFile Kind = "file"
	// KindWebhook: a webhook delivery to answer 401. Codes: malformed, bad_signature,
	// stale_timestamp.
	KindWebhook Kind = "webhook"
	// KindAPI: an error answer from the service (Status, its code, RequestID, Details), or no
	// answer at all (Status 0, network_error), or an answer that is not the service's JSON
	// (unexpected_response).
	KindAPI Kind = "api"
	// KindSeat: a seat the service did not give (Code is the answer's code, e.g. no_seat_available).
	KindSeat Kind = "seat"
	// KindArtifact: a downloaded file or its manifest. Codes: invalid_manifest, invalid_signature,
	// wrong_token_use, wrong_app, wrong_version, wrong_file, size_mismatch, digest_mismatch,
	// key_set_unavailable.
	KindArtifact Kind = "artifact"
)

// Error is what every check and call of this package answers when it refuses. Code is the same
// string the service and the TypeScript and Python SDKs use, so a program branches on it.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Status is the HTTP status of an API error; 0 when no answer came.
	Status    int
	RequestID string
	Details   []ErrorDetail
	// Err is the cause, when there is one (a network error, a store that failed).
	Err error
}

// ErrorDetail names a field the service refused and why.
type ErrorDetail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Kind == KindAPI && e.Status != 0 {
		return fmt.Sprintf("licensing: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
	}
	return fmt.Sprintf("licensing: %s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf answers the code of err when it is (or wraps) an *Error, else "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func tokenError(code, message string) *Error {
	return &Error{Kind: KindToken, Code: code, Message: message}
}

func fileError(code, message string) *Error {
	return &Error{Kind: KindFile, Code: code, Message: message}
}

func webhookError(code, message string) *Error {
	return &Error{Kind: KindWebhook, Code: code, Message: message}
}
