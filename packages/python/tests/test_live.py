"""Online calls against a real service, started by packages/client/src/conformance.test.ts,
which passes its address and a license in LICENSING_LIVE_* (skipped without them)."""

from __future__ import annotations

import os
import sys
import unittest
import urllib.request
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from licensing_client import (  # noqa: E402
    ArtifactVerificationError,
    LicenseTokenError,
    LicenseTokenVerifier,
    LicensingApiError,
    LicensingClient,
    LicensingError,
    machine_fingerprint,
    verify_artifact,
)

URL = os.environ.get("LICENSING_LIVE_URL")


@unittest.skipUnless(URL, "no service: LICENSING_LIVE_URL is not set")
class LiveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = LicensingClient(str(URL), retries=0, app_version="python-live/1.0")
        self.app_id = os.environ["LICENSING_LIVE_APP_ID"]
        self.key = os.environ["LICENSING_LIVE_KEY"]
        self.license_id = os.environ["LICENSING_LIVE_LICENSE_ID"]
        self.hwuid = machine_fingerprint(self.app_id)

    def test_verify_answers_a_token_the_verifier_checks_with_the_fetched_key_set(self) -> None:
        answer = self.client.verify(self.key, self.app_id, self.hwuid)
        self.assertTrue(answer["valid"], answer)
        fetched: List[Dict[str, Any]] = []
        verifier = LicenseTokenVerifier(self.app_id, jwks_uri=self.client.jwks_uri, on_key_set=fetched.append)
        claims = verifier.verify(answer["license_token"])
        self.assertEqual(claims["sub"], self.license_id)
        self.assertEqual(len(fetched), 1, "the key set was fetched once, for storing")
        other = LicenseTokenVerifier("00000000-0000-4000-8000-000000000000", key_set=fetched[0])
        with self.assertRaises(LicenseTokenError) as refused:
            other.verify(answer["license_token"])
        self.assertEqual(refused.exception.code, "wrong_audience")

    def test_validate_hardware_knows_the_device_verify_bound(self) -> None:
        self.client.verify(self.key, self.app_id, self.hwuid)
        self.assertTrue(self.client.validate_hardware(self.key, self.hwuid, self.app_id)["valid"])
        unknown = self.client.verify("AAAAA-AAAAA-AAAAA-AAAAA-AAAAA-AAAAA", self.app_id, self.hwuid)
        self.assertFalse(unknown["valid"])
        self.assertIsInstance(unknown.get("code"), str)

    def test_a_seat_is_taken_refused_to_a_second_device_and_given_back(self) -> None:
        key = os.environ["LICENSING_LIVE_FLOATING_KEY"]
        taken = self.client.checkout(key, self.hwuid, self.app_id)
        self.assertTrue(taken["valid"], taken)
        self.assertIn("license_token", taken)
        refused = self.client.checkout(key, "another-device", self.app_id)
        self.assertEqual((refused["valid"], refused.get("code")), (False, "no_seat_available"))
        self.assertTrue(self.client.checkin(key, self.hwuid, self.app_id)["released"])
        self.assertTrue(self.client.checkout(key, "another-device", self.app_id)["valid"])

    def test_a_seat_held_for_a_block_is_renewed_and_given_back_on_exit(self) -> None:
        key = os.environ["LICENSING_LIVE_SEAT_KEY"]
        with self.client.seat(key, self.hwuid, self.app_id, interval_seconds=3600) as seat:
            self.assertTrue(seat.answer["valid"])
            first_end = seat.answer["lease_expires_at"]
            self.assertTrue(seat.beat()["valid"], "a heartbeat renews the seat")
            self.assertGreaterEqual(seat.answer["lease_expires_at"], first_end)
            with self.assertRaises(LicensingError) as refused:
                with self.client.seat(key, "another-device", self.app_id):
                    pass
            self.assertEqual(refused.exception.code, "no_seat_available")
        self.assertTrue(self.client.checkout(key, "another-device", self.app_id)["valid"], "given back on exit")

    def test_an_update_is_offered_and_the_downloaded_file_checks_against_its_manifest(self) -> None:
        update = self.client.check_for_update(self.key, self.app_id, "1.0.0", self.hwuid, platform="linux")
        assert update is not None
        version = update["release"]["version"]
        file = update["artifacts"][0]
        # The link is built on the service's public address; the test service listens elsewhere.
        url = file["downloadUrl"].replace(os.environ["LICENSING_LIVE_PUBLIC_API"], self.client.base, 1)
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310
            manifest = verify_artifact(
                response,
                file["manifest"],
                app_id=self.app_id,
                jwks_uri=self.client.jwks_uri,
                version=version,
                filename=file["filename"],
            )
        self.assertEqual((manifest["sha256"], manifest["size"]), (file["sha256"], file["size"]))
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310
            changed = bytearray(response.read())
        changed[0] ^= 1
        with self.assertRaises(ArtifactVerificationError) as refused:
            verify_artifact(bytes(changed), file["manifest"], app_id=self.app_id, jwks_uri=self.client.jwks_uri)
        self.assertEqual(refused.exception.code, "digest_mismatch")
        self.assertIsNone(self.client.check_for_update(self.key, self.app_id, version, self.hwuid, platform="linux"))
        with self.assertRaises(LicensingApiError) as invalid:
            self.client.check_for_update(self.key, self.app_id, "latest", self.hwuid)
        self.assertEqual((invalid.exception.status, invalid.exception.code), (400, "validation_failed"))
        # A license token from verify stands for the key and the device.
        token = self.client.verify(self.key, self.app_id, self.hwuid)["license_token"]
        by_token = self.client.check_for_update(None, self.app_id, "1.0.0", token=token, platform="linux")
        assert by_token is not None
        self.assertEqual(by_token["release"]["version"], version)
        head, _, signature = token.split(".")
        with self.assertRaises(LicensingApiError) as forged:
            self.client.check_for_update(None, self.app_id, "1.0.0", token=f"{head}.{head}.{signature}")
        self.assertEqual((forged.exception.status, forged.exception.code), (403, "invalid_signature"))
        with self.assertRaises(TypeError):
            self.client.check_for_update(self.key, self.app_id, "1.0.0", token=token)

    def test_a_refused_request_raises_the_service_code(self) -> None:
        with self.assertRaises(LicensingApiError) as refused:
            self.client.verify(self.key, "not-a-uuid", self.hwuid)
        self.assertEqual((refused.exception.status, refused.exception.code), (400, "validation_failed"))
        self.assertTrue(any(d.get("field") == "appId" for d in refused.exception.details), refused.exception.details)

    def test_no_answer_is_a_network_error(self) -> None:
        closed = LicensingClient("http://127.0.0.1:9", retries=0, timeout_seconds=5)
        with self.assertRaises(LicensingApiError) as refused:
            closed.verify(self.key, self.app_id)
        self.assertEqual((refused.exception.status, refused.exception.code), (0, "network_error"))


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(URL, "no service: LICENSING_LIVE_URL is not set")
class LiveUsageTest(unittest.TestCase):
    def test_uses_are_consumed_all_or_none_and_a_repeated_call_counts_once(self) -> None:
        client = LicensingClient(str(URL), retries=0)
        app_id = os.environ["LICENSING_LIVE_APP_ID"]
        key = os.environ["LICENSING_LIVE_USAGE_KEY"]
        first = client.consume_usage(key, 3, app_id, idempotency_key="python-live-usage-1")
        self.assertTrue(first["consumed"], first)
        self.assertEqual((first["uses"], first["max_uses"], first["uses_remaining"]), (3, 5, 2))
        repeated = client.consume_usage(key, 3, app_id, idempotency_key="python-live-usage-1")
        self.assertEqual(repeated["uses"], 3, "the same Idempotency-Key counts once")
        refused = client.consume_usage(key, 3, app_id)
        self.assertFalse(refused["consumed"])
        self.assertEqual(refused["code"], "usage_exhausted")
        self.assertEqual(refused["uses"], 3, "a refused consume leaves the count as it was")
        with self.assertRaises(TypeError):
            client.consume_usage(key, 0, app_id)
