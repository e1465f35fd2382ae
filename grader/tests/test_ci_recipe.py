"""docs/ci/cuda-labs-grade, the root-owned wrapper a self-hosted runner's job calls with sudo:
its check of the two folders the student's workflow names. Sourced, the script only defines
check_folder (its main part needs root, /opt/cuda-labs and flock); WORK_ROOT is set to a
temporary folder. A folder is taken only under WORK_ROOT, named without empty, '.' or '..'
parts, and with no symbolic link on the way: a committed `labs -> /opt/cuda-labs/solutions` is
refused with exit 2, never resolved."""

import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WRAPPER = REPO / "docs" / "ci" / "cuda-labs-grade"


@unittest.skipUnless(shutil.which("bash"), "bash is needed")
class CheckFolderTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="ci-recipe-")
        self.tmp = Path(self._tmp.name)
        self.work = self.tmp / "_work"
        self.ws = self.work / "alice-labs" / "alice-labs"     # the job's workspace
        (self.ws / "submission" / "labs" / "01_naive_matmul").mkdir(parents=True)
        (self.ws / "out").mkdir()
        self.solutions = self.tmp / "opt" / "cuda-labs" / "solutions"
        (self.solutions / "01_naive_matmul").mkdir(parents=True)

    def tearDown(self):
        self._tmp.cleanup()

    def check(self, path) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", 'source "$1"; WORK_ROOT="$2"; check_folder SUBMISSION_LABS "$3"; '
                           'echo taken', "_", str(WRAPPER), str(self.work), str(path)],
            capture_output=True, text=True, timeout=60)

    def assertTaken(self, path):
        proc = self.check(path)
        self.assertEqual((proc.returncode, proc.stdout), (0, "taken\n"), proc.stderr)

    def assertRefused(self, path, *words):
        proc = self.check(path)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertNotIn("taken", proc.stdout)
        self.assertTrue(proc.stderr.startswith("cuda-labs-grade: SUBMISSION_LABS "), proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        for w in words:
            self.assertIn(w, proc.stderr)
        return proc.stderr

    def test_the_workflows_folders_are_taken(self):
        self.assertTaken(self.ws / "submission" / "labs")
        self.assertTaken(self.ws / "out")

    def test_a_committed_labs_link_is_refused(self):
        labs = self.ws / "submission" / "labs"
        shutil.rmtree(labs)
        labs.symlink_to(self.solutions)
        err = self.assertRefused(labs, f"{labs} is a symbolic link: refused")
        self.assertNotIn(str(self.solutions), err)     # never resolved, not even shown

    def test_a_link_anywhere_below_the_work_folder_is_refused(self):
        # the job may have replaced its checkout folder by a link to a tree of its making
        elsewhere = self.tmp / "elsewhere"
        (elsewhere / "labs").mkdir(parents=True)
        os.rename(self.ws / "submission", self.tmp / "moved")
        (self.ws / "submission").symlink_to(elsewhere)
        self.assertRefused(self.ws / "submission" / "labs",
                           f"{self.ws / 'submission'} is a symbolic link: refused")
        # a link to a folder that holds only real folders is still a link
        self.assertRefused(self.ws / "submission", "is a symbolic link")

    def test_a_folder_outside_the_work_folder_is_refused(self):
        # the student's workflow can name any path: the solutions themselves, say
        self.assertRefused(self.solutions, f"{self.solutions} is not a folder under "
                                           f"{self.work}: refused")
        self.assertRefused(self.work, "is not a folder under")
        self.assertRefused(Path(str(self.work) + "-other") / "labs", "is not a folder under")

    def test_dot_dot_and_empty_parts_are_refused(self):
        for path in (f"{self.ws}/submission/labs/..", f"{self.ws}/../../../opt",
                     f"{self.ws}/submission//labs", f"{self.ws}/./submission/labs"):
            with self.subTest(path=path):
                self.assertRefused(path, "without empty, '.' or '..' parts")

    def test_a_file_or_nothing_is_refused(self):
        (self.ws / "afile").write_text("x")
        self.assertRefused(self.ws / "afile", "is not a folder")
        self.assertRefused(self.ws / "missing", "is not a folder")
        self.assertRefused(f"{self.ws}/sub\nmission", "newline")

    def test_usage(self):
        proc = subprocess.run(["bash", str(WRAPPER)], capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("usage: cuda-labs-grade SUBMISSION_LABS OUT", proc.stderr)

    def test_no_realpath_on_what_the_student_names(self):
        text = WRAPPER.read_text()
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        self.assertNotIn("realpath", code)
        self.assertNotIn("readlink", code)
        self.assertIn('--submission "$sub"', code)


if __name__ == "__main__":
    unittest.main()
