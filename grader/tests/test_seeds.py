"""Seeds drawn from the system's entropy: in range, fresh each time, from `secrets`; the notice
for a secret that is no longer used."""

import unittest
from pathlib import Path
from unittest import mock

from grader import seeds


class DrawSeedTest(unittest.TestCase):
    def test_in_range_and_fresh(self):
        drawn = [seeds.draw_seed() for _ in range(64)]
        self.assertTrue(all(0 <= s <= seeds.MAX_SEED for s in drawn))
        self.assertEqual(len(set(drawn)), len(drawn))   # 63 random bits: no repeats

    def test_from_the_systems_entropy(self):
        with mock.patch.object(seeds.secrets, "randbits", return_value=42) as randbits:
            self.assertEqual(seeds.draw_seed(), 42)
        randbits.assert_called_once_with(63)

    def test_nothing_derived_any_more(self):
        # The seed no longer depends on anything a student can know (their file, the lab).
        self.assertFalse(hasattr(seeds, "derive_seed"))
        self.assertFalse(hasattr(seeds, "secret_from_env"))


class SecretNoticeTest(unittest.TestCase):
    def test_no_secret_no_notice(self):
        self.assertIsNone(seeds.secret_notice(None, {}))
        self.assertIsNone(seeds.secret_notice(None, {"LABS_GRADER_SECRET": ""}))

    def test_a_secret_named_is_said_to_be_unused(self):
        for args, env, named in ((Path("/etc/s"), {}, "--secret-file"),
                                 (None, {"LABS_GRADER_SECRET": "k"}, "$LABS_GRADER_SECRET"),
                                 (Path("/etc/s"), {"LABS_GRADER_SECRET": "k"},
                                  "--secret-file and $LABS_GRADER_SECRET")):
            with self.subTest(named=named):
                notice = seeds.secret_notice(args, env)
                self.assertTrue(notice.startswith(f"{named}: no longer used (ignored)"), notice)
                self.assertIn("system's entropy", notice)
                self.assertNotIn("\n", notice)


if __name__ == "__main__":
    unittest.main()
