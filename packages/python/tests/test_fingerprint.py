"""machine_fingerprint: each platform's reader, the fallback, and the hash every SDK shares."""

from __future__ import annotations

import hashlib
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from licensing_client import fingerprint_of, machine_fingerprint  # noqa: E402
from licensing_client.fingerprint import (  # noqa: E402
    _fallback_machine_id,
    linux_machine_id,
    os_machine_id,
    parse_ioreg_uuid,
    windows_machine_guid,
)

IOREG = """+-o J314sAP  <class IOPlatformExpertDevice, id 0x100000214, registered, matched, active, busy 0 (7 ms), retain 32>
    {
      "IOPlatformSerialNumber" = "C02XXXXXXX"
      "IOPlatformUUID" = "5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C"
      "model" = <"MacBookPro18,3">
    }
"""


class FakeKey:
    def __enter__(self) -> "FakeKey":
        return self

    def __exit__(self, *args: Any) -> None:
        return None


class FakeWinreg:
    HKEY_LOCAL_MACHINE = 0x80000002
    KEY_READ = 0x20019
    KEY_WOW64_64KEY = 0x0100

    def __init__(self) -> None:
        self.opened: Tuple[Any, ...] = ()

    def OpenKey(self, root: int, path: str, reserved: int, access: int) -> FakeKey:  # noqa: N802
        self.opened = (root, path, access)
        return FakeKey()

    def QueryValueEx(self, key: FakeKey, name: str) -> Tuple[str, int]:  # noqa: N802
        assert name == "MachineGuid"
        return ("8f2b6c1e-3a4d-4c5e-9f60-7a8b9c0d1e2f", 1)


class FingerprintTest(unittest.TestCase):
    def test_the_hash_is_sha256_of_app_and_machine_id(self) -> None:
        expected = hashlib.sha256(b"app-1:5c3e1a2b-9d4f-4e6a-8b7c-1d2e3f4a5b6c").hexdigest()
        self.assertEqual(fingerprint_of("app-1", " 5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C\n"), expected)
        self.assertNotEqual(fingerprint_of("app-1", "m"), fingerprint_of("app-2", "m"))

    def test_linux_reads_systemd_then_dbus(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            dbus = Path(folder) / "dbus-machine-id"
            dbus.write_text("0123456789abcdef0123456789abcdef\n")
            missing = str(Path(folder) / "none")
            self.assertEqual(linux_machine_id([missing, str(dbus)]), "0123456789abcdef0123456789abcdef")
            (Path(folder) / "empty").write_text("\n")
            self.assertIsNone(linux_machine_id([missing, str(Path(folder) / "empty")]))

    @unittest.skipUnless(Path("/etc/machine-id").exists(), "this machine has no /etc/machine-id")
    def test_on_this_linux_machine_it_is_the_machine_id_hashed(self) -> None:
        machine_id = Path("/etc/machine-id").read_text().strip()
        self.assertEqual(os_machine_id("linux"), machine_id)
        self.assertEqual(machine_fingerprint("app-1"), fingerprint_of("app-1", machine_id))
        self.assertEqual(machine_fingerprint("app-1"), machine_fingerprint("app-1"))

    def test_macos_reads_ioreg_platform_uuid(self) -> None:
        self.assertEqual(parse_ioreg_uuid(IOREG), "5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C")
        self.assertIsNone(parse_ioreg_uuid("no such device"))

    def test_windows_reads_machine_guid_from_the_64_bit_view(self) -> None:
        fake = FakeWinreg()
        self.assertEqual(windows_machine_guid(fake), "8f2b6c1e-3a4d-4c5e-9f60-7a8b9c0d1e2f")
        self.assertEqual(fake.opened[1], r"SOFTWARE\Microsoft\Cryptography")
        self.assertTrue(fake.opened[2] & FakeWinreg.KEY_WOW64_64KEY)

    def test_the_fallback_is_written_once_and_kept(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            file = Path(folder) / "nested" / "machine-id"
            first = _fallback_machine_id(file)
            self.assertRegex(first, r"^[0-9a-f]{32}$")
            self.assertEqual(_fallback_machine_id(file), first)
            self.assertEqual(file.stat().st_mode & 0o777, 0o600)


if __name__ == "__main__":
    unittest.main()
