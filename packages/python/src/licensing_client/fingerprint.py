"""A device id (``hwuid``) for this machine and your app, the same value every SDK computes:
lowercase hex SHA-256 of ``f"{app_id}:{machine_id}"``, the operating system's machine id trimmed
and lower-cased. Stable across reboots and reinstalls of your software; two apps never see the
same value for one machine.

The machine id: ``/etc/machine-id``, else D-Bus's ``/var/lib/dbus/machine-id`` (Linux);
``IOPlatformUUID`` from ``ioreg`` (macOS); ``MachineGuid`` under
``HKLM\\SOFTWARE\\Microsoft\\Cryptography`` (Windows). Where none can be read, the fallback is a
random id written once to ``fallback_file`` (by default ``~/.licensing-client/machine-id``) and
read from there afterwards: stable for that user until the file is removed."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Optional, Union

_LINUX_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_HEX32 = re.compile(r"[0-9a-fA-F]{32}")


def machine_fingerprint(app_id: str, *, fallback_file: Optional[Union[str, Path]] = None) -> str:
    if not isinstance(app_id, str) or not app_id:
        raise TypeError("app_id: must be your app id")
    machine_id = os_machine_id(sys.platform)
    if machine_id is None:
        machine_id = _fallback_machine_id(
            Path(fallback_file) if fallback_file is not None else Path.home() / ".licensing-client" / "machine-id"
        )
    return fingerprint_of(app_id, machine_id)


def fingerprint_of(app_id: str, machine_id: str) -> str:
    """The hash every SDK makes of an app id and a machine id."""
    return hashlib.sha256(f"{app_id}:{machine_id.strip().lower()}".encode("utf-8")).hexdigest()


def os_machine_id(platform: str) -> Optional[str]:
    """The operating system's machine id, or None when it has none this code can read."""
    try:
        if platform.startswith("linux"):
            return linux_machine_id(_LINUX_FILES)
        if platform == "darwin":
            output = subprocess.run(
                ["ioreg", "-rd1", "-c", "IOPlatformExpertDevice"], capture_output=True, text=True, timeout=5, check=True
            ).stdout
            return parse_ioreg_uuid(output)
        if platform == "win32":
            import winreg  # only on Windows

            return windows_machine_guid(winreg)
    except (OSError, subprocess.SubprocessError, ImportError):
        pass  # no reader, no permission, no such key: the fallback answers
    return None


def linux_machine_id(files: Iterable[str]) -> Optional[str]:
    """The first of ``files`` that holds an id (systemd writes 32 hex digits and a newline)."""
    for file in files:
        try:
            text = Path(file).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if _HEX32.fullmatch(text):
            return text
    return None


def parse_ioreg_uuid(output: str) -> Optional[str]:
    """``"IOPlatformUUID" = "…"`` in the output of ``ioreg -rd1 -c IOPlatformExpertDevice``."""
    found = re.search(r'"IOPlatformUUID"\s*=\s*"([0-9A-Fa-f-]{36})"', output)
    return found.group(1) if found else None


def windows_machine_guid(winreg: Any) -> Optional[str]:
    """MachineGuid from the 64-bit registry view (a 32-bit Python would read another key)."""
    access = winreg.KEY_READ | getattr(winreg, "KEY_WOW64_64KEY", 0)
    with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SOFTWARE\Microsoft\Cryptography", 0, access) as key:
        value, _kind = winreg.QueryValueEx(key, "MachineGuid")
    return value if isinstance(value, str) and re.fullmatch(r"[0-9A-Fa-f-]{36}", value) else None


def _fallback_machine_id(file: Path) -> str:
    try:
        held = file.read_text(encoding="utf-8").strip()
        if re.fullmatch(r"[0-9a-f]{32}", held):
            return held
    except OSError:
        pass
    made = secrets.token_hex(16)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(made + "\n", encoding="utf-8")
    os.chmod(file, 0o600)
    return made
