"""scripts/gradescope/run_autograder, Gradescope's entry point, on fake submission folders laid
out as Gradescope lays them out (/autograder/submission, /autograder/results), with the fake
grader (grader/tests/fake_grade.py, which writes --gradescope with the real renderer): the
three shapes of upload are found, and results.json is always written, with a visible message
when nothing could be graded."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from grader.tests.test_batch import FAKE, make_sub

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "scripts" / "gradescope" / "run_autograder"


class RunAutograderTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gradescope-test-")
        self.root = Path(self._tmp.name)
        self.sub = self.root / "submission"
        self.sub.mkdir()
        self.calls = self.root / "calls.jsonl"
        self.tmpdir = self.root / "tmp"
        self.tmpdir.mkdir()

    def tearDown(self):
        self._tmp.cleanup()

    def run_it(self, grader=None) -> dict:
        env = dict(os.environ, AUTOGRADER_ROOT=str(self.root), AUTOGRADER_SOURCE=str(REPO),
                   AUTOGRADER_BUILD_DIR=str(self.root / "build"),
                   LABS_GRADER=grader or f"{sys.executable} {FAKE}",
                   FAKE_GRADE_CALLS=str(self.calls), PYTHONPATH=str(REPO),
                   # the two labs the fake uploads hold (the repository's list grows)
                   LABS="01_naive_matmul 05_reduction", TMPDIR=str(self.tmpdir))
        proc = subprocess.run([str(RUN)], capture_output=True, text=True, env=env, timeout=120)
        # the staged copy of the student's files is gone, whatever the outcome
        self.assertEqual(list(self.tmpdir.iterdir()), [])
        self.assertEqual(proc.returncode, 0, "Gradescope needs exit 0\n" + proc.stdout
                         + proc.stderr)
        path = self.root / "results" / "results.json"
        self.assertTrue(path.is_file(), proc.stdout + proc.stderr)
        return json.loads(path.read_text())

    def graded_folder(self) -> Path:
        return Path(json.loads(self.calls.read_text().splitlines()[-1])["argv"][
            json.loads(self.calls.read_text().splitlines()[-1])["argv"].index("--submission") + 1])

    def test_repository_upload(self):
        make_sub(self.root, "submission", matmul="POINTS=30", reduce="POINTS=70")
        res = self.run_it()
        self.assertEqual(res["score"], 100)
        self.assertEqual(self.graded_folder(), self.sub / "labs")

    def test_labs_folder_upload(self):
        make_sub(self.root, "submission", matmul="POINTS=5", repo_shaped=False)
        res = self.run_it()
        self.assertEqual(res["score"], 105)
        self.assertEqual(self.graded_folder(), self.sub)

    def test_loose_files_upload(self):
        (self.sub / "src").mkdir()
        (self.sub / "src" / "matmul.cu").write_text("POINTS=12")
        (self.sub / "reduce.cu").write_text("POINTS=8")
        (self.sub / "notes.txt").write_text("not graded")
        res = self.run_it()
        self.assertEqual(res["score"], 20)   # the fake grader read both staged files
        staged = self.graded_folder()
        self.assertEqual(staged.parent, self.tmpdir)
        self.assertTrue(staged.name.startswith("gradescope-submission."))
        self.assertFalse(staged.exists(), "the staged copy of the student's files was left")

    def test_upload_without_graded_files(self):
        (self.sub / "essay.pdf").write_text("x")
        res = self.run_it()
        self.assertEqual(res["score"], 0)
        self.assertEqual(res["visibility"], "visible")
        self.assertIn("holds none of the graded files (matmul.cu, reduce.cu)", res["output"])
        self.assertFalse(self.calls.exists(), "nothing to grade: the grader is not run")

    def solutions(self) -> Path:
        """A folder shaped like labs/ that the student does not own (the solutions, say)."""
        return make_sub(self.root, "solutions", matmul="POINTS=100", reduce="POINTS=100",
                        repo_shaped=False)

    def assertRefused(self, res: dict, *words):
        self.assertEqual(res["score"], 0)
        self.assertEqual(res["visibility"], "visible")
        self.assertIn("is a symbolic link: refused", res["output"])
        for w in words:
            self.assertIn(w, res["output"])
        self.assertNotIn(str(self.root / "solutions"), res["output"])   # nor where it points
        self.assertFalse(self.calls.exists(), "nothing graded through a link")

    def test_upload_whose_labs_folder_is_a_link_is_refused(self):
        self.sub.rmdir()
        self.sub.mkdir()
        (self.sub / "labs").symlink_to(self.solutions())
        self.assertRefused(self.run_it(), "the upload's labs/")

    def test_upload_whose_lab_folder_is_a_link_is_refused(self):
        solutions = self.solutions()
        make_sub(self.root, "submission", matmul="POINTS=5")
        os.rename(self.sub / "labs" / "05_reduction", self.root / "mine")
        (self.sub / "labs" / "05_reduction").symlink_to(solutions / "05_reduction")
        self.assertRefused(self.run_it(), "the upload's labs/05_reduction/")
        # the labs/ folder shape too
        (self.sub / "labs").rename(self.root / "old")
        (self.sub / "01_naive_matmul").symlink_to(solutions / "01_naive_matmul")
        self.assertRefused(self.run_it(), "the upload's 01_naive_matmul/")

    def test_loose_files_behind_a_link_are_not_taken(self):
        (self.sub / "src").mkdir()
        (self.sub / "src" / "reduce.cu").write_text("POINTS=8")
        (self.sub / "src" / "matmul.cu").write_text("POINTS=12")
        (self.sub / "theirs").symlink_to(self.solutions() / "01_naive_matmul")
        (self.sub / "src" / "also").symlink_to(self.solutions() / "05_reduction")
        res = self.run_it()
        self.assertEqual(res["score"], 20)      # the student's own two; none behind a link

    def test_grader_crash_still_writes_results(self):
        make_sub(self.root, "submission", matmul="CRASH")
        res = self.run_it()
        self.assertEqual(res["score"], 0)
        self.assertIn("The grader stopped (exit 1) before writing any results", res["output"])

    def test_grader_missing_still_writes_results(self):
        make_sub(self.root, "submission")
        res = self.run_it(grader="/nonexistent/grader")
        self.assertEqual(res["score"], 0)
        self.assertIn("exit 127", res["output"])

    def test_no_writable_results_folder_is_said_and_not_a_silent_exit(self):
        # As an ordinary user trying it with /autograder, or a wrong AUTOGRADER_ROOT: nothing
        # can be written, so it says so and exits 2 (a file where the folder should be fails
        # for root as well).
        blocker = self.root / "blocked"
        blocker.write_text("a file, not a folder")
        env = dict(os.environ, AUTOGRADER_ROOT=str(blocker), AUTOGRADER_SOURCE=str(REPO),
                   LABS_GRADER=f"{sys.executable} {FAKE}", PYTHONPATH=str(REPO))
        proc = subprocess.run([str(RUN)], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn(f"cannot write the results folder {blocker}/results", proc.stderr)
        self.assertIn("AUTOGRADER_ROOT", proc.stderr)

    def test_a_missing_source_folder_still_writes_results(self):
        make_sub(self.root, "submission")
        env = dict(os.environ, AUTOGRADER_ROOT=str(self.root),
                   AUTOGRADER_SOURCE=str(self.root / "no-source"),
                   LABS_GRADER=f"{sys.executable} {FAKE}", PYTHONPATH=str(REPO))
        proc = subprocess.run([str(RUN)], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        res = json.loads((self.root / "results" / "results.json").read_text())
        self.assertEqual(res["score"], 0)
        self.assertIn("source folder", res["output"])
        self.assertIn("is missing", res["output"])


if __name__ == "__main__":
    unittest.main()
