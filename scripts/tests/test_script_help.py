"""Every script's --help prints its usage and exits 0 before doing anything.

Each script runs with --help on a PATH built here: the few tools a help text needs (bash, sed,
python3, ...) are the machine's; everything that doing real work would call (cmake, ctest, git,
nvidia-smi, apt-get, sbatch, mkdir, mktemp, rm, tar, flock, ...) is a stand-in that records its
call and fails. A script that started its work would call one of them, or fail: either is
noticed. The scripts run from a folder that is not the repository, with HOME and TMPDIR in a
temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Every entry point: scripts/ (not its tests), CI's scripts, the runner's wrapper in docs/ci.
def scripts() -> list:
    found = []
    for path in sorted(REPO.joinpath("scripts").rglob("*")):
        rel = path.relative_to(REPO)
        if not path.is_file() or rel.parts[1] in ("tests", "__pycache__"):
            continue
        if os.access(path, os.X_OK) or path.suffix in (".py", ".sh", ".sbatch"):
            found.append(rel)
    found += [Path(".ci/run"), Path(".ci/fresh-machine"), Path("docs/ci/cuda-labs-grade")]
    return found


# What a help text may use.
REAL = ("bash", "sh", "sed", "dirname", "basename", "cat", "echo", "printf", "head", "tail",
        "env", "id")
# What real work would call: each records its call and fails.
WORK = ("cmake", "ctest", "ninja", "make", "git", "nvidia-smi", "nvcc", "apt-get", "apt-cache",
        "sudo", "sbatch", "scancel", "sinfo", "munged", "slurmctld", "slurmd", "mkdir",
        "mktemp", "rm", "cp", "tar", "zip", "flock", "install", "chmod", "chown", "stat",
        "realpath", "find", "ls", "debootstrap", "chroot", "mount", "compute-sanitizer",
        "timeout", "tee", "nproc", "date", "pip", "pip3", "chromium")


class ScriptHelpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="script-help."))
        cls.bin = cls.tmp / "bin"
        cls.bin.mkdir()
        cls.calls = cls.tmp / "calls"
        for name in REAL:
            found = shutil.which(name)
            if found:
                (cls.bin / name).symlink_to(found)
        (cls.bin / "python3").symlink_to(sys.executable)
        for name in WORK:
            stand_in = cls.bin / name
            stand_in.write_text(f'#!/bin/sh\necho "{name} $*" >> "{cls.calls}"\nexit 97\n')
            stand_in.chmod(0o755)
        (cls.tmp / "home").mkdir()
        (cls.tmp / "cwd").mkdir()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_help(self, rel: Path, flag: str):
        env = {"PATH": str(self.bin), "HOME": str(self.tmp / "home"),
               "TMPDIR": str(self.tmp / "home"), "LANG": "C.UTF-8",
               "OUT": str(self.tmp / "out-must-not-appear")}
        cmd = [str(REPO / rel), flag]
        if rel.suffix == ".py" and not os.access(REPO / rel, os.X_OK):
            cmd = [sys.executable, *cmd]
        return subprocess.run(cmd, cwd=self.tmp / "cwd", env=env, capture_output=True,
                              text=True, timeout=60)

    def test_every_script_has_help(self):
        listed = scripts()
        self.assertIn(Path("scripts/gradescope/make-zip"), listed)
        self.assertIn(Path("scripts/gpu-check"), listed)
        for rel in listed:
            for flag in ("--help", "-h"):
                with self.subTest(script=str(rel), flag=flag):
                    self.calls.unlink(missing_ok=True)
                    p = self.run_help(rel, flag)
                    out = p.stdout + p.stderr
                    self.assertEqual(p.returncode, 0, f"{rel} {flag}: exit {p.returncode}\n{out}")
                    self.assertIn("usage", out.lower(), f"{rel} {flag} printed no usage:\n{out}")
                    self.assertNotIn("Traceback", out)
                    calls = self.calls.read_text() if self.calls.exists() else ""
                    self.assertEqual(calls, "", f"{rel} {flag} started its work:\n{calls}")
                    self.assertFalse((self.tmp / "out-must-not-appear").exists())
                    self.assertEqual(list((self.tmp / "cwd").iterdir()), [])


class MakeZipRefusalsTest(unittest.TestCase):
    """make-zip stops with a message and exit 2, no traceback, on what it cannot do."""

    def make_zip(self, *args):
        return subprocess.run([str(REPO / "scripts/gradescope/make-zip"), *args],
                              capture_output=True, text=True, timeout=60)

    def assertRefused(self, p, words):
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        self.assertIn(words, p.stderr)

    def test_unknown_lab(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertRefused(self.make_zip(f"{d}/a.zip", "--labs", "99"),
                               "make-zip: unknown lab '99'")
            self.assertEqual(os.listdir(d), [])

    def test_unwritable_or_missing_folder(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertRefused(self.make_zip(f"{d}/nope/a.zip"), "does not exist")
            self.assertRefused(self.make_zip(d), "is a directory")
        self.assertRefused(self.make_zip("/proc/a.zip"), "cannot write in /proc")

    def test_no_arguments_or_unknown_option(self):
        p = self.make_zip()
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage", p.stderr)
        self.assertRefused(self.make_zip("--bogus"), "unknown option --bogus")


if __name__ == "__main__":
    unittest.main()
