"""Compact JWS checks against a JSON Web Key Set, as the service signs: RS256 with an RSA key,
EdDSA with an Ed25519 key. The key set decides the algorithm, never the token: a key answers
only a header whose ``alg`` is the key's own and whose ``kid`` is its own."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Dict, List, Mapping, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers

SIGNING_ALGORITHMS = ("RS256", "EdDSA")
_KEY_TYPE = {"RS256": "RSA", "EdDSA": "OKP"}
_MIN_RSA_BITS = 2048

JsonObject = Dict[str, Any]


class JwsError(Exception):
    """Why a JWS was not accepted; callers map ``reason`` to their own codes.

    Reasons: ``malformed`` (not a compact JWS, or its parts do not decode), ``alg_not_allowed``
    (a header alg other than RS256 and EdDSA), ``no_key`` (no key of the set has this kid, kind
    and alg), ``bad_signature`` (a key matched, the signature did not).
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def b64url_decode(part: str) -> bytes:
    if not isinstance(part, str) or any(c not in _B64URL for c in part) or len(part) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


_B64URL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def decode_json_part(part: str) -> Any:
    return json.loads(b64url_decode(part).decode("utf-8"))


def verify_compact(jws: str, keys: Sequence[Mapping[str, Any]]) -> JsonObject:
    """Checks the signature of a compact JWS; answers its payload as a JSON object."""
    parts = jws.split(".")
    if len(parts) != 3:
        raise JwsError("malformed", "Invalid Compact JWS")
    encoded_header, encoded_payload, encoded_signature = parts
    try:
        header = decode_json_part(encoded_header)
    except (ValueError, UnicodeDecodeError, binascii.Error) as error:
        raise JwsError("malformed", f"JWS Protected Header is invalid: {error}") from error
    if not isinstance(header, dict):
        raise JwsError("malformed", "JWS Protected Header is invalid")
    alg = header.get("alg")
    if not isinstance(alg, str) or not alg:
        raise JwsError("malformed", 'JWS "alg" (Algorithm) Header Parameter missing or invalid')
    if alg not in SIGNING_ALGORITHMS:
        raise JwsError("alg_not_allowed", '"alg" (Algorithm) Header Parameter value not allowed')
    candidates = [key for key in keys if _usable(key, alg, header.get("kid", _ABSENT))]
    if not candidates:
        raise JwsError("no_key", "no applicable key found in the JSON Web Key Set")
    signing_input = f"{encoded_header}.{encoded_payload}".encode("ascii", errors="strict")
    try:
        signature = b64url_decode(encoded_signature)
    except (ValueError, binascii.Error) as error:
        raise JwsError("malformed", "the signature is not base64url") from error
    if not any(_verifies(key, alg, signature, signing_input) for key in candidates):
        raise JwsError("bad_signature", "signature verification failed")
    try:
        payload = json.loads(b64url_decode(encoded_payload).decode("utf-8"))
    except (ValueError, UnicodeDecodeError, binascii.Error) as error:
        raise JwsError("malformed", f"the payload is not JSON: {error}") from error
    if not isinstance(payload, dict):
        raise JwsError("malformed", "the payload is not a JSON object")
    return payload


_ABSENT = object()


def _usable(key: Mapping[str, Any], alg: str, kid: object) -> bool:
    if not isinstance(key, Mapping) or key.get("kty") != _KEY_TYPE[alg]:
        return False
    if kid is not _ABSENT and (not isinstance(kid, str) or key.get("kid") != kid):
        return False
    if "alg" in key and key.get("alg") != alg:
        return False
    if "use" in key and key.get("use") != "sig":
        return False
    key_ops = key.get("key_ops")
    if key_ops is not None and (not isinstance(key_ops, list) or "verify" not in key_ops):
        return False
    return alg != "EdDSA" or key.get("crv") == "Ed25519"


def _verifies(key: Mapping[str, Any], alg: str, signature: bytes, signing_input: bytes) -> bool:
    try:
        if alg == "RS256":
            n = int.from_bytes(b64url_decode(str(key["n"])), "big")
            e = int.from_bytes(b64url_decode(str(key["e"])), "big")
            if n.bit_length() < _MIN_RSA_BITS:
                return False
            RSAPublicNumbers(e, n).public_key().verify(
                signature, signing_input, padding.PKCS1v15(), hashes.SHA256()
            )
        else:
            Ed25519PublicKey.from_public_bytes(b64url_decode(str(key["x"]))).verify(
                signature, signing_input
            )
        return True
    except (InvalidSignature, KeyError, ValueError, binascii.Error):
        return False


def key_list(key_set: Any) -> List[Mapping[str, Any]]:
    """The keys of a set, or TypeError when it is not ``{"keys": [...]}``."""
    keys = key_set.get("keys") if isinstance(key_set, Mapping) else None
    if not isinstance(keys, list):
        raise TypeError('key_set: must be a key set ({"keys": [...]})')
    return [key for key in keys if isinstance(key, Mapping)]
