package licensing

import (
	"encoding/hex"
	"testing"
	"time"
)

func TestHKDFMatchesRFC5869TestCase1(t *testing.T) {
	secret, _ := hex.DecodeString("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b")
	salt, _ := hex.DecodeString("000102030405060708090a0b0c")
	info, _ := hex.DecodeString("f0f1f2f3f4f5f6f7f8f9")
	want := "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
	if got := hex.EncodeToString(hkdfSHA256(secret, salt, info, 42)); got != want {
		t.Fatalf("got %s", got)
	}
}

func TestALicenseKeyIsReadAsTheServiceReadsIt(t *testing.T) {
	cases := []struct{ typed, canonical string }{
		{"abcde-fghjk-mnpqr-stvwx-yz012-34567", "ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567"},
		{" ABCDEFGHJKMNPQRSTVWXYZ01234567\n", "ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567"},
		{"oooo0-iiii1-LLLL1-AAAAA-AAAAA-AAAAA", "00000-11111-11111-AAAAA-AAAAA-AAAAA"},
		{"ABCDE-FGHJK-MNPQR-STVWX-YZ012-3456", ""},  // 29 characters
		{"ABCDE-FGHJK-MNPQR-STVWX-YZ012-3456U", ""}, // U is not in the alphabet
		{"", ""},
	}
	for _, c := range cases {
		got, ok := CanonicalLicenseKey(c.typed)
		if got != c.canonical || ok != (c.canonical != "") {
			t.Errorf("%q: got %q %v, want %q", c.typed, got, ok, c.canonical)
		}
	}
}

func TestAnActivationRequestCarriesTheKeyDeviceAndANonce(t *testing.T) {
	request, nonce, err := OfflineActivationRequest("ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567", "pc-1", "app-1", time.Time{})
	if err != nil || len(nonce) != 22 {
		t.Fatalf("nonce %q, %v", nonce, err)
	}
	decoded, err := decodeJSONPart(request)
	fields, _ := decoded.(map[string]any)
	if err != nil || fields["key"] != "ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567" || fields["hwuid"] != "pc-1" ||
		fields["nonce"] != nonce || fields["appId"] != "app-1" || fields["v"] != float64(1) {
		t.Fatalf("request %v, %v", decoded, err)
	}
	if _, _, err := OfflineActivationRequest("not a key", "pc-1", "", time.Time{}); err == nil {
		t.Fatal("a request for something that is no license key")
	}
	if _, _, err := OfflineActivationRequest("ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567", "  ", "", time.Time{}); err == nil {
		t.Fatal("a request for a blank device")
	}
}
