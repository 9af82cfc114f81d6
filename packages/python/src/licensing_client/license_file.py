"""Air-gapped activation on the machine, by the rules of the TypeScript SDK's license-file.ts:
write an activation request, check the license file that answers it (plain or encrypted), and
keep the revocations learnt whenever the machine is online. Everything here runs offline."""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .clock import (
    ClockInput,
    Now,
    StateStore,
    load_clock,
    now_ms,
    remember_clock,
    vouch_for_clock,
)
from .errors import LicenseFileError
from .jws import JsonObject, JwsError, b64url_decode, decode_json_part, key_list, verify_compact

LICENSE_FILE_USE = "service_license_file_v1"
REVOCATION_LIST_USE = "service_revocation_list_v1"
_KEY_SALT = b"licensing-service/license-file"
_KEY_INFO = b"A256GCM key v1"


@dataclass
class RevocationSnapshot:
    """The revocations in force: the newest list this machine has checked."""

    app_id: str
    version: int
    issued_at: int
    revoked: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"appId": self.app_id, "version": self.version, "issuedAt": self.issued_at, "revoked": list(self.revoked)}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> RevocationSnapshot:
        return cls(str(value["appId"]), int(value["version"]), int(value["issuedAt"]), [str(s) for s in value["revoked"]])


RevocationsInput = Union[RevocationSnapshot, StateStore[RevocationSnapshot]]


def canonical_license_key(typed: str) -> Optional[str]:
    """The canonical form of a typed license key, as the service reads it; None when it cannot be one."""
    compact = re.sub(r"[\s-]", "", typed.upper()).replace("O", "0").replace("I", "1").replace("L", "1")
    if not re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{30}", compact):
        return None
    return "-".join(compact[i : i + 5] for i in range(0, 30, 5))


def create_offline_activation_request(
    key: str, hwuid: str, app_id: Optional[str] = None, now: Optional[Now] = None
) -> Tuple[str, str]:
    """An activation request for ``POST /licenses/offline-activations``: answers (request, nonce).
    Keep the nonce to check the file that answers it."""
    if not isinstance(key, str) or canonical_license_key(key) is None:
        raise TypeError("key: must be a license key")
    if not isinstance(hwuid, str) or not hwuid.strip() or len(hwuid) > 200:
        raise TypeError("hwuid: must be 1 to 200 characters, not blank")
    nonce = _b64url(os.urandom(16))
    moment = now() if now is not None else datetime.now(timezone.utc)
    request: Dict[str, Any] = {"v": 1, "key": key, "hwuid": hwuid, "nonce": nonce}
    if app_id is not None:
        request["appId"] = app_id
    request["createdAt"] = moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    return _b64url(json.dumps(request, separators=(",", ":")).encode("utf-8")), nonce


