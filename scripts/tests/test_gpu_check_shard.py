"""scripts/gpu_check.py --shard I/N (from 0, as batch's): the corpus split into parts for device calls of their own."""

import importlib.util
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)


class ShardTest(unittest.TestCase):
    def setUp(self):
        # The real corpus, in the order load_corpus gives it (not sorted across labs).
        labs = sorted(p.parent.name for p in (REPO / "tests" / "submissions").glob("*/cases.toml"))
        self.cases = gpu_check.load_corpus(list(reversed(labs)))
        self.assertGreater(len(self.cases), 100)

    def ids(self, cases):
        return [c.id for c in cases]

    def test_the_parts_cover_every_case_once_and_differ_by_at_most_one(self):
        for n in (1, 2, 3, 7):
            parts = [self.ids(gpu_check.shard_cases(self.cases, k, n)) for k in range(n)]
            every = [i for part in parts for i in part]
            self.assertEqual(sorted(every), sorted(self.ids(self.cases)), n)
            self.assertEqual(len(every), len(set(every)), n)
            sizes = [len(p) for p in parts]
            self.assertLessEqual(max(sizes) - min(sizes), 1, (n, sizes))

    def test_a_part_is_the_same_whatever_order_the_cases_came_in(self):
        a = self.ids(gpu_check.shard_cases(self.cases, 1, 3))
        b = self.ids(gpu_check.shard_cases(list(reversed(self.cases)), 1, 3))
        self.assertEqual(a, b)

    def test_each_part_holds_cases_of_every_lab_with_enough_of_them(self):
        labs = {c.lab for c in self.cases}
        for k in (0, 1):
            part = gpu_check.shard_cases(self.cases, k, 2)
            self.assertEqual({c.lab for c in part}, labs)

    def test_shard_words_are_read_or_refused(self):
        self.assertEqual(gpu_check.parse_shard("2/3"), (2, 3))
        self.assertEqual(gpu_check.parse_shard("0/3"), (0, 3))
        self.assertEqual(gpu_check.parse_shard("0/1"), (0, 1))
        for bad in ("3/3", "1/1", "4/3", "3", "a/b", "1/0", "-1/2", "2/3/4", ""):
            with self.assertRaises(ValueError, msg=bad):
                gpu_check.parse_shard(bad)

    def test_a_bad_shard_is_a_usage_error(self):
        with self.assertRaises(SystemExit) as e:
            gpu_check.main(["--shard", "5/2", "--labs", "01"])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
