package licensing

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const ioregSample = `+-o J314sAP  <class IOPlatformExpertDevice, id 0x100000214, registered, matched, active, busy 0 (7 ms), retain 32>
    {
      "IOPlatformSerialNumber" = "C02XXXXXXX"
      "IOPlatformUUID" = "5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C"
      "model" = <"MacBookPro18,3">
    }
`

const regSample = "\r\nHKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography\r\n" +
	"    MachineGuid    REG_SZ    8f2b6c1e-3a4d-4c5e-9f60-7a8b9c0d1e2f\r\n\r\n"

func TestTheFingerprintIsSHA256OfAppAndMachineID(t *testing.T) {
	sum := sha256.Sum256([]byte("app-1:5c3e1a2b-9d4f-4e6a-8b7c-1d2e3f4a5b6c"))
	if got := FingerprintOf("app-1", " 5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C\n"); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("got %s", got)
	}
	if FingerprintOf("app-1", "m") == FingerprintOf("app-2", "m") {
		t.Fatal("two apps see the same value for one machine")
	}
}

func TestLinuxReadsSystemdThenDBus(t *testing.T) {
	folder := t.TempDir()
	dbus := filepath.Join(folder, "dbus-machine-id")
	mustWrite(t, dbus, "0123456789abcdef0123456789abcdef\n")
	missing := filepath.Join(folder, "none")
	if id, ok := linuxMachineID([]string{missing, dbus}); !ok || id != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("got %q %v", id, ok)
	}
	empty := filepath.Join(folder, "empty")
	mustWrite(t, empty, "\n")
	if id, ok := linuxMachineID([]string{missing, empty}); ok {
		t.Fatalf("an empty file is no machine id, got %q", id)
	}
}

func TestOnThisLinuxMachineItIsTheMachineIDHashed(t *testing.T) {
	data, err := os.ReadFile("/etc/machine-id")
	if err != nil {
		t.Skip("this machine has no /etc/machine-id")
	}
	machineID := strings.TrimSpace(string(data))
	if id, ok := osMachineID("linux"); !ok || id != machineID {
		t.Fatalf("got %q %v", id, ok)
	}
	first, err := MachineFingerprint("app-1")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := MachineFingerprint("app-1")
	if first != FingerprintOf("app-1", machineID) || first != again {
		t.Fatalf("got %s and %s", first, again)
	}
}

func TestMacOSReadsIoregPlatformUUID(t *testing.T) {
	if id, ok := parseIoregUUID(ioregSample); !ok || id != "5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C" {
		t.Fatalf("got %q %v", id, ok)
	}
	if _, ok := parseIoregUUID("no such device"); ok {
		t.Fatal("found a UUID in output without one")
	}
}

func TestWindowsReadsMachineGuidFromRegQuery(t *testing.T) {
	if id, ok := parseRegMachineGUID(regSample); !ok || id != "8f2b6c1e-3a4d-4c5e-9f60-7a8b9c0d1e2f" {
		t.Fatalf("got %q %v", id, ok)
	}
	refused := "ERROR: The system was unable to find the specified registry key or value.\r\n"
	if _, ok := parseRegMachineGUID(refused); ok {
		t.Fatal("found a GUID in an error")
	}
}

func TestTheFallbackIsWrittenOnceAndKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "nested", "machine-id")
	first, err := fallbackMachineID(file)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(first) {
		t.Fatalf("got %q", first)
	}
	if again, _ := fallbackMachineID(file); again != first {
		t.Fatalf("a second read made %q, not %q", again, first)
	}
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
}

func mustWrite(t *testing.T, file, text string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
