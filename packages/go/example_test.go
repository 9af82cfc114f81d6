package licensing_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	licensing "github.com/licensing-service/licensing/packages/go"
)

// The README's five minutes, compiled by go vet and go test (examples without an Output
// comment are compiled, not run).

const appID = "your-app-id"

func Example() {
	ctx := context.Background()
	client, _ := licensing.NewClient("https://api.example.com")
	hwuid, _ := licensing.MachineFingerprint(appID) // this machine's device id for your app

	// 1. Online, once in a while: the service checks the key and answers a signed license token.
	answer, err := client.Verify(ctx, licensing.LicenseRequest{
		Key: "XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX", AppID: appID, HWUID: hwuid,
	})
	switch {
	case err != nil:
		fmt.Println("offline or refused:", licensing.CodeOf(err)) // network_error, validation_failed…
	case !answer.Valid:
		fmt.Println("refused:", answer.Code) // device_limit_reached, license_expired…
	default:
		_ = os.WriteFile("license-token.jwt", []byte(answer.LicenseToken), 0o600)
	}

	// 2. At every start, offline too: check the stored token with the key set (stored on first run).
	keys := licensing.JSONFile[licensing.KeySet]{Path: "jwks.json"}
	stored, _ := keys.Load()
	verifier, _ := licensing.NewTokenVerifier(licensing.TokenVerifierOptions{
		AppID:    appID,
		JWKSURL:  client.JWKSURL(),
		KeySet:   stored, // nil on the first run: fetched, then kept by OnKeySet
		OnKeySet: func(set licensing.KeySet) { _ = keys.Save(set) },
	})
	token, _ := os.ReadFile("license-token.jwt")
	claims, err := verifier.Verify(ctx, string(token))
	if err != nil {
		fmt.Println("not licensed:", licensing.CodeOf(err)) // token_expired: go online for a fresh token
		os.Exit(1)
	}
	fmt.Println("licensed:", claims["sub"], claims["features"])
}

func ExampleClient_Seat() {
	ctx := context.Background()
	client, _ := licensing.NewClient("https://api.example.com")
	hwuid, _ := licensing.MachineFingerprint(appID)
	seat, err := client.Seat(ctx, licensing.LicenseRequest{Key: "XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX", AppID: appID, HWUID: hwuid}, 0)
	if err != nil {
		log.Fatal("no seat: ", licensing.CodeOf(err)) // no_seat_available: all seats are taken
	}
	defer seat.Close() // stops the heartbeat, gives the seat back
}

func ExampleVerifyLicenseFile() {
	ctx := context.Background()
	client, _ := licensing.NewClient("https://api.example.com")
	hwuid, _ := licensing.MachineFingerprint(appID)
	var keySet licensing.KeySet // stored from client.FetchKeySet while online
	request, nonce, _ := licensing.OfflineActivationRequest("XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX", hwuid, appID, time.Time{})
	fmt.Println("send to the seller:", request)
	fileText := "…the file that comes back…"
	revocations := licensing.JSONFile[licensing.RevocationSnapshot]{Path: "revocations.json"}
	claims, err := licensing.VerifyLicenseFile(fileText, licensing.LicenseFileOptions{
		KeySet: keySet, AppID: appID, HWUID: hwuid, Nonce: nonce,
		Clock:       licensing.JSONFile[licensing.ClockState]{Path: "clock.json"}, // a clock set back is noticed
		Revocations: revocations,
	})
	fmt.Println(claims, licensing.CodeOf(err))

	// Whenever the machine is online, fetch the revocation list and keep it in the same store.
	list, err := client.Revocations(ctx, appID)
	if err == nil {
		_, err = licensing.CheckRevocations(list.RevocationList, licensing.RevocationOptions{
			KeySet: keySet, AppID: appID, Store: revocations,
		})
	}
	fmt.Println(licensing.CodeOf(err))
}

func ExampleVerifyWebhookRequest() {
	secret := os.Getenv("LICENSING_WEBHOOK_SECRET")
	handle := func(id, kind, data any) {}
	http.HandleFunc("/hooks/licensing", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		event, err := licensing.VerifyWebhookRequest(secret, body, r.Header, nil)
		if err != nil {
			http.Error(w, licensing.CodeOf(err), http.StatusUnauthorized)
			return
		}
		handle(event["id"], event["type"], event["data"])
		w.WriteHeader(http.StatusNoContent)
	})
}
