// Package licensing is the licensing service's client for Go programs: license tokens, seat
// tokens, license files and revocation lists checked offline, the clock-rollback guard, device
// ids (MachineFingerprint), webhook signature checks for your backend, and the online calls
// (verify, validate-hardware, seat checkout with a background heartbeat, checkin, usage consume,
// the key set, the update check), and release files checked against their signed manifests
// (VerifyArtifact). Standard library only, Go 1.19 and newer.
//
// Every check reaches the same verdicts as the TypeScript and Python SDKs on the conformance
// vectors the service writes in CI (packages/conformance). Errors are *Error values whose Code
// is the service's string; CodeOf(err) reads it.
package licensing
