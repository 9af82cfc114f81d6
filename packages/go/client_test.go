package licensing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestNewClientRefusesAnAppVersionThatIsNotShortVisibleASCII(t *testing.T) {
	for _, version := range []string{"two words", strings.Repeat("9", 65), "é1"} {
		if _, err := NewClient("https://api.example.com", WithAppVersion(version)); err == nil ||
			!strings.Contains(err.Error(), "appVersion") {
			t.Errorf("%q: got %v, want an error naming appVersion", version, err)
		}
	}
}

func TestEveryCallSendsTheAppVersion(t *testing.T) {
	var sent string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = r.Header.Get("X-App-Version")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"valid":true}`))
	}))
	defer server.Close()
	client, err := NewClient(server.URL, WithAppVersion("2.4.1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Verify(context.Background(), LicenseRequest{Key: "K", AppID: "A"}); err != nil {
		t.Fatal(err)
	}
	if sent != "2.4.1" {
		t.Errorf("X-App-Version: got %q, want 2.4.1", sent)
	}
}
