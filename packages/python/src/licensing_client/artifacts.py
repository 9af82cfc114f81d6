"""Release files checked against their signed manifests, by the rules of the TypeScript SDK's
verifyArtifact: the manifest's signature by an offline key of the key set, its token_use, app,
version and file name, then the file's size and SHA-256, read chunk by chunk."""

from __future__ import annotations

import hashlib
import os
import re
from typing import IO, Any, Iterable, Iterator, List, Mapping, Optional, Union

from .errors import ArtifactVerificationError, LicensingError
from .jws import JsonObject, JwsError, key_list, verify_compact
from .tokens import fetch_key_set

RELEASE_MANIFEST_USE = "service_release_manifest_v1"

#: The file: its bytes, a path, a binary file object, or an iterable of byte chunks.
ArtifactInput = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", IO[bytes], Iterable[bytes]]

_CHUNK = 1024 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MAX_SAFE_INTEGER = 2**53 - 1


def verify_artifact(
    artifact: ArtifactInput,
    manifest: str,
    *,
    app_id: str,
    key_set: Optional[Mapping[str, Any]] = None,
    jwks_uri: Optional[str] = None,
    version: Optional[str] = None,
    filename: Optional[str] = None,
    issuer: Optional[str] = None,
    timeout_seconds: float = 10,
) -> JsonObject:
    """Checks a downloaded file against its manifest (the ``manifest`` of each file of an update
    check or download answer). The key set is ``key_set`` (shipped with your software, or stored
    from GET /licenses/jwks), else fetched from ``jwks_uri``; with both, the address is asked only
    when the stored set lacks the manifest's key. ``version`` and ``filename``, when given, must be
    the manifest's. Raises ArtifactVerificationError with the reason; answers the manifest's claims.
    A path or file object is read in chunks of a MiB, so a file of any size costs one chunk."""
    claims = _check_manifest(manifest, app_id, key_set, jwks_uri, version, filename, issuer, timeout_seconds)
    size = 0
    digest = hashlib.sha256()
    for chunk in _chunks(artifact):
        size += len(chunk)
        if size > claims["size"]:
            raise ArtifactVerificationError(
                "size_mismatch", f"The file is larger than the manifest's {claims['size']} bytes"
            )
        digest.update(chunk)
    if size != claims["size"]:
        raise ArtifactVerificationError("size_mismatch", f"The file has {size} bytes, the manifest {claims['size']}")
    if digest.hexdigest() != claims["sha256"]:
        raise ArtifactVerificationError("digest_mismatch", "The file's SHA-256 is not the manifest's")
    return claims


def _check_manifest(
    manifest: str,
    app_id: str,
    key_set: Optional[Mapping[str, Any]],
    jwks_uri: Optional[str],
    version: Optional[str],
    filename: Optional[str],
    issuer: Optional[str],
    timeout_seconds: float,
) -> JsonObject:
    if not isinstance(app_id, str) or not app_id:
        raise TypeError("app_id: must be your app id")
    if key_set is None and jwks_uri is None:
        raise TypeError("key_set or jwks_uri: give the key set, its address, or both")
    if not isinstance(manifest, str) or not manifest.strip():
        raise ArtifactVerificationError("invalid_manifest", "The manifest is missing")
    claims = _verify_signature(manifest.strip(), key_set, jwks_uri, timeout_seconds)
    if claims.get("token_use") != RELEASE_MANIFEST_USE:
        raise ArtifactVerificationError("wrong_token_use", "Not a release manifest (token_use)")
    size = claims.get("size")
    sha256 = claims.get("sha256")
    if (
        not isinstance(claims.get("app"), str)
        or not isinstance(claims.get("version"), str)
        or not isinstance(claims.get("filename"), str)
        or not _whole_size(size)
        or not isinstance(sha256, str)
        or not _SHA256.fullmatch(sha256)
    ):
        raise ArtifactVerificationError("invalid_manifest", "The manifest lacks app, version, filename, size or sha256")
    if issuer is not None and claims.get("iss") != issuer:
        raise ArtifactVerificationError("invalid_manifest", "The manifest was signed by another service")
    if claims["app"] != app_id:
        raise ArtifactVerificationError("wrong_app", "The manifest is of another app's file")
    if version is not None and claims["version"] != version:
        raise ArtifactVerificationError("wrong_version", f"The manifest is of version {claims['version']}")
    if filename is not None and claims["filename"] != filename:
        raise ArtifactVerificationError("wrong_file", f"The manifest is of {claims['filename']}")
    claims["size"] = int(size)  # type: ignore[arg-type]
    return claims


def _verify_signature(
    manifest: str, key_set: Optional[Mapping[str, Any]], jwks_uri: Optional[str], timeout_seconds: float
) -> JsonObject:
    def fetched() -> List[Mapping[str, Any]]:
        try:
            return _offline_keys(key_list(fetch_key_set(str(jwks_uri), timeout_seconds=timeout_seconds)))
        except LicensingError as error:
            raise ArtifactVerificationError("key_set_unavailable", str(error)) from error

    try:
        try:
            return verify_compact(manifest, _offline_keys(key_list(key_set)) if key_set is not None else fetched())
        except JwsError as error:
            # A shipped set that lacks the key (a rotation since): the service's current set may have it.
            if error.reason != "no_key" or key_set is None or jwks_uri is None:
                raise
            return verify_compact(manifest, fetched())
    except JwsError as error:
        if error.reason in ("alg_not_allowed", "no_key", "bad_signature"):
            raise ArtifactVerificationError(
                "invalid_signature", "The manifest is not signed by a key of the key set"
            ) from error
        raise ArtifactVerificationError("invalid_manifest", f"Not a signed manifest: {error}") from error


def _offline_keys(keys: List[Mapping[str, Any]]) -> List[Mapping[str, Any]]:
    """Only offline keys sign manifests, when the set has any (a set copied before they existed has none)."""
    offline = [key for key in keys if key.get("purpose") == "offline"]
    return offline or keys


def _whole_size(value: object) -> bool:
    """A JSON number that is a whole number of bytes (JSON's true and false are no numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return float(value).is_integer() and 0 <= value <= _MAX_SAFE_INTEGER


def _chunks(artifact: ArtifactInput) -> Iterator[bytes]:
    if isinstance(artifact, (bytes, bytearray, memoryview)):
        yield bytes(artifact)
    elif isinstance(artifact, (str, os.PathLike)):
        with open(artifact, "rb") as file:
            yield from _read(file)
    elif hasattr(artifact, "read"):
        yield from _read(artifact)  # type: ignore[arg-type]
    elif isinstance(artifact, Iterable):
        for chunk in artifact:
            if not isinstance(chunk, (bytes, bytearray, memoryview)):
                raise TypeError("artifact: an iterable must give bytes")
            yield bytes(chunk)
    else:
        raise TypeError("artifact: must be bytes, a path, a binary file or an iterable of bytes")


def _read(file: IO[bytes]) -> Iterator[bytes]:
    while True:
        chunk = file.read(_CHUNK)
        if not chunk:
            return
        if not isinstance(chunk, (bytes, bytearray)):
            raise TypeError("artifact: a file must be opened in binary mode")
        yield bytes(chunk)
