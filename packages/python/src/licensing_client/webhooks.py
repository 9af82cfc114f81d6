"""Webhook signature checks for a seller's backend, by the rules of the TypeScript SDK's
verifyWebhook: HMAC-SHA256 of the raw body with the endpoint secret (X-Webhook-Signature, the
``sha256=`` prefix optional), compared in constant time, and X-Webhook-Timestamp within the
tolerance of now, so an old delivery replayed is refused."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
from datetime import datetime, timezone
from typing import Any, Dict, Mapping, Optional, Union

from .errors import WebhookVerificationError

_DIGITS = re.compile(r"[0-9]+")


def verify_webhook(
    *,
    secret: str,
    body: Union[str, bytes],
    signature: Optional[str],
    timestamp: Optional[str],
    tolerance_seconds: int = 300,
    now: Optional[datetime] = None,
) -> Dict[str, Any]:
    """Checks a delivery and answers its envelope ``{id, type, data, timestamp, signature}``.
    Answer 401 when it raises, 2xx within 5 s when it does not, and process each id once.
    ``body`` must be the raw request body, not JSON parsed and written again."""
    if not isinstance(secret, str) or not secret:
        raise TypeError("secret: must be the endpoint's webhook secret")
    if not isinstance(body, (str, bytes)):
        raise TypeError("body: must be the raw request body as str or bytes")
    text = body if isinstance(body, str) else body.decode("utf-8", errors="replace")
    if not signature or not timestamp or not _DIGITS.fullmatch(timestamp):
        raise WebhookVerificationError("malformed", "Missing or malformed signature headers")
    expected = hmac.new(secret.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()
    given = re.sub(r"^sha256=", "", signature.strip())
    if not hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8")):
        raise WebhookVerificationError("bad_signature", "The signature does not match the body")
    moment = now if now is not None else datetime.now(timezone.utc)
    if abs(math.floor(moment.timestamp()) - int(timestamp)) > tolerance_seconds:
        raise WebhookVerificationError("stale_timestamp", "The delivery is too old (or from the future)")
    try:
        envelope = json.loads(text)
    except ValueError as error:
        raise WebhookVerificationError("malformed", "The body is not JSON") from error
    if not isinstance(envelope, dict):
        raise WebhookVerificationError("malformed", "The body is not a JSON object")
    return envelope


def verify_webhook_request(
    *, secret: str, body: Union[str, bytes], headers: Mapping[str, str], **options: Any
) -> Dict[str, Any]:
    """verify_webhook with the headers of a framework's request (any capitalisation)."""
    lower = {name.lower(): value for name, value in headers.items()}
    return verify_webhook(
        secret=secret,
        body=body,
        signature=lower.get("x-webhook-signature"),
        timestamp=lower.get("x-webhook-timestamp"),
        **options,
    )
