"""Two gradings on one build folder never mix (grader/gpulock.py build_lock, taken by
grade.grade): two real `python3 -m grader grade 01` processes, started at once on the same
build folder (as two shells both using the default build/grade do), one with a file that
compiles and one with a syntax error, each get their own verdict; one waits for the other and
says so. A real build of lab 01 without a GPU (CUDA_VISIBLE_DEVICES=-1 hides any GPU, so the
verdicts are the same on a GPU machine).

The build folder is kept between runs, so only the student file recompiles after the first:
$LABS_TEST_GRADE_BUILD, else build/grader-tests/isolation. Skipped without nvcc, or when
scripts/install-deps --check finds something missing (the grader would install it), or
without labs/01_naive_matmul.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAB = "01_naive_matmul"
STARTER = REPO / "labs" / LAB / "matmul.cu"
MARK = "bob_syntax_error_here"
WAITING = "waiting for the other grading of the build folder"
LIMIT_S = 900   # one grading's limit: the first one in a fresh folder builds the whole harness


def _nvcc():
    return shutil.which("nvcc") or next((str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),)
                                         if p.is_file()), None)


def _deps_missing() -> str | None:
    if not STARTER.is_file():
        return f"labs/{LAB} is not in this repository (a release without it)"
    if _nvcc() is None:
        return "nvcc was not found (PATH, /usr/local/cuda/bin)"
    proc = subprocess.run(["bash", str(REPO / "scripts" / "install-deps"), "--check"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return "scripts/install-deps --check: " + (proc.stdout + proc.stderr).strip()[-200:]
    return None


MISSING = _deps_missing()


@unittest.skipIf(MISSING, f"a real build is needed: {MISSING}")
class SameBuildFolderTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="grade-isolation-")
        self.tmp = Path(self._tmp.name)
        self.addCleanup(self._tmp.cleanup)
        self.build = Path(os.environ.get("LABS_TEST_GRADE_BUILD")
                          or REPO / "build" / "grader-tests" / "isolation").resolve()
        self.build.mkdir(parents=True, exist_ok=True)

    def submission(self, name: str, text: str) -> tuple:
        folder = self.tmp / name
        (folder / LAB).mkdir(parents=True)
        path = folder / LAB / "matmul.cu"
        path.write_text(text)
        return folder, hashlib.sha256(path.read_bytes()).hexdigest()

    def test_two_graders_at_once_each_get_their_own_verdict(self):
        starter = STARTER.read_text()
        alice, alice_sha = self.submission("alice", f"// alice: the starter, compiles\n{starter}")
        bob, bob_sha = self.submission(
            "bob", f"// bob: does not compile\n{starter}\nint {MARK} = ;\n")
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1")
        env.pop("LABS_GPU_LOCK", None)
        procs = {}
        t0 = time.monotonic()
        for name, folder in (("alice", alice), ("bob", bob)):
            procs[name] = subprocess.Popen(
                [sys.executable, "-m", "grader", "grade", LAB, "--submission", str(folder),
                 "--build-dir", str(self.build), "--no-performance", "-q",
                 "-o", str(self.tmp / f"{name}.json")],
                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = {}
        try:
            for name, proc in procs.items():
                stdout, stderr = proc.communicate(timeout=LIMIT_S)
                out[name] = (proc.returncode, stdout, stderr)
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
        seconds = time.monotonic() - t0
        results = {}
        for name, (rc, stdout, stderr) in out.items():
            path = self.tmp / f"{name}.json"
            self.assertTrue(path.is_file(), f"{name}: no results (exit {rc})\n{stdout}\n{stderr}")
            results[name] = json.loads(path.read_text())
        shown = {n: f"exit {rc}\nstdout:\n{so[-3000:]}\nstderr:\n{se[-3000:]}"
                 for n, (rc, so, se) in out.items()}

        # alice: built and checked, no GPU (exit 3); nothing of bob's anywhere in her results
        a = results["alice"]
        (a_lab,) = a["labs"]
        self.assertEqual((out["alice"][0], a["status"], a_lab["status"]), (3, "no_gpu", "no_gpu"),
                         shown["alice"])
        self.assertTrue(a_lab["build"]["ok"], shown["alice"])
        self.assertEqual(a_lab["files"], {"matmul.cu": alice_sha})
        self.assertNotIn(MARK, json.dumps(a), "alice's grading built bob's file")
        self.assertIn("NOT GRADED ON A GPU", out["alice"][1])

        # bob: his own compile error (exit 4)
        b = results["bob"]
        (b_lab,) = b["labs"]
        self.assertEqual((out["bob"][0], b["status"], b_lab["status"]),
                         (4, "build_failed", "build_failed"), shown["bob"])
        self.assertFalse(b_lab["build"]["ok"])
        self.assertEqual(b_lab["files"], {"matmul.cu": bob_sha})
        self.assertIn("error", b_lab["build"]["log"].lower())
        self.assertRegex(b_lab["build"]["log"] + b_lab["message"],
                         rf"{MARK}|matmul\.cu\({len(starter.splitlines()) + 3}\)",
                         "bob's results must show his own compile error")

        # One of the two waited for the other, said so once, naming the other's pid if known.
        waited = [n for n in out if WAITING in out[n][2]]
        self.assertEqual(len(waited), 1, shown)
        who = waited[0]
        other = "bob" if who == "alice" else "alice"
        self.assertEqual(out[who][2].count(WAITING), 1)
        pid = re.search(rf"{WAITING} {re.escape(str(self.build))} \(pid (\d+)\)", out[who][2])
        if pid:
            self.assertEqual(int(pid.group(1)), procs[other].pid)
        self.assertIn("wait: build folder", [s["stage"] for s in results[who]["stages"]])

        # The stages of a grading without a GPU (docs/grading.md, "Stage times").
        self.assertEqual([s["stage"] for s in a["stages"] if s["stage"] != "wait: build folder"],
                         ["configure", "build: harness", "build: object and judges", "GPU probe"])
        self.assertEqual([s["stage"] for s in a_lab["stages"]],
                         ["policy: source", "build: student object", "policy: object",
                          "build: worker and judges"])
        self.assertEqual([s["stage"] for s in b_lab["stages"]],
                         ["policy: source", "build: student object"])
        for s in a["stages"] + a_lab["stages"] + b_lab["stages"]:
            self.assertGreaterEqual(s["seconds"], 0)
        self.assertLessEqual(sum(s["seconds"] for s in a_lab["stages"]), a["seconds"] + 0.1)
        print(f"\n[two gradings of {LAB} on one build folder: {seconds:.1f} s]", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
