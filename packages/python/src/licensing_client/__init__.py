"""Client for the licensing service: license tokens, license files and revocation lists checked
offline, the clock-rollback guard, webhook signature checks, the update check and release files
checked against their signed manifests. Errors carry the service's codes."""

from .artifacts import RELEASE_MANIFEST_USE, verify_artifact
from .client import LicensingClient
from .clock import ClockState, MemoryStore, StateStore
from .errors import (
    ArtifactVerificationError,
    LicenseFileError,
    LicenseTokenError,
    LicensingApiError,
    LicensingError,
    WebhookVerificationError,
)
from .fingerprint import fingerprint_of, machine_fingerprint
from .license_file import (
    LICENSE_FILE_USE,
    REVOCATION_LIST_USE,
    RevocationSnapshot,
    canonical_license_key,
    check_revocations,
    create_offline_activation_request,
    verify_license_file,
)
from .seat import SeatLease
from .tokens import TOKEN_USE, LicenseTokenVerifier, fetch_key_set
from .webhooks import verify_webhook, verify_webhook_request

__version__ = "0.1.0"

__all__ = [
    "LICENSE_FILE_USE",
    "RELEASE_MANIFEST_USE",
    "REVOCATION_LIST_USE",
    "TOKEN_USE",
    "ArtifactVerificationError",
    "ClockState",
    "LicenseFileError",
    "LicenseTokenError",
    "LicenseTokenVerifier",
    "LicensingApiError",
    "LicensingClient",
    "LicensingError",
    "MemoryStore",
    "RevocationSnapshot",
    "SeatLease",
    "StateStore",
    "WebhookVerificationError",
    "canonical_license_key",
    "check_revocations",
    "create_offline_activation_request",
    "fetch_key_set",
    "fingerprint_of",
    "machine_fingerprint",
    "verify_artifact",
    "verify_license_file",
    "verify_webhook",
    "verify_webhook_request",
]
