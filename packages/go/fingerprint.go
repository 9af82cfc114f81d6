package licensing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// A device id (hwuid) for this machine and your app, the same value every SDK computes:
// lowercase hex SHA-256 of appID + ":" + machine id, the operating system's machine id trimmed
// and lower-cased. Stable across reboots and reinstalls of your software; two apps never see
// the same value for one machine.
//
// The machine id: /etc/machine-id, else D-Bus's /var/lib/dbus/machine-id (Linux);
// IOPlatformUUID from `ioreg` (macOS); MachineGuid under HKLM\SOFTWARE\Microsoft\Cryptography
// from `reg query` (Windows). Where none can be read, the fallback is a random id written once to
// ~/.licensing-client/machine-id (the file the other SDKs use, so they agree) and read from
// there afterwards: stable for that user until the file is removed.

var (
	linuxMachineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id"}
	hex32               = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)
	fallbackIDPattern   = regexp.MustCompile(`^[0-9a-f]{32}$`)
	ioregUUID           = regexp.MustCompile(`"IOPlatformUUID"\s*=\s*"([0-9A-Fa-f-]{36})"`)
	regMachineGUID      = regexp.MustCompile(`MachineGuid\s+REG_SZ\s+([0-9A-Fa-f-]{36})`)
)

// MachineFingerprint answers this machine's device id for your app (see above).
func MachineFingerprint(appID string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return MachineFingerprintWithFallback(appID, filepath.Join(home, ".licensing-client", "machine-id"))
}

// MachineFingerprintWithFallback is MachineFingerprint with the fallback id kept in
// fallbackFile instead of ~/.licensing-client/machine-id.
func MachineFingerprintWithFallback(appID, fallbackFile string) (string, error) {
	if appID == "" {
		return "", errors.New("licensing: appID: must be your app id")
	}
	machineID, ok := osMachineID(runtime.GOOS)
	if !ok {
		var err error
		if machineID, err = fallbackMachineID(fallbackFile); err != nil {
			return "", err
		}
	}
	return FingerprintOf(appID, machineID), nil
}

// FingerprintOf is the hash every SDK makes of an app id and a machine id.
func FingerprintOf(appID, machineID string) string {
	sum := sha256.Sum256([]byte(appID + ":" + strings.ToLower(strings.TrimSpace(machineID))))
	return hex.EncodeToString(sum[:])
}

// osMachineID answers the operating system's machine id; ok is false when there is none this
// code can read (no reader, no permission, no such file: the fallback answers).
func osMachineID(goos string) (string, bool) {
	switch goos {
	case "linux":
		return linuxMachineID(linuxMachineIDFiles)
	case "darwin":
		output, err := commandOutput("ioreg", "-rd1", "-c", "IOPlatformExpertDevice")
		if err != nil {
			return "", false
		}
		return parseIoregUUID(output)
	case "windows":
		key := `HKEY_LOCAL_MACHINE\SOFTWARE\Microsoft\Cryptography`
		output, err := commandOutput("reg", "query", key, "/v", "MachineGuid", "/reg:64")
		if err != nil {
			return "", false
		}
		return parseRegMachineGUID(output)
	}
	return "", false
}

// linuxMachineID: the first of files that holds an id (systemd writes 32 hex digits and a newline).
func linuxMachineID(files []string) (string, bool) {
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if text := strings.TrimSpace(string(data)); hex32.MatchString(text) {
			return text, true
		}
	}
	return "", false
}

// parseIoregUUID: `"IOPlatformUUID" = "…"` in the output of `ioreg -rd1 -c IOPlatformExpertDevice`.
func parseIoregUUID(output string) (string, bool) {
	found := ioregUUID.FindStringSubmatch(output)
	if found == nil {
		return "", false
	}
	return found[1], true
}

// parseRegMachineGUID: `MachineGuid    REG_SZ    …` in the output of `reg query`.
func parseRegMachineGUID(output string) (string, bool) {
	found := regMachineGUID.FindStringSubmatch(output)
	if found == nil {
		return "", false
	}
	return found[1], true
}

func commandOutput(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	output, err := exec.CommandContext(ctx, name, args...).Output()
	return string(output), err
}

func fallbackMachineID(file string) (string, error) {
	if data, err := os.ReadFile(file); err == nil {
		if held := strings.TrimSpace(string(data)); fallbackIDPattern.MatchString(held) {
			return held, nil
		}
	}
	random := make([]byte, 16)
	if _, err := rand.Read(random); err != nil {
		return "", err
	}
	made := hex.EncodeToString(random)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, []byte(made+"\n"), 0o600); err != nil {
		return "", err
	}
	// WriteFile sets the mode only when it creates the file; an unreadable one kept another.
	if err := os.Chmod(file, 0o600); err != nil {
		return "", err
	}
	return made, nil
}