def verify_license_file(
    file: str,
    *,
    key_set: Mapping[str, Any],
    app_id: str,
    hwuid: str,
    license_key: Optional[str] = None,
    nonce: Optional[str] = None,
    issuer: Optional[str] = None,
    clock: Optional[ClockInput] = None,
    revocations: Optional[RevocationsInput] = None,
    clock_tolerance_seconds: int = 300,
    now: Optional[Now] = None,
) -> JsonObject:
    """Checks a license file offline: decrypts it when encrypted (with ``license_key``), then the
    signature against ``key_set``, token_use, app, device, nonce, times, the clock-rollback guard
    and the revocations. Raises LicenseFileError with the reason; answers the claims."""
    if not isinstance(app_id, str) or not app_id:
        raise TypeError("app_id: must be your app id")
    if not isinstance(hwuid, str) or not hwuid:
        raise TypeError("hwuid: must be this machine's device id")
    if not isinstance(file, str) or not file.strip():
        raise LicenseFileError("invalid_file", "The license file is missing")
    text = file.strip()
    jws = _decrypt(text, license_key) if len(text.split(".")) == 5 else text
    claims = _verify_signed(jws, key_list(key_set))
    if claims.get("token_use") != LICENSE_FILE_USE:
        raise LicenseFileError("wrong_token_use", "Not a license file (token_use)")
    if not (
        isinstance(claims.get("sub"), str)
        and isinstance(claims.get("hwuid"), str)
        and _is_number(claims.get("iat"))
        and _is_number(claims.get("exp"))
    ):
        raise LicenseFileError("invalid_file", "The license file lacks sub, hwuid, iat or exp")
    if issuer is not None and claims.get("iss") != issuer:
        raise LicenseFileError("invalid_file", "The license file was issued by another service")
    if claims.get("aud") != app_id:
        raise LicenseFileError("wrong_app", "The license file was issued for another app")
    if claims["hwuid"] != hwuid:
        raise LicenseFileError("wrong_device", "The license file was issued for another device")
    if nonce is not None and claims.get("nonce") != nonce:
        raise LicenseFileError("wrong_nonce", "The license file answers another activation request")

    tolerance = clock_tolerance_seconds * 1000
    moment = now_ms(now)
    held = load_clock(clock)
    issued_at = int(claims["iat"] * 1000)
    reset = held is not None and held.vouched_at is not None and issued_at > held.vouched_at
    # A file is never issued in the future, and time never runs backwards: either means the
    # clock was set back, perhaps to stretch an expired file.
    rollback: Optional[str] = None
    if moment < issued_at - tolerance:
        rollback = "The clock is earlier than the license file's issue time"
    elif held is not None and not reset and moment < held.last_seen - tolerance:
        rollback = "The clock is earlier than a time this machine has already seen"
    if rollback is not None:
        # A guard kept before vouched_at existed starts keeping it here.
        if clock is not None and (held is None or held.vouched_at is None):
            remember_clock(clock, held, vouched_at=issued_at)
        raise LicenseFileError("clock_rollback", rollback)
    nbf = _number(claims.get("nbf"))
    if nbf is not None and moment < nbf * 1000 - tolerance:
        raise LicenseFileError("not_yet_valid", "The license file is not valid yet")
    if moment > claims["exp"] * 1000 + tolerance:
        raise LicenseFileError("expired", "The license file has expired")
    check_in_by = _number(claims.get("check_in_by"))
    if check_in_by is not None and moment > check_in_by * 1000 + tolerance:
        raise LicenseFileError("check_in_overdue", "The license must check in: a new activation request gets a new file")
    snapshot = _load_revocations(revocations)
    if snapshot is not None and snapshot.app_id == app_id and claims["sub"] in snapshot.revoked:
        raise LicenseFileError("revoked", "The license is revoked or suspended")

    if clock is not None:
        remember_clock(clock, held, vouched_at=issued_at, seen_at=moment, reset=reset)
    license_exp = _number(claims.get("license_exp"))
    if license_exp is not None and moment > license_exp * 1000:
        return {**claims, "expired": True}
    return claims


