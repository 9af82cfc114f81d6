"""The conformance vectors (packages/conformance) through this SDK: every verdict must be the
one the TypeScript SDK reaches. The vectors come from CONFORMANCE_VECTORS (the folder the
service wrote them to), else from ../conformance/vectors when generated there."""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import unittest
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from licensing_client import (  # noqa: E402
    ClockState,
    LicenseTokenVerifier,
    LicensingError,
    MemoryStore,
    RevocationSnapshot,
    check_revocations,
    verify_artifact,
    verify_license_file,
    verify_webhook,
)

KINDS = ("license_token", "seat_token", "license_file", "revocation_list", "webhook", "release_manifest")


def vector_dir() -> Optional[Path]:
    given = os.environ.get("CONFORMANCE_VECTORS")
    if given:
        return Path(given)
    local = Path(__file__).resolve().parents[2] / "conformance" / "vectors"
    return local if (local / "license_token.json").exists() else None


def load_vectors(folder: Path) -> List[Dict[str, Any]]:
    vectors: List[Dict[str, Any]] = []
    for kind in KINDS:
        document = json.loads((folder / f"{kind}.json").read_text(encoding="utf-8"))
        vectors.extend(document["vectors"])
    return vectors


def outcome_of(vector: Dict[str, Any]) -> Dict[str, Any]:
    """The vector as a program using this SDK would check it."""
    context = vector["context"]
    keys = vector["keys"]
    now = datetime.fromtimestamp(context["now"], tz=timezone.utc)
    clock = ClockState.from_json(context["clock"]) if "clock" in context else None
    store: MemoryStore[RevocationSnapshot] = MemoryStore()
    outcome: Dict[str, Any] = {}
    try:
        claims = check(vector, keys, context, now, clock, store)
        outcome = {"valid": True, "claims": claims}
        if vector["kind"] == "revocation_list" and store.value is not None:
            outcome["revocations"] = store.value.to_json()
    except LicensingError as error:
        outcome = {"valid": False, "error": error.code}
    if clock is not None:
        outcome["clock"] = clock.to_json()
    return outcome


def check(
    vector: Dict[str, Any],
    keys: Dict[str, Any],
    context: Dict[str, Any],
    now: datetime,
    clock: Optional[ClockState],
    store: MemoryStore[RevocationSnapshot],
) -> Dict[str, Any]:
    kind = vector["kind"]
    given = vector["input"]
    if kind in ("license_token", "seat_token"):
        verifier = LicenseTokenVerifier(context["appId"], key_set=keys["jwks"], now=lambda: now, clock=clock)
        return verifier.verify(given["token"])
    if kind == "license_file":
        revocations = context.get("revocations")
        return verify_license_file(
            given["file"],
            key_set=keys["jwks"],
            app_id=context["appId"],
            hwuid=context["hwuid"],
            nonce=context.get("nonce"),
            license_key=context.get("licenseKey"),
            revocations=RevocationSnapshot.from_json(revocations) if revocations else None,
            clock=clock,
            now=lambda: now,
        )
    if kind == "revocation_list":
        held = context.get("revocations")
        store.value = RevocationSnapshot.from_json(held) if held else None
        check_revocations(given["list"], key_set=keys["jwks"], app_id=context["appId"], store=store, clock=clock, now=lambda: now)
        return {}
    if kind == "release_manifest":
        # A file object read in chunks, as a downloaded file is checked.
        return verify_artifact(
            io.BytesIO(base64.b64decode(given["artifact"])),
            given["manifest"],
            key_set=keys["jwks"],
            app_id=context["appId"],
            version=context.get("version"),
            filename=context.get("filename"),
        )
    headers = given["headers"]
    return verify_webhook(
        secret=keys["secret"],
        body=given["body"],
        signature=headers.get("x-webhook-signature"),
        timestamp=headers.get("x-webhook-timestamp"),
        now=now,
    )


def disagreement(vector: Dict[str, Any], outcome: Dict[str, Any]) -> Optional[str]:
    expected = vector["expect"]
    if not expected["valid"]:
        if outcome["valid"] or outcome["error"] != expected["error"]:
            return f"expected {expected['error']}, got {outcome.get('error', 'valid')}"
    else:
        if not outcome["valid"]:
            return f"expected valid, got {outcome['error']}"
        for claim, value in expected.get("claims", {}).items():
            if outcome["claims"].get(claim) != value:
                return f"claim {claim}: expected {value!r}, got {outcome['claims'].get(claim)!r}"
        if "revocations" in expected and outcome.get("revocations") != expected["revocations"]:
            return f"revocations: expected {expected['revocations']}, got {outcome.get('revocations')}"
    if "clock" in expected and outcome.get("clock") != expected["clock"]:
        return f"clock: expected {expected['clock']}, got {outcome.get('clock')}"
    return None


class ConformanceTest(unittest.TestCase):
    def test_every_vector_gets_its_verdict(self) -> None:
        folder = vector_dir()
        if folder is None:
            self.skipTest("no vectors: set CONFORMANCE_VECTORS or run packages/conformance/src/generate.ts")
        vectors = load_vectors(folder)
        self.assertGreater(len(vectors), 0)
        wrong = []
        for vector in vectors:
            problem = disagreement(vector, outcome_of(vector))
            if problem is not None:
                wrong.append(f"{vector['name']}: {problem}")
        print(f"conformance: {len(vectors)} vectors, {len(wrong)} wrong", file=sys.stderr)
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main()
