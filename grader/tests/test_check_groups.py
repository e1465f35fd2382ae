"""cmake/check_groups.py, the CTest check that every correctness group of a lab selects tests:
on a fake test judge (grader/tests/fakes.py) and a lab folder written here."""

import importlib.util
import io
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from grader.tests import fakes

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_groups", REPO / "cmake" / "check_groups.py")
check_groups = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_groups)

TESTS = [("Sizes/ReducePublic", "MatchesReference/v1_n1", "pass"),
         ("Sizes/ReduceHidden", "MatchesReference/v1_n3", "pass")]

GRADING = """[lab]
title = "Reduction"
student_files = ["reduce.cu"]

[[correctness]]
name = "public"
filter = "*ReducePublic*"
points = 40

[[correctness]]
name = "hidden"
filter = "{hidden}"
points = 60
"""


class CheckGroupsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)
        self.judge = fakes.fake_judge(self.tmp / "05_reduction_test", TESTS)

    def tearDown(self):
        self._tmp.cleanup()

    def run_check(self, hidden_filter: str):
        lab = self.tmp / "labs" / "05_reduction"
        lab.mkdir(parents=True, exist_ok=True)
        (lab / "grading.toml").write_text(GRADING.format(hidden=hidden_filter))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = check_groups.main(["check_groups.py", str(lab), str(self.judge)])
        return rc, out.getvalue() + err.getvalue()

    def test_a_test_in_no_group_fails_naming_it(self):
        self.judge = fakes.fake_judge(self.tmp / "05_reduction_test",
                                      TESTS + [("Sizes/ReduceExtra", "MatchesReference/v1_n5", "pass")])
        rc, text = self.run_check("*ReduceHidden*")
        self.assertEqual(rc, 1, text)
        self.assertIn("the test Sizes/ReduceExtra.MatchesReference/v1_n5 is in no correctness "
                      "group", text)

    def test_every_group_selects_tests(self):
        rc, text = self.run_check("*ReduceHidden*")
        self.assertEqual(rc, 0, text)
        self.assertIn("public 1, hidden 1", text)
        self.assertIn("2 tests split among 2 judges as the grader expects: 1, 1", text)

    def test_a_judge_that_splits_its_tests_otherwise_fails(self):
        self.judge = fakes.fake_judge(self.tmp / "05_reduction_test", TESTS, filtering=False)
        rc, text = self.run_check("*ReduceHidden*")
        self.assertEqual(rc, 1, text)
        self.assertIn("Sizes/ReducePublic.MatchesReference/v1_n1 ran in shards 0 and 1", text)
        self.assertIn("Sizes/ReduceHidden.MatchesReference/v1_n3 ran in shard 0, the grader "
                      "expects shard 1", text)

    def test_the_versions_of_a_case_run_in_one_judge(self):
        listed = [("Sizes/ReducePublic", "MatchesReference/v1_a_n1", "pass", "v1_a"),
                  ("Sizes/ReducePublic", "MatchesReference/v2_b_n1", "pass", "v2_b"),
                  ("Sizes/ReduceHidden", "MatchesReference/v1_a_n3", "pass", "v1_a"),
                  ("Sizes/ReduceHidden", "MatchesReference/v2_b_n3", "pass", "v2_b")]
        self.judge = fakes.fake_judge(self.tmp / "05_reduction_test", listed)
        rc, text = self.run_check("*ReduceHidden*")
        self.assertEqual(rc, 0, text)
        self.assertIn("4 tests split among 2 judges as the grader expects: 2, 2", text)
        # What the check says of a split that parts a case's versions.
        cases = {"A/v1_a_n1": "A/_n1", "A/v2_b_n1": "A/_n1"}
        problems = check_groups.shard_mismatches({"A/v1_a_n1": 0, "A/v2_b_n1": 1},
                                                 [["A/v1_a_n1"], ["A/v2_b_n1"]], cases)
        self.assertEqual(problems, ["the versions of A/_n1 ran in shards [0, 1]: one judge "
                                    "should run them"])

    def test_a_group_that_selects_nothing_fails_and_is_named(self):
        rc, text = self.run_check("*ReduceHiden*")   # the typo the check is for
        self.assertEqual(rc, 1, text)
        self.assertIn("'hidden' (filter '*ReduceHiden*', 60 points) selects none of the 2 tests",
                      text)
        self.assertNotIn("'public'", text)

    def test_an_unreadable_lab_is_exit_2(self):
        rc, text = self.run_check("*ReduceHidden*")
        self.assertEqual(rc, 0)
        rc = check_groups.main(["check_groups.py", str(self.tmp / "labs" / "nope"),
                                str(self.judge)])
        self.assertEqual(rc, 2)


if __name__ == "__main__":
    unittest.main()


_bspec = importlib.util.spec_from_file_location("check_benchmarks",
                                                REPO / "cmake" / "check_benchmarks.py")
check_benchmarks = importlib.util.module_from_spec(_bspec)
_bspec.loader.exec_module(check_benchmarks)

PERF = """
[[performance]]
name = "v4 2^28"
points = 20
benchmark = "{benchmark}"
metric = "ratio"
target = 0.9
floor = 0.3
"""


class CheckBenchmarksTest(unittest.TestCase):
    """cmake/check_benchmarks.py, the CTest check that every performance entry names a benchmark
    the lab's benchmark judge has (listed with --labkit-list-benchmarks, no GPU)."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)
        self.bench = self.tmp / "05_reduction_bench"
        self.bench.write_text("#!/bin/sh\n[ \"$1\" = --labkit-list-benchmarks ] || exit 9\n"
                              "echo reduce/v4_optimized/1048576\necho reduce/v4_optimized/268435456\n")
        self.bench.chmod(0o755)

    def tearDown(self):
        self._tmp.cleanup()

    def run_check(self, benchmark: str):
        lab = self.tmp / "labs" / "05_reduction"
        lab.mkdir(parents=True, exist_ok=True)
        (lab / "grading.toml").write_text(GRADING.format(hidden="*ReduceHidden*")
                                          + PERF.format(benchmark=benchmark))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = check_benchmarks.main(["check_benchmarks.py", str(lab), str(self.bench)])
        return rc, out.getvalue() + err.getvalue()

    def test_an_entry_that_names_a_benchmark(self):
        rc, text = self.run_check("reduce/v4_optimized/268435456")
        self.assertEqual(rc, 0, text)
        self.assertIn("1 performance entries, each names one of the 2 benchmarks", text)

    def test_a_misspelt_benchmark_fails_naming_it(self):
        rc, text = self.run_check("reduce/v4_optimised/268435456")
        self.assertEqual(rc, 1, text)
        self.assertIn("'v4 2^28' names the benchmark 'reduce/v4_optimised/268435456', which "
                      "05_reduction_bench does not have", text)
        self.assertIn("reduce/v4_optimized/268435456", text)   # what there is

    def test_a_binary_that_cannot_list_is_an_error(self):
        self.bench.write_text("#!/bin/sh\nexit 3\n")
        rc, text = self.run_check("reduce/v4_optimized/268435456")
        self.assertEqual(rc, 2, text)
