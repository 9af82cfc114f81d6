"""The online calls client software makes, through the standard library's urllib: verify,
validate-hardware, seat checkout (the heartbeat), checkin, usage consume and the update check. Every non-2xx answer becomes a
LicensingApiError read from the service's error body ``{"error": {code, message, details,
requestId}}``; no answer at all is status 0, code ``network_error``."""

from __future__ import annotations

import json
import re
import time
import uuid
import urllib.error
import urllib.request
from typing import Any, Dict, Optional, Tuple

from .errors import LicensingApiError
from .seat import SeatLease

JsonObject = Dict[str, Any]
_RETRIED_STATUSES = (429, 502, 503, 504)


class LicensingClient:
    """``base_url``: the service address, e.g. ``https://api.example.com`` (a trailing ``/v1`` is
    accepted). ``app_version`` (``"2.4.1"``), when given, is sent as X-App-Version with every call,
    so the seller sees in the license's timeline which version called. These calls repeat safely, so a network failure or a 429/503 is retried
    ``retries`` times, waiting as the answer's Retry-After says (capped at ``max_retry_seconds``)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_seconds: float = 30,
        retries: int = 2,
        retry_delay_seconds: float = 0.5,
        max_retry_seconds: float = 20,
        app_version: Optional[str] = None,
    ) -> None:
        if not isinstance(base_url, str) or not re.match(r"^https?://", base_url):
            raise TypeError("base_url: must be the service address, e.g. https://api.example.com")
        if app_version is not None and (
            not isinstance(app_version, str) or not re.fullmatch(r"[\x21-\x7e]{1,64}", app_version)
        ):
            raise ValueError("app_version: must be 1 to 64 visible ASCII characters, e.g. 2.4.1")
        self.app_version = app_version
        self.base = re.sub(r"/v1$", "", base_url.rstrip("/")) + "/v1"
        self.timeout = timeout_seconds
        self.retries = retries
        self.retry_delay = retry_delay_seconds
        self.max_retry = max_retry_seconds

    @property
    def jwks_uri(self) -> str:
        """The key set address, for LicenseTokenVerifier(jwks_uri=…)."""
        return f"{self.base}/licenses/jwks"

    def verify(self, key: str, app_id: str, hwuid: Optional[str] = None, **options: Any) -> JsonObject:
        """POST /licenses/verify: ``valid``, ``code`` when not, and a signed ``license_token``.
        Options: ``check_in`` (default True), ``name``, ``platform``."""
        return self._checking_in("/licenses/verify", _body(key, app_id, hwuid, options))

    def validate_hardware(self, key: str, hwuid: str, app_id: str, **options: Any) -> JsonObject:
        """POST /licenses/validate-hardware: whether this device may use the license."""
        return self._checking_in("/licenses/validate-hardware", _body(key, app_id, hwuid, options))

    def checkout(self, key: str, hwuid: str, app_id: str, **options: Any) -> JsonObject:
        """POST /licenses/checkout: takes a seat on a floating license, or renews the one held."""
        return self._checking_in("/licenses/checkout", _body(key, app_id, hwuid, options))

    def checkin(self, key: str, hwuid: str, app_id: Optional[str] = None) -> JsonObject:
        """POST /licenses/checkin: gives the seat back."""
        return self._post("/licenses/checkin", _body(key, app_id, hwuid, {}))

    def consume_usage(
        self,
        key: str,
        amount: int,
        app_id: Optional[str] = None,
        hwuid: Optional[str] = None,
        *,
        idempotency_key: Optional[str] = None,
    ) -> JsonObject:
        """POST /licenses/usage: consumes ``amount`` uses of the license's quota, all or none.
        Answers ``consumed``, ``code`` when nothing was (``usage_exhausted``, ``no_usage_quota``,
        …), and ``uses``, ``max_uses``, ``uses_remaining``, ``resets_at``. One Idempotency-Key
        (yours, or one made for this call) goes with every retry, so a retried call counts once."""
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 1_000_000:
            raise TypeError("amount: must be a whole number from 1 to 1000000")
        body = _body(key, app_id, hwuid, {})
        body["amount"] = amount
        return self._post("/licenses/usage", body, idempotency_key or str(uuid.uuid4()))

    def check_for_update(
        self,
        key: Optional[str],
        app_id: str,
        current_version: str,
        hwuid: Optional[str] = None,
        *,
        token: Optional[str] = None,
        channel: Optional[str] = None,
        platform: Optional[str] = None,
        arch: Optional[str] = None,
    ) -> Optional[JsonObject]:
        """POST /releases/upgrade: the newest release this license may have past
        ``current_version`` on ``channel`` (default stable) or a more stable one, as ``release``
        and its ``artifacts`` for the platform and architecture (each with an hour-long
        ``downloadUrl`` and its signed ``manifest`` for verify_artifact); None when up to date.
        The license is checked as verify checks it; a refusal raises LicensingApiError with its
        code (license_expired, channel_not_granted, device_limit_reached…). With ``token`` (the
        ``license_token`` of a valid verify) and ``key`` None, the token stands for the license
        and its device: checked as introspect checks it (token_expired, token_revoked…), then the
        license as it is now."""
        if not isinstance(current_version, str) or not current_version:
            raise TypeError("current_version: must be the version this software runs, e.g. 1.4.0")
        if key is not None and token is None:
            body = _body(key, app_id, hwuid, {})
        elif key is None and token is not None:
            if not isinstance(token, str) or not token:
                raise TypeError("token: must be a license token")
            if hwuid is not None:
                raise TypeError("hwuid: not sent with a token, which stands for its device")
            body = {"token": token, "appId": app_id}
        else:
            raise TypeError("key, token: give one of the two, not both")
        body["currentVersion"] = current_version
        for name, value in (("channel", channel), ("platform", platform), ("arch", arch)):
            if value is not None:
                body[name] = value
        status, raw = self._send("/releases/upgrade", body)
        return None if status == 204 else _json_object(raw, status)

    def seat(self, key: str, hwuid: str, app_id: str, interval_seconds: Optional[float] = None) -> SeatLease:
        """A seat for a ``with`` block: checked out, renewed in the background, given back on exit."""
        return SeatLease(self, key, hwuid, app_id, interval_seconds)

    def _checking_in(self, path: str, body: JsonObject) -> JsonObject:
        # A license past its check-in deadline answers check_in_overdue once and records the
        # check-in: asked again, it answers as the license now stands.
        answer = self._post(path, body)
        if answer.get("code") != "check_in_overdue" or body.get("checkIn") is False:
            return answer
        return self._post(path, body)

    def _post(self, path: str, body: JsonObject, idempotency_key: Optional[str] = None) -> JsonObject:
        status, raw = self._send(path, body, idempotency_key)
        return _json_object(raw, status)

    def _send(self, path: str, body: JsonObject, idempotency_key: Optional[str] = None) -> Tuple[int, bytes]:
        data = json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json", "content-type": "application/json"}
        if idempotency_key is not None:
            headers["idempotency-key"] = idempotency_key
        if self.app_version is not None:
            headers["x-app-version"] = self.app_version
        attempt = 0
        while True:
            attempt += 1
            request = urllib.request.Request(self.base + path, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                    return response.status, response.read()
            except urllib.error.HTTPError as error:
                text = error.read()
                if error.code in _RETRIED_STATUSES and attempt <= self.retries:
                    time.sleep(self._wait(attempt, error.headers.get("retry-after")))
                    continue
                raise _api_error(error.code, text, error.reason) from None
            except (urllib.error.URLError, OSError) as error:
                if attempt <= self.retries:
                    time.sleep(self._wait(attempt, None))
                    continue
                raise LicensingApiError(
                    0, "network_error", f"No answer from {self.base} after {attempt} attempts: {error}"
                ) from error

    def _wait(self, attempt: int, retry_after: Optional[str]) -> float:
        if retry_after is not None and retry_after.strip().isdigit():
            return float(min(int(retry_after), self.max_retry))
        return float(min(self.retry_delay * 2 ** (attempt - 1), self.max_retry))


def _body(key: str, app_id: Optional[str], hwuid: Optional[str], options: Dict[str, Any]) -> JsonObject:
    if not isinstance(key, str) or not key:
        raise TypeError("key: must be a license key")
    body: JsonObject = {"key": key}
    if app_id is not None:
        body["appId"] = app_id
    if hwuid is not None:
        body["hwuid"] = hwuid
    names = {"check_in": "checkIn", "name": "name", "platform": "platform"}
    for name, value in options.items():
        if name not in names:
            raise TypeError(f"{name}: not an option (check_in, name, platform)")
        body[names[name]] = value
    return body


def _json_object(raw: bytes, status: int) -> JsonObject:
    try:
        parsed = json.loads(raw.decode("utf-8")) if raw else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise LicensingApiError(status, "unexpected_response", "The answer is not the service's JSON")
    return parsed


def _api_error(status: int, raw: bytes, reason: str) -> LicensingApiError:
    try:
        error = json.loads(raw.decode("utf-8")).get("error") or {}
    except (ValueError, AttributeError):
        return LicensingApiError(status, "unexpected_response", f"HTTP {status} {reason}")
    return LicensingApiError(
        status,
        str(error.get("code") or "http_error"),
        str(error.get("message") or reason),
        error.get("requestId"),
        error.get("details"),
    )
