"""License tokens checked offline, by the rules of the TypeScript SDK's LicenseTokenVerifier:
RS256 or EdDSA, each only with a key of its own kind, key chosen by kid, aud and token_use
checked, 30 seconds of clock leeway."""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, List, Mapping, Optional

from .clock import ClockInput, Now, now_ms, vouch_for_clock
from .errors import LicenseTokenError
from .jws import JsonObject, JwsError, key_list, verify_compact

TOKEN_USE = "service_license_v1"
_REQUIRED = ("sub", "exp", "iat", "jti")


class LicenseTokenVerifier:
    """Checks license tokens. The key set comes from ``key_set`` (stored: works with no network),
    from ``jwks_uri`` (fetched, cached for ``cache_seconds``), or both: the stored set first,
    fetched again only for a kid it does not know, which is how a rotated key is learnt."""

    def __init__(
        self,
        app_id: str,
        *,
        jwks_uri: Optional[str] = None,
        key_set: Optional[Mapping[str, Any]] = None,
        on_key_set: Optional[Callable[[JsonObject], None]] = None,
        issuer: Optional[str] = None,
        clock_tolerance_seconds: int = 30,
        cache_seconds: float = 300,
        refetch_cooldown_seconds: float = 10,
        now: Optional[Now] = None,
        clock: Optional[ClockInput] = None,
        timeout_seconds: float = 10,
    ) -> None:
        if not isinstance(app_id, str) or not app_id:
            raise TypeError("app_id: must be your app id (tokens for other apps are refused)")
        if jwks_uri is None and key_set is None:
            raise TypeError("jwks_uri or key_set: give the key set address, a stored key set, or both")
        self.app_id = app_id
        self.jwks_uri = jwks_uri
        self.issuer = issuer
        self.tolerance = clock_tolerance_seconds
        self.cache_seconds = cache_seconds
        self.cooldown = refetch_cooldown_seconds
        self.now = now
        self.clock = clock
        self.timeout = timeout_seconds
        self._stored = key_set is not None
        self._on_key_set = on_key_set
        self._lock = threading.Lock()
        self._fetched_at = -math.inf
        self._last_try = -math.inf
        self._key_set: Optional[JsonObject] = None
        if key_set is not None:
            self._use(dict(key_set))

    @property
    def current_key_set(self) -> Optional[JsonObject]:
        return self._key_set

    def refresh(self) -> JsonObject:
        """Fetches the key set from ``jwks_uri`` now and uses it from then on."""
        if self.jwks_uri is None:
            raise LicenseTokenError("key_set_unavailable", "No jwks_uri: this verifier works offline only")
        with self._lock:
            self._last_try = time.monotonic()
            key_set = fetch_key_set(self.jwks_uri, timeout_seconds=self.timeout)
            self._use(key_set)
            self._fetched_at = time.monotonic()
        if self._on_key_set is not None:
            self._on_key_set(key_set)
        return key_set

    def verify(self, token: str) -> JsonObject:
        """The token's claims, or LicenseTokenError with the reason."""
        if not isinstance(token, str) or not token:
            raise LicenseTokenError("invalid_token", "The license token is missing (expected a JWT string)")
        payload = self._verified_payload(token)
        claims = self._checked_claims(payload)
        if claims.get("token_use") != TOKEN_USE:
            raise LicenseTokenError("wrong_token_use", "Not a license token (token_use)")
        iat = _number(claims.get("iat"))
        if self.clock is not None and iat is not None:
            vouch_for_clock(self.clock, int(iat * 1000), now_ms(self.now), self.tolerance * 1000)
        return claims

    def _verified_payload(self, token: str) -> JsonObject:
        online = self.jwks_uri is not None
        stale = time.monotonic() - self._fetched_at > self.cache_seconds
        if online and (self._key_set is None or (stale and not self._stored and self._cooled())):
            try:
                self.refresh()
            except LicenseTokenError:
                if self._key_set is None:
                    raise
        try:
            return verify_compact(token, self._token_keys())
        except JwsError as error:
            if error.reason == "no_key" and online and self._cooled():
                self.refresh()
                try:
                    return verify_compact(token, self._token_keys())
                except JwsError as again:
                    raise _token_error(again) from again
            raise _token_error(error) from error

    def _checked_claims(self, claims: JsonObject) -> JsonObject:
        presence = list(_REQUIRED) + ["aud"] + (["iss"] if self.issuer is not None else [])
        for claim in reversed(presence):
            if claim not in claims:
                code = "wrong_audience" if claim == "aud" else "invalid_token"
                raise LicenseTokenError(code, f'The license token is not valid: missing required "{claim}" claim')
        if self.issuer is not None and claims.get("iss") != self.issuer:
            raise LicenseTokenError("invalid_token", 'The license token is not valid: unexpected "iss" claim value')
        aud = claims.get("aud")
        if not (aud == self.app_id or (isinstance(aud, list) and self.app_id in aud)):
            raise LicenseTokenError("wrong_audience", "The license token was issued for another app")
        now = now_ms(self.now) // 1000
        for claim in ("iat", "nbf", "exp"):
            if claim in claims and not _is_number(claims[claim]):
                raise LicenseTokenError("invalid_token", f'The license token is not valid: "{claim}" claim must be a number')
        if "nbf" in claims and claims["nbf"] > now + self.tolerance:
            raise LicenseTokenError("invalid_token", "The license token is not valid yet (nbf)")
        if "exp" in claims and claims["exp"] <= now - self.tolerance:
            raise LicenseTokenError("token_expired", "The license token has expired")
        return claims

    def _token_keys(self) -> List[Mapping[str, Any]]:
        # The offline key signs license files and revocation lists, never a license token.
        return [key for key in key_list(self._key_set or {"keys": []}) if key.get("purpose") != "offline"]

    def _use(self, key_set: JsonObject) -> None:
        try:
            key_list(key_set)
        except TypeError as error:
            raise LicenseTokenError("key_set_unavailable", f"{error}") from error
        self._key_set = key_set

    def _cooled(self) -> bool:
        return time.monotonic() - self._last_try >= self.cooldown


def _is_number(value: object) -> bool:
    return _number(value) is not None


def _number(value: object) -> Optional[float]:
    """A JSON number (JSON's true and false are no numbers, though Python's bool is an int)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def _token_error(error: JwsError) -> LicenseTokenError:
    if error.reason in ("no_key", "bad_signature"):
        return LicenseTokenError("invalid_signature", "The license token is not signed by a published key")
    return LicenseTokenError("invalid_token", f"The license token is not valid: {error}")


def fetch_key_set(jwks_uri: str, *, timeout_seconds: float = 10) -> Dict[str, Any]:
    """Fetches a key set once (GET ``jwks_uri``), to store and hand to a verifier later. Raises
    LicenseTokenError ``key_set_unavailable`` when there is no usable answer."""
    request = urllib.request.Request(jwks_uri, headers={"accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_seconds) as response:  # noqa: S310
            body = json.loads(response.read().decode("utf-8"))
    except Exception as error:  # network, HTTP status, JSON: all mean no key set
        raise LicenseTokenError(
            "key_set_unavailable", f"The key set could not be fetched from {jwks_uri}: {error}"
        ) from error
    if not isinstance(body, dict) or not isinstance(body.get("keys"), list):
        raise LicenseTokenError("key_set_unavailable", 'the key set answer is not a key set ({"keys": [...]})')
    return body
