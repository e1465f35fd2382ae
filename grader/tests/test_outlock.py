"""One grading at a time per results file (grader/outlock.py): a second grader given the same
-o (two graders started in one clone write grade-results.json both) is refused with exit 2 and
the other grading's name, before it builds anything, and the first one's results stay."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import build, cli, outlock
from grader.errors import GraderError

REPO = Path(__file__).resolve().parents[2]
LAB = "01_naive_matmul"

TRY_LOCK = """
import sys
from pathlib import Path
from grader import outlock
from grader.errors import GraderError
try:
    with outlock.output_lock(Path(sys.argv[1])):
        print("taken")
except GraderError as e:
    print(e.message)
    sys.exit(e.exit_code)
"""


class OutputLockTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self._tmp.cleanup)
        self.tmp = Path(self._tmp.name)
        self.out = self.tmp / "grade-results.json"

    def other_process(self) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", TRY_LOCK, str(self.out)], cwd=REPO,
                              capture_output=True, text=True, timeout=60)

    def test_second_taker_is_refused_naming_the_first(self):
        with outlock.output_lock(self.out) as lock:
            self.assertEqual(lock, self.tmp / ".grade-results.json.lock")
            self.assertIn(f"pid {os.getpid()} ", lock.read_text())
            p = self.other_process()
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertIn(f"another grading is writing {self.out} (pid {os.getpid()} ", p.stdout)
            self.assertIn("another -o FILE", p.stdout)
            # within one process too (a second open file description)
            with self.assertRaises(GraderError):
                with outlock.output_lock(self.out):
                    pass
        self.assertFalse((self.tmp / ".grade-results.json.lock").exists(), "removed at the end")
        p = self.other_process()
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "taken"))

    def test_a_stale_lock_file_is_taken(self):
        (self.tmp / ".grade-results.json.lock").write_text("pid 1 (killed)\n")
        with outlock.output_lock(self.out):
            pass

    def test_a_lock_that_is_a_link_is_refused(self):
        (self.tmp / ".grade-results.json.lock").symlink_to(self.tmp / "elsewhere")
        with self.assertRaises(GraderError) as e:
            with outlock.output_lock(self.out):
                pass
        self.assertIn("symbolic link", e.exception.message)
        self.assertFalse((self.tmp / "elsewhere").exists())

    def test_grade_refused_while_another_grading_writes_the_same_file(self):
        sub = self.tmp / "sub"
        (sub / LAB).mkdir(parents=True)
        (sub / LAB / "matmul.cu").write_text("// x\n")
        self.out.write_text('{"the first grading": true}\n')

        def no_build(*args, **kw):
            self.fail("the second grading started building")

        err = io.StringIO()
        with outlock.output_lock(self.out), contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(io.StringIO()), \
                mock.patch.object(build, "configure", no_build), \
                mock.patch.object(build, "build_targets", no_build):
            code = cli.main(["grade", "--submission", str(sub), "--build-dir",
                             str(self.tmp / "build"), "-o", str(self.out)])
        self.assertEqual(code, 2, err.getvalue())
        self.assertIn(f"grader: error: --output: another grading is writing {self.out} "
                      f"(pid {os.getpid()} ", err.getvalue())
        self.assertEqual(self.out.read_text(), '{"the first grading": true}\n')


if __name__ == "__main__":
    unittest.main()
