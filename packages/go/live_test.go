package licensing

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Online calls against a real service, started by packages/client/src/conformance.test.ts,
// which passes its address and licenses in LICENSING_LIVE_* (skipped without them).

type live struct {
	client  *Client
	appID   string
	key     string
	license string
	hwuid   string
}

func liveService(t *testing.T) live {
	t.Helper()
	address := os.Getenv("LICENSING_LIVE_URL")
	if address == "" {
		t.Skip("no service: LICENSING_LIVE_URL is not set")
	}
	client, err := NewClient(address, WithRetries(0), WithAppVersion("go-live/1.0"))
	if err != nil {
		t.Fatal(err)
	}
	appID := os.Getenv("LICENSING_LIVE_APP_ID")
	hwuid, err := MachineFingerprint(appID)
	if err != nil {
		t.Fatal(err)
	}
	return live{client, appID, os.Getenv("LICENSING_LIVE_KEY"), os.Getenv("LICENSING_LIVE_LICENSE_ID"), hwuid}
}

func TestLiveVerifyAnswersATokenTheVerifierChecksWithTheFetchedKeySet(t *testing.T) {
	s := liveService(t)
	ctx := context.Background()
	answer, err := s.client.Verify(ctx, LicenseRequest{Key: s.key, AppID: s.appID, HWUID: s.hwuid})
	if err != nil || !answer.Valid {
		t.Fatalf("verify: %+v %v", answer, err)
	}
	var fetched []KeySet
	verifier, _ := NewTokenVerifier(TokenVerifierOptions{
		AppID: s.appID, JWKSURL: s.client.JWKSURL(), OnKeySet: func(set KeySet) { fetched = append(fetched, set) },
	})
	claims, err := verifier.Verify(ctx, answer.LicenseToken)
	if err != nil || claims["sub"] != s.license {
		t.Fatalf("claims %v, %v", claims, err)
	}
	if len(fetched) != 1 {
		t.Fatalf("the key set was fetched %d times, not once for storing", len(fetched))
	}
	other, _ := NewTokenVerifier(TokenVerifierOptions{AppID: "00000000-0000-4000-8000-000000000000", KeySet: &fetched[0]})
	if _, err := other.Verify(ctx, answer.LicenseToken); CodeOf(err) != "wrong_audience" {
		t.Fatalf("another app's verifier: %v", err)
	}
}

func TestLiveValidateHardwareKnowsTheDeviceVerifyBound(t *testing.T) {
	s := liveService(t)
	ctx := context.Background()
	if _, err := s.client.Verify(ctx, LicenseRequest{Key: s.key, AppID: s.appID, HWUID: s.hwuid}); err != nil {
		t.Fatal(err)
	}
	known, err := s.client.ValidateHardware(ctx, LicenseRequest{Key: s.key, AppID: s.appID, HWUID: s.hwuid})
	if err != nil || !known.Valid {
		t.Fatalf("validate-hardware: %+v %v", known, err)
	}
	unknown, err := s.client.Verify(ctx, LicenseRequest{Key: "AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA", AppID: s.appID, HWUID: s.hwuid})
	if err != nil || unknown.Valid || unknown.Code == "" {
		t.Fatalf("an unknown key: %+v %v", unknown, err)
	}
}

func TestLiveASeatIsTakenRefusedToASecondDeviceAndGivenBack(t *testing.T) {
	s := liveService(t)
	ctx := context.Background()
	key := os.Getenv("LICENSING_LIVE_FLOATING_KEY")
	mine := LicenseRequest{Key: key, AppID: s.appID, HWUID: s.hwuid}
	another := LicenseRequest{Key: key, AppID: s.appID, HWUID: "another-device"}
	taken, err := s.client.Checkout(ctx, mine)
	if err != nil || !taken.Valid || taken.LicenseToken == "" {
		t.Fatalf("checkout: %+v %v", taken, err)
	}
	refused, err := s.client.Checkout(ctx, another)
	if err != nil || refused.Valid || refused.Code != "no_seat_available" {
		t.Fatalf("a second device: %+v %v", refused, err)
	}
	released, err := s.client.Checkin(ctx, key, s.hwuid, s.appID)
	if err != nil || !released.Released {
		t.Fatalf("checkin: %+v %v", released, err)
	}
	if again, err := s.client.Checkout(ctx, another); err != nil || !again.Valid {
		t.Fatalf("the seat given back: %+v %v", again, err)
	}
}

