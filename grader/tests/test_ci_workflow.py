"""docs/ci/grade.yml, the student repositories' workflow: it uploads the grader's console log
and exit status with the reports, and fails the job on a grading error, never on a low score.
The step scripts are taken from the file (no YAML library: the grader's tests use the
standard library only) and run here with bash."""

from __future__ import annotations

import json
import subprocess
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / "docs" / "ci" / "grade.yml"


def step(name: str) -> list:
    """The lines of the step named `name`, less their indentation."""
    lines = WORKFLOW.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {name}")
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = []
    for line in lines[start + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        out.append(line)
    return out


def run_script(name: str) -> str:
    body = step(name)
    i = next(i for i, line in enumerate(body) if line.strip() == "run: |")
    indent = len(body[i + 1]) - len(body[i + 1].lstrip())
    return "\n".join(line[indent:] for line in body[i + 1:]) + "\n"


class GradeWorkflowTest(unittest.TestCase):
    def test_console_log_and_exit_status_are_uploaded(self):
        upload = "\n".join(step("Upload the reports"))
        for f in ("summary.md", "junit.xml", "grade-results.json", "console.txt", "exit.txt"):
            self.assertIn(f"out/{f}", upload)
        self.assertIn("if: always()", upload)
        grade = run_script("Grade")
        self.assertIn('> out/exit.txt', grade)
        self.assertIn("out/console.txt", grade)

    def fails(self, rc: str | None, status: str | None = None) -> bool:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "out"
            out.mkdir()
            if rc is not None:
                (out / "exit.txt").write_text(rc + "\n")
            if status is not None:
                (out / "grade-results.json").write_text(json.dumps({"status": status}))
            p = subprocess.run(["bash", "-e", "-c", run_script("Fail on a grading error")],
                               cwd=d, capture_output=True, text=True, timeout=30)
            self.assertIn(p.returncode, (0, 1), p.stderr)
            if p.returncode:
                self.assertIn("::error::grading failed", p.stdout)
            return p.returncode != 0

    def test_the_job_fails_on_a_grading_error_only(self):
        self.assertTrue((step("Fail on a grading error")[0].strip()) == "if: always()")
        self.assertFalse(self.fails("0", "graded"))
        self.assertFalse(self.fails("4", "build_failed"))       # a low score
        self.assertFalse(self.fails("2", "bad_files"))          # a graded file missing: 0
        self.assertTrue(self.fails("2"))                          # a set-up mistake, no results
        self.assertTrue(self.fails("2", "graded"))
        self.assertTrue(self.fails("3", "no_gpu"))               # the runner has no GPU
        self.assertTrue(self.fails("1", "error"))
        self.assertTrue(self.fails(None))                         # the grade step never ran


if __name__ == "__main__":
    unittest.main()
