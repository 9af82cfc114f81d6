"""The client's options, checked before any call is made."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from licensing_client import LicensingClient  # noqa: E402


class ClientOptionsTest(unittest.TestCase):
    def test_an_app_version_must_be_short_visible_ascii(self) -> None:
        for version in ("two words", "9" * 65, "é1", ""):
            with self.assertRaises(ValueError) as refused:
                LicensingClient("https://api.example.com", app_version=version)
            self.assertIn("app_version", str(refused.exception))
        self.assertEqual(LicensingClient("https://api.example.com", app_version="2.4.1").app_version, "2.4.1")


if __name__ == "__main__":
    unittest.main()