func TestLiveASeatIsRenewedInTheBackgroundAndGivenBackOnClose(t *testing.T) {
	s := liveService(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	key := os.Getenv("LICENSING_LIVE_SEAT_KEY")
	seat, err := s.client.Seat(ctx, LicenseRequest{Key: key, AppID: s.appID, HWUID: s.hwuid}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer seat.Close()
	first := seat.Answer()
	if !first.Valid || first.LeaseExpiresAt == "" {
		t.Fatalf("checkout: %+v", first)
	}
	// The heartbeat renews the seat by itself: a new answer arrives without a call from here.
	for deadline := time.Now().Add(20 * time.Second); seat.Answer() == first; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat; last error %v", seat.LastError())
		}
	}
	if renewed := seat.Answer(); !renewed.Valid || renewed.LeaseExpiresAt < first.LeaseExpiresAt {
		t.Fatalf("renewed: %+v", renewed)
	}
	_, err = s.client.Seat(ctx, LicenseRequest{Key: key, AppID: s.appID, HWUID: "another-device"}, 0)
	if CodeOf(err) != "no_seat_available" {
		t.Fatalf("a second device: %v", err)
	}
	if err := seat.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := s.client.Seat(ctx, LicenseRequest{Key: key, AppID: s.appID, HWUID: "another-device"}, time.Hour)
	if err != nil {
		t.Fatalf("given back on Close: %v", err)
	}
	// A context ended stops the heartbeat; Close still gives the seat back.
	cancel()
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLiveUsageIsConsumedOncePerIdempotencyKeyAndRefusedPastTheQuota(t *testing.T) {
	s := liveService(t)
	ctx := context.Background()
	key := os.Getenv("LICENSING_LIVE_USAGE_KEY")
	if key == "" {
		t.Skip("no license with a usage quota: LICENSING_LIVE_USAGE_KEY is not set")
	}
	request := UsageRequest{Key: key, AppID: s.appID, Amount: 2, IdempotencyKey: "go-sdk-consume-1"}
	first, err := s.client.ConsumeUsage(ctx, request)
	if err != nil || !first.Consumed || *first.Uses != 2 || *first.UsesRemaining != 1 {
		t.Fatalf("consume: %+v %v", first, err)
	}
	if again, err := s.client.ConsumeUsage(ctx, request); err != nil || *again.Uses != 2 {
		t.Fatalf("the same key again counts once: %+v %v", again, err)
	}
	over, err := s.client.ConsumeUsage(ctx, UsageRequest{Key: key, AppID: s.appID, Amount: 2})
	if err != nil || over.Consumed || over.Code != "usage_exhausted" || *over.UsesRemaining != 1 {
		t.Fatalf("past the quota: %+v %v", over, err)
	}
	_, err = s.client.ConsumeUsage(ctx, UsageRequest{Key: key, AppID: s.appID, Amount: 0})
	if refused, ok := err.(*Error); !ok || refused.Status != 400 || refused.Code != "validation_failed" {
		t.Fatalf("amount 0: %v", err)
	}
}

func TestLiveTheRevocationListIsCheckedWithTheFetchedKeySet(t *testing.T) {
	s := liveService(t)
	ctx := context.Background()
	keys, err := s.client.FetchKeySet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.client.Revocations(ctx, s.appID)
	if err != nil {
		t.Fatal(err)
	}
	store := &MemoryStore[RevocationSnapshot]{}
	snapshot, err := CheckRevocations(list.RevocationList, RevocationOptions{KeySet: keys, AppID: s.appID, Store: store})
	if err != nil || snapshot.Version != list.Version || store.Value == nil {
		t.Fatalf("snapshot %+v, %v", snapshot, err)
	}
	if _, err := CheckRevocations(list.RevocationList, RevocationOptions{KeySet: keys, AppID: "00000000-0000-4000-8000-000000000000"}); CodeOf(err) != "wrong_app" {
		t.Fatalf("another app: %v", err)
	}
}

func TestLiveARefusedRequestAnswersTheServiceCode(t *testing.T) {
	s := liveService(t)
	_, err := s.client.Verify(context.Background(), LicenseRequest{Key: s.key, AppID: "not-a-uuid", HWUID: s.hwuid})
	refused, ok := err.(*Error)
	if !ok || refused.Status != 400 || refused.Code != "validation_failed" || refused.RequestID == "" {
		t.Fatalf("got %#v", err)
	}
	named := false
	for _, detail := range refused.Details {
		named = named || detail.Field == "appId"
	}
	if !named {
		t.Fatalf("details do not name appId: %+v", refused.Details)
	}
}

func TestLiveNoAnswerIsANetworkError(t *testing.T) {
	s := liveService(t)
	closed, _ := NewClient("http://127.0.0.1:9", WithRetries(0))
	_, err := closed.Verify(context.Background(), LicenseRequest{Key: s.key, AppID: s.appID})
	if refused, ok := err.(*Error); !ok || refused.Status != 0 || refused.Code != "network_error" {
		t.Fatalf("got %#v", err)
	}
}

func TestLiveTheDeviceIDIsTheOneTheTypeScriptSDKComputes(t *testing.T) {
	s := liveService(t)
	expected := os.Getenv("LICENSING_LIVE_FINGERPRINT")
	if expected == "" {
		t.Skip("LICENSING_LIVE_FINGERPRINT is not set")
	}
	if s.hwuid != expected {
		t.Fatalf("Go computes %s, TypeScript %s", s.hwuid, expected)
	}
}

func TestLiveAnUpdateIsOfferedAndTheDownloadedFileChecksAgainstItsManifest(t *testing.T) {
	s := liveService(t)
	ctx := context.Background()
	request := UpdateRequest{Key: s.key, AppID: s.appID, HWUID: s.hwuid, CurrentVersion: "1.0.0", Platform: "linux"}
	update, err := s.client.CheckForUpdate(ctx, request)
	if err != nil || update == nil || len(update.Artifacts) == 0 {
		t.Fatalf("update %+v, %v", update, err)
	}
	file := update.Artifacts[0]
	// The link is built on the service's public address; the test service listens elsewhere.
	link := strings.Replace(file.DownloadURL, os.Getenv("LICENSING_LIVE_PUBLIC_API"), s.client.base, 1)
	response, err := http.Get(link)
	if err != nil || response.StatusCode != http.StatusOK {
		t.Fatalf("download: %v %v", response, err)
	}
	defer response.Body.Close()
	options := ArtifactOptions{
		AppID: s.appID, JWKSURL: s.client.JWKSURL(), Version: update.Release.Version, Filename: file.Filename,
	}
	manifest, err := VerifyArtifact(ctx, response.Body, file.Manifest, options)
	if err != nil || manifest.SHA256 != file.SHA256 || manifest.Size != file.Size {
		t.Fatalf("manifest %+v, %v", manifest, err)
	}
	_, err = VerifyArtifact(ctx, strings.NewReader("not the file"), file.Manifest, options)
	if CodeOf(err) != "size_mismatch" {
		t.Fatalf("another file: %v", err)
	}
	request.CurrentVersion = update.Release.Version
	if newer, err := s.client.CheckForUpdate(ctx, request); err != nil || newer != nil {
		t.Fatalf("up to date: %+v, %v", newer, err)
	}
	request.CurrentVersion = "latest"
	if _, err := s.client.CheckForUpdate(ctx, request); CodeOf(err) != "validation_failed" {
		t.Fatalf("a version that is none: %v", err)
	}
	// A license token from verify stands for the key and the device.
	verified, err := s.client.Verify(ctx, LicenseRequest{Key: s.key, AppID: s.appID, HWUID: s.hwuid})
	if err != nil || verified.LicenseToken == "" {
		t.Fatalf("verify: %+v, %v", verified, err)
	}
	byToken := UpdateRequest{Token: verified.LicenseToken, AppID: s.appID, CurrentVersion: "1.0.0", Platform: "linux"}
	if offered, err := s.client.CheckForUpdate(ctx, byToken); err != nil || offered == nil ||
		offered.Release.Version != update.Release.Version {
		t.Fatalf("update with a token: %+v, %v", offered, err)
	}
	// Another payload under the same signature.
	parts := strings.Split(verified.LicenseToken, ".")
	byToken.Token = strings.Join([]string{parts[0], parts[0], parts[2]}, ".")
	if _, err := s.client.CheckForUpdate(ctx, byToken); CodeOf(err) != "invalid_signature" {
		t.Fatalf("a changed token: %v", err)
	}
	byToken.Key = s.key
	if _, err := s.client.CheckForUpdate(ctx, byToken); err == nil {
		t.Fatal("a key and a token together were sent")
	}
}