def check_revocations(
    revocation_list: Union[str, Mapping[str, Any]],
    *,
    key_set: Mapping[str, Any],
    app_id: str,
    issuer: Optional[str] = None,
    store: Optional[StateStore[RevocationSnapshot]] = None,
    clock: Optional[ClockInput] = None,
    clock_tolerance_seconds: int = 300,
    now: Optional[Now] = None,
) -> RevocationSnapshot:
    """Checks a revocation list from ``GET /licenses/revocations?appId=…`` (the whole answer or
    its ``revocationList``) and keeps it in ``store`` unless it is not newer than the list held
    there, so an old list replayed cannot lift a revocation. Answers the snapshot in force."""
    jws = revocation_list if isinstance(revocation_list, str) else revocation_list.get("revocationList")
    if not isinstance(jws, str) or not jws:
        raise LicenseFileError("invalid_file", "The revocation list is missing")
    claims = _verify_signed(jws, _offline_keys(key_list(key_set)))
    if claims.get("token_use") != REVOCATION_LIST_USE:
        raise LicenseFileError("wrong_token_use", "Not a revocation list (token_use)")
    if claims.get("aud") != app_id:
        raise LicenseFileError("wrong_app", "The revocation list is another app's")
    if issuer is not None and claims.get("iss") != issuer:
        raise LicenseFileError("invalid_file", "The revocation list was issued by another service")
    revoked = claims.get("revoked")
    if (
        not _is_number(claims.get("iat"))
        or not _is_number(claims.get("exp"))
        or not _is_number(claims.get("version"))
        or not isinstance(revoked, list)
        or any(not isinstance(entry, dict) or not isinstance(entry.get("sub"), str) for entry in revoked)
    ):
        raise LicenseFileError("invalid_file", "The revocation list is malformed")
    moment = now_ms(now)
    tolerance = clock_tolerance_seconds * 1000
    if moment > claims["exp"] * 1000 + tolerance:
        raise LicenseFileError("expired", "The revocation list has expired; fetch a fresh one")
    if clock is not None:
        vouch_for_clock(clock, int(claims["iat"] * 1000), moment, tolerance)
    snapshot = RevocationSnapshot(app_id, claims["version"], claims["iat"], [entry["sub"] for entry in revoked])
    if store is None:
        return snapshot
    held = store.load()
    if held is not None and held.app_id == snapshot.app_id and not _supersedes(snapshot, held):
        return held
    store.save(snapshot)
    return snapshot


def _supersedes(new: RevocationSnapshot, held: RevocationSnapshot) -> bool:
    """The service's versions only grow; of one version, a later issue may refresh the one held
    only if it lifts no revocation."""
    if new.version != held.version:
        return new.version > held.version
    return new.issued_at > held.issued_at and all(sub in new.revoked for sub in held.revoked)


def _offline_keys(keys: List[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Only the offline keys sign lists, when the set has any (a set copied before they existed has none)."""
    offline = [key for key in keys if key.get("purpose") == "offline"]
    return offline or keys


def _verify_signed(jws: str, keys: List[Mapping[str, Any]]) -> JsonObject:
    try:
        return verify_compact(jws, keys)
    except JwsError as error:
        if error.reason in ("alg_not_allowed", "no_key", "bad_signature"):
            raise LicenseFileError("bad_signature", "Not signed by a key of the key set") from error
        raise LicenseFileError("invalid_file", f"Not a signed file: {error}") from error


def _decrypt(jwe: str, license_key: Optional[str]) -> str:
    """Opens an encrypted file: JWE dir + A256GCM, the key HKDF-SHA256 over the canonical license key."""
    canonical = canonical_license_key(license_key) if isinstance(license_key, str) else None
    if canonical is None:
        raise LicenseFileError("decryption_failed", "The license file is encrypted: give license_key")
    header_part, encrypted_key, iv, ciphertext, tag = jwe.split(".")
    try:
        header = decode_json_part(header_part)
        if not isinstance(header, dict) or header.get("alg") != "dir" or header.get("enc") != "A256GCM":
            raise ValueError("not dir + A256GCM")
        if encrypted_key != "" or "zip" in header:
            raise ValueError("unexpected encrypted key or compression")
        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=_KEY_SALT, info=_KEY_INFO).derive(canonical.encode("utf-8"))
        plaintext = AESGCM(key).decrypt(
            b64url_decode(iv), b64url_decode(ciphertext) + b64url_decode(tag), header_part.encode("ascii")
        )
        return plaintext.decode("utf-8")
    except (ValueError, InvalidTag, UnicodeError, binascii.Error) as error:
        raise LicenseFileError("decryption_failed", "The license file does not open with this license key") from error


def _load_revocations(state: Optional[RevocationsInput]) -> Optional[RevocationSnapshot]:
    if state is None or isinstance(state, RevocationSnapshot):
        return state
    return state.load()


def _is_number(value: object) -> bool:
    return _number(value) is not None


def _number(value: object) -> Optional[float]:
    """A JSON number (JSON's true and false are no numbers, though Python's bool is an int)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")
