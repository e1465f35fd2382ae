"""course.toml (grader/course.py): the one place an instructor says where a student without a
GPU gets a graded run, and the grader's no-GPU output that shows it."""

import copy
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import cli, course, grade
from grader.errors import GraderError
from grader.tests import fakes
from grader.tests.test_reports import LAB, failed_lab, make_result

REPO = Path(__file__).resolve().parents[2]


class LoadCourseTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def load(self, text):
        (self.root / "course.toml").write_text(text)
        return course.load_course(self.root)

    def test_the_repository_file_loads(self):
        c = course.load_course(REPO)
        self.assertIsInstance(c.graded_run_hint, str)
        self.assertTrue(c.graded_run_hint)

    def test_no_file_and_empty_setting_say_ask_the_instructor(self):
        self.assertEqual(course.load_course(self.root).graded_run_hint, course.UNSET)
        self.assertEqual(self.load('[graded_run]\nwhere = ""\n').graded_run_hint, course.UNSET)
        self.assertIn("ask your instructor", course.UNSET)
        self.assertIn("course.toml", course.UNSET)

    def test_the_setting_is_shown_on_one_line(self):
        c = self.load('[graded_run]\nwhere = """Push to your repository:\n  the runner grades it."""\n')
        self.assertEqual(c.graded_run_hint, "Push to your repository: the runner grades it.")

    def test_mistakes_name_the_file_and_what_is_wrong(self):
        for text, words in (("[graded_run\n", "not valid TOML"),
                            ("[graded_runs]\nwhere = 'x'\n", "unknown setting [graded_runs]"),
                            ("[graded_run]\nwher = 'x'\n", "unknown key 'wher'"),
                            ("[graded_run]\nwhere = 3\n", "must be a string"),
                            ("where = 'x'\n", "unknown setting [where]")):
            with self.subTest(text=text):
                with self.assertRaises(GraderError) as cm:
                    self.load(text)
                self.assertIn(str(self.root / "course.toml"), cm.exception.message)
                self.assertIn(words, cm.exception.message)


class NoGpuHintTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.tmp = Path(self._tmp.name)

    def main(self, argv):
        return fakes.run_cli(argv)

    def grade_args(self):
        sub = self.tmp / "sub"
        (sub / LAB).mkdir(parents=True, exist_ok=True)
        (sub / LAB / "matmul.cu").write_text("// x\n")
        return ["grade", LAB, "--submission", sub, "--build-dir", self.tmp / "build", "-q",
                "-o", self.tmp / "grade-results.json"]

    def no_gpu_result(self):
        return make_result(failed_lab("no_gpu", "no CUDA GPU: no NVIDIA driver found"),
                           status="no_gpu", message="no CUDA GPU: no NVIDIA driver found",
                           exit_code=3)

    def grade_with(self, setting, result):
        with mock.patch.object(cli, "load_course", lambda repo: course.Course(setting)), \
                mock.patch.object(grade, "grade", lambda *a, **kw: copy.deepcopy(result)):
            return self.main(self.grade_args())

    def test_no_gpu_names_the_courses_way_to_a_graded_run(self):
        code, out, err = self.grade_with("Upload to Gradescope.", self.no_gpu_result())
        self.assertEqual(code, 3, err)
        self.assertIn("NOT GRADED ON A GPU", out)
        self.assertIn("For a graded run: Upload to Gradescope.", out)

    def test_unset_says_ask_the_instructor(self):
        code, out, _ = self.grade_with("", self.no_gpu_result())
        self.assertEqual(code, 3)
        self.assertIn(f"For a graded run: {course.UNSET}", out)

    def test_graded_on_a_gpu_says_nothing_about_it(self):
        code, out, _ = self.grade_with("Upload to Gradescope.", make_result(status="graded"))
        self.assertNotIn("For a graded run", out)

    def test_a_broken_course_file_stops_before_grading(self):
        def broken(repo):
            raise GraderError("course.toml: not valid TOML: x")
        with mock.patch.object(cli, "load_course", broken), \
                mock.patch.object(grade, "grade", lambda *a, **kw: self.fail("graded")):
            code, _, err = self.main(self.grade_args())
        self.assertEqual(code, 2, err)
        self.assertIn("grader: error: course.toml: not valid TOML", err)
        self.assertNotIn("Traceback", err)


if __name__ == "__main__":
    unittest.main()
