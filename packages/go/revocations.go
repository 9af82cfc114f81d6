package licensing

import (
	"errors"
	"time"
)

// RevocationSnapshot is the revocations in force: the newest list this machine has checked.
// The same JSON as the other SDKs.
type RevocationSnapshot struct {
	AppID    string   `json:"appId"`
	Version  int64    `json:"version"`
	IssuedAt int64    `json:"issuedAt"`
	Revoked  []string `json:"revoked"`
}

// RevocationOptions say how a revocation list is checked and where it is kept. KeySet and AppID
// are required.
type RevocationOptions struct {
	KeySet KeySet
	AppID  string
	Issuer string
	// Store keeps the snapshot in force; a list not newer than the one held is not kept.
	Store Store[RevocationSnapshot]
	// Clock: the clock-rollback guard, which a list newer than any checked before resets.
	Clock Store[ClockState]
	// Leeway for exp; default 300 s.
	Leeway time.Duration
	Now    func() time.Time
}

// CheckRevocations checks a revocation list (RevocationList.RevocationList from
// Client.Revocations, a JWS signed by the offline key) and keeps it in Store unless it is not
// newer than the list held there, so an old list replayed cannot lift a revocation. Answers the
// snapshot in force, or an *Error (KindFile) with the reason.
func CheckRevocations(list string, opts RevocationOptions) (RevocationSnapshot, error) {
	if opts.AppID == "" {
		return RevocationSnapshot{}, errors.New("licensing: AppID: must be your app id")
	}
	if list == "" {
		return RevocationSnapshot{}, fileError("invalid_file", "The revocation list is missing")
	}
	claims, err := verifySigned(list, offlineKeys(opts.KeySet.Keys))
	if err != nil {
		return RevocationSnapshot{}, err
	}
	if claims["token_use"] != RevocationListUse {
		return RevocationSnapshot{}, fileError("wrong_token_use", "Not a revocation list (token_use)")
	}
	if claims["aud"] != opts.AppID {
		return RevocationSnapshot{}, fileError("wrong_app", "The revocation list is another app's")
	}
	if opts.Issuer != "" && claims["iss"] != opts.Issuer {
		return RevocationSnapshot{}, fileError("invalid_file", "The revocation list was issued by another service")
	}
	iat, iatOK := number(claims["iat"])
	exp, expOK := number(claims["exp"])
	version, versionOK := number(claims["version"])
	entries, listOK := claims["revoked"].([]any)
	revoked := make([]string, 0, len(entries))
	for _, entry := range entries {
		object, isObject := entry.(map[string]any)
		sub, isString := object["sub"].(string)
		if !isObject || !isString {
			listOK = false
			break
		}
		revoked = append(revoked, sub)
	}
	if !iatOK || !expOK || !versionOK || !listOK {
		return RevocationSnapshot{}, fileError("invalid_file", "The revocation list is malformed")
	}
	moment := nowMs(opts.Now)
	leeway := opts.Leeway
	if leeway == 0 {
		leeway = defaultFileSkew
	}
	if float64(moment) > exp*1000+float64(leeway.Milliseconds()) {
		return RevocationSnapshot{}, fileError("expired", "The revocation list has expired; fetch a fresh one")
	}
	if opts.Clock != nil {
		if err := vouchForClock(opts.Clock, int64(iat*1000), moment, leeway.Milliseconds()); err != nil {
			return RevocationSnapshot{}, err
		}
	}
	snapshot := RevocationSnapshot{AppID: opts.AppID, Version: int64(version), IssuedAt: int64(iat), Revoked: revoked}
	if opts.Store == nil {
		return snapshot, nil
	}
	unavailable := func(err error) (RevocationSnapshot, error) {
		return RevocationSnapshot{}, &Error{Kind: KindFile, Code: "revocations_unavailable", Message: "The revocations in force could not be kept", Err: err}
	}
	held, err := opts.Store.Load()
	if err != nil {
		return unavailable(err)
	}
	if held != nil && held.AppID == snapshot.AppID && !supersedes(snapshot, *held) {
		return *held, nil
	}
	if err := opts.Store.Save(snapshot); err != nil {
		return unavailable(err)
	}
	return snapshot, nil
}

// supersedes: the service's versions only grow; of one version, a later issue may refresh the
// one held only if it lifts no revocation.
func supersedes(next, held RevocationSnapshot) bool {
	if next.Version != held.Version {
		return next.Version > held.Version
	}
	if next.IssuedAt <= held.IssuedAt {
		return false
	}
	for _, sub := range held.Revoked {
		if !containsString(next.Revoked, sub) {
			return false
		}
	}
	return true
}

// offlineKeys: only the offline keys sign lists, when the set has any (a set copied before they
// existed has none).
func offlineKeys(keys []map[string]any) []map[string]any {
	var offline []map[string]any
	for _, key := range keys {
		if key["purpose"] == "offline" {
			offline = append(offline, key)
		}
	}
	if len(offline) == 0 {
		return keys
	}
	return offline
}
