"""The errors the SDK raises. Each carries ``code``: the same string the service and the
TypeScript SDK use, so a program can branch on it in any language."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class LicensingError(Exception):
    """Base class: every error of this package has a machine-readable ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {str(self)!r})"


class LicenseTokenError(LicensingError):
    """A license token that must not be trusted. Codes: ``invalid_token``,
    ``invalid_signature``, ``token_expired``, ``wrong_audience``, ``wrong_token_use``,
    ``key_set_unavailable``."""


class LicenseFileError(LicensingError):
    """A license file or revocation list that must not be trusted. Codes: ``invalid_file``,
    ``decryption_failed``, ``bad_signature``, ``wrong_token_use``, ``wrong_app``,
    ``wrong_device``, ``wrong_nonce``, ``not_yet_valid``, ``expired``, ``clock_rollback``,
    ``check_in_overdue``, ``revoked``."""


class ArtifactVerificationError(LicensingError):
    """A downloaded file (or its manifest) that must not be trusted. Codes: ``invalid_manifest``,
    ``invalid_signature``, ``wrong_token_use``, ``wrong_app``, ``wrong_version``, ``wrong_file``,
    ``size_mismatch``, ``digest_mismatch``, ``key_set_unavailable``."""


class WebhookVerificationError(LicensingError):
    """A webhook delivery that must be answered 401. Codes: ``bad_signature``,
    ``stale_timestamp``, ``malformed``."""


class LicensingApiError(LicensingError):
    """An error answer from the service: its HTTP status, the error body's code and request
    id. A call that got no answer at all has status 0 and code ``network_error``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        request_id: Optional[str] = None,
        details: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        super().__init__(code, message)
        self.status = status
        self.request_id = request_id
        self.details = details or []
