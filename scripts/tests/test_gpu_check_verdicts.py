"""scripts/gpu_check.py's verdicts of one grading against a case's expectations, where a lesson
of a profile counter was or was not measured on the machine (its points withheld there)."""

import importlib.util
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)


def grading(lesson: dict) -> dict:
    """A grading of lab 08 whose tests all passed, with the given lesson group."""
    tests = [{"name": "Scan/ScanPublic.Matches/v3_i32_n1", "status": "passed"}]
    lab = {"lab": "08_scan", "status": "graded", "build": {"ok": True},
           "policy": {"ok": True, "violations": []},
           "groups": [{"name": "public", "filter": "*", "max_points": 95.0, "points": 95.0,
                       "tests": tests}, lesson],
           "performance": [], "points": 95.0 + lesson["points"]}
    return {"wall": 1.0, "rc": 0, "output": "", "result": {"labs": [lab]}}


MEASURED_FAIL = {"name": "lesson: single pass", "filter": "dram_bytes", "max_points": 5.0,
                 "points": 0.0, "tests": [{"name": "Lesson.dram_bytes/scan/v3", "status": "failed",
                                           "message": "at most 2.6 GB"}]}
UNMEASURED = {"name": "lesson: single pass", "filter": "dram_bytes", "max_points": 5.0,
              "points": 0.0, "tests": [], "note": "not measured", "unmeasured": True}
PASSED = dict(MEASURED_FAIL, points=5.0,
              tests=[{"name": "Lesson.dram_bytes/scan/v3", "status": "passed"}])


class LessonVerdictTest(unittest.TestCase):
    def case(self, **spec):
        return gpu_check.Case("08_scan", "x", dict({"build": "ok", "performance": "any"}, **spec))

    def test_a_measured_lesson_is_checked_like_any_test(self):
        losing = self.case(correctness="partial", fails=["Lesson.dram_bytes"])
        self.assertEqual(gpu_check.judge_case(losing, grading(MEASURED_FAIL))["problems"], [])
        problems = gpu_check.judge_case(losing, grading(PASSED))["problems"]
        self.assertIn("correctness: expected partial, got full", problems)
        self.assertIn("no failing test named like 'Lesson.dram_bytes'", problems)
        full = self.case(correctness="full")
        self.assertEqual(gpu_check.judge_case(full, grading(PASSED))["problems"], [])
        self.assertIn("correctness: expected full, got partial",
                      gpu_check.judge_case(full, grading(MEASURED_FAIL))["problems"])

    def test_an_unmeasured_lesson_is_neither_right_nor_wrong(self):
        # Its withheld points do not make a correct case partial, and an expected failure of it
        # cannot be checked here; it is listed instead.
        full = gpu_check.judge_case(self.case(correctness="full"), grading(UNMEASURED))
        self.assertEqual((full["problems"], full["correctness"]), ([], "full"))
        self.assertEqual(full["unmeasured"], ["Lesson.dram_bytes"])
        losing = self.case(correctness="partial", fails=["Lesson.dram_bytes"])
        self.assertEqual(gpu_check.judge_case(losing, grading(UNMEASURED))["problems"], [])
        # A case partial for another reason still is checked for it.
        other = self.case(correctness="partial", fails=["Lesson.dram_bytes", "ScanHidden"])
        self.assertIn("no failing test named like 'ScanHidden'",
                      gpu_check.judge_case(other, grading(UNMEASURED))["problems"])


if __name__ == "__main__":
    unittest.main()
