"""The set-up of the README's two commands, without installing anything: scripts/install-deps,
scripts/test and the grader, run as a user who cannot install (a stand-in `id` says uid 1000;
no sudo, or one that wants a password), on a PATH built here that lacks CMake or holds an old
one. Each must name exactly what is missing and the one command that installs it, exit
non-zero, build nothing, and never call apt-get (a stand-in that records any call) or pip
(hidden from python3).

The presence-only tools (g++, binutils, ninja, nvcc) are stand-ins too, so that what is missing
is what each test removes; GoogleTest and Google Benchmark are looked for where they really are,
so a machine without them gets them named as well (the tests allow it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import setup
from grader.config import discover_labs
from grader.errors import EXIT_USAGE, GraderError

REPO = Path(__file__).resolve().parents[2]
INSTALL_DEPS = REPO / "scripts" / "install-deps"
TEST_COMMAND = REPO / "scripts" / "test"

# What the scripts run, taken from this machine.
REAL = ("bash", "sh", "env", "dirname", "sort", "head", "awk", "sed", "paste", "find", "ls",
        "cat", "rm", "mkdir", "printf", "tr", "grep", "readlink")
# Only looked for, never run for real here.
PRESENT = ("g++", "objdump", "readelf", "nm", "c++filt", "ninja", "nvcc", "cuobjdump")


def _script(path: Path, text: str) -> None:
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)


class FakeMachine:
    """A bin folder standing for a machine: a user with uid 1000, apt-get that must not run,
    apt-cache offering CMake `apt_cmake`, and `cmake` (absent, or of version `cmake`)."""

    def __init__(self, tmp: Path, cmake: str | None = None, apt_cmake: str = "3.25.1-1",
                 sudo: bool = False, nvcc: bool = True, frontend: bool = True):
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.apt_calls = tmp / "apt-get-calls"
        for name in REAL:
            found = shutil.which(name)
            if found:
                (self.bin / name).symlink_to(found)
        (self.bin / "python3").symlink_to(sys.executable)
        for name in PRESENT:
            if name != "nvcc" or nvcc:
                _script(self.bin / name, "exit 0\n")
        _script(self.bin / "id", 'if [ "$1" = -u ]; then echo 1000; else echo "uid=1000(student)"; fi\n')
        _script(self.bin / "apt-get", f'echo "$@" >> "{self.apt_calls}"; exit 100\n')
        _script(self.bin / "apt-cache",
                f'echo "$2:"; echo "  Installed: (none)"; echo "  Candidate: {apt_cmake}"\n')
        if sudo:   # a sudo that needs a password: `sudo -n` refuses
            _script(self.bin / "sudo", 'echo "sudo: a password is required" >&2; exit 1\n')
        if cmake:
            _script(self.bin / "cmake", f'echo "cmake version {cmake}"\n')
        # python3 without pip, so that nothing is installed by pip either
        self.stubs = tmp / "stubs"
        self.hide_module("pip")
        self.env = {"PATH": str(self.bin), "HOME": str(tmp), "LANG": "C.UTF-8",
                    "PYTHONPATH": str(self.stubs)}
        if frontend:   # the cuDNN frontend's headers, where install-deps also looks
            (tmp / "frontend").mkdir()
            (tmp / "frontend" / "cudnn_frontend.h").write_text("// a stand-in\n")
            self.env["CUDNN_FRONTEND_INCLUDE_DIR"] = str(tmp / "frontend")

    def hide_module(self, name: str) -> None:
        (self.stubs / name).mkdir(parents=True)
        (self.stubs / name / "__init__.py").write_text(f"raise ImportError('no {name} here')\n")

    def run(self, *argv, cwd=REPO, timeout=120) -> subprocess.CompletedProcess:
        return subprocess.run([str(a) for a in argv], cwd=cwd, env=self.env, text=True,
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)

    def apt_get_ran(self) -> bool:
        return self.apt_calls.exists()


def line(output: str, prefix: str) -> str:
    found = [x for x in output.splitlines() if x.startswith(prefix)]
    if not found:
        raise AssertionError(f"no line starting {prefix!r} in:\n{output}")
    return found[0]


def packages(command_line: str) -> list:
    """The packages of an 'install with: ... apt-get install -y --no-install-recommends P...'."""
    words = command_line.split("--no-install-recommends", 1)[1].split()
    return words


class InstallDepsAsUserTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_no_cmake_no_root_no_sudo_check(self):
        m = FakeMachine(self.tmp)
        p = m.run("bash", INSTALL_DEPS, "--check")
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 3, out)   # missing, and this user cannot install it
        self.assertIn("CMake >= 3.25", line(out, "install-deps: missing: "))
        cmd = line(out, "install-deps: install with (as root): ")   # no sudo here
        self.assertIn("install with (as root): apt-get install -y --no-install-recommends ", cmd)
        self.assertIn("cmake", packages(cmd))
        for absent in ("g++", "ninja-build", "binutils"):   # stand-ins are there
            self.assertNotIn(absent, packages(cmd))
        self.assertFalse(m.apt_get_ran())

    def test_no_cmake_no_root_install_mode_names_the_command(self):
        m = FakeMachine(self.tmp)
        p = m.run("bash", INSTALL_DEPS)
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 1, out)
        self.assertIn("nothing was installed: this user is not root and has no sudo without a "
                      "password", out)
        self.assertIn("cmake", packages(line(out, "install-deps: install with (as root): ")))
        self.assertFalse(m.apt_get_ran())

    def test_sudo_that_wants_a_password_is_not_used_but_named(self):
        m = FakeMachine(self.tmp, sudo=True)
        p = m.run("bash", INSTALL_DEPS)
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 1, out)
        cmd = line(out, "install-deps: install with: ")
        self.assertIn("install with: sudo apt-get install -y --no-install-recommends ", cmd)
        self.assertIn("cmake", packages(cmd))
        self.assertFalse(m.apt_get_ran())

    def test_old_cmake_and_old_apt_cmake_go_to_pypi(self):
        # Ubuntu 22.04: CMake 3.22 on PATH and in apt: PyPI's, into build/tools/venv, which
        # needs no root; apt's cmake is never proposed.
        m = FakeMachine(self.tmp, cmake="3.22.1", apt_cmake="3.22.1-1ubuntu1.22.04.2")
        p = m.run("bash", INSTALL_DEPS, "--check")
        out = p.stdout + p.stderr
        missing = line(out, "install-deps: missing: ")
        self.assertIn("CMake >= 3.25 (PATH has 3.22.1, apt has 3.22.1-1ubuntu1.22.04.2: PyPI's "
                      "goes into build/tools/venv)", missing)
        self.assertIn(p.returncode, (1, 3), out)
        if p.returncode == 3:   # something else needs apt too (or python3 has no venv module)
            self.assertNotIn("cmake", packages(line(out, "install-deps: install with")))
        else:
            self.assertIn("this user can install them: scripts/install-deps", out)
        self.assertFalse(m.apt_get_ran())

    def test_old_cmake_on_path_newer_in_apt(self):
        m = FakeMachine(self.tmp, cmake="3.22.1", apt_cmake="3.28.3-1build7")
        p = m.run("bash", INSTALL_DEPS, "--check")
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 3, out)
        self.assertIn("CMake >= 3.25 (PATH has 3.22.1)", line(out, "install-deps: missing: "))
        self.assertIn("cmake", packages(line(out, "install-deps: install with (as root): ")))

    def test_nvcc_is_named_never_installed(self):
        m = FakeMachine(self.tmp, nvcc=False)
        p = m.run("bash", INSTALL_DEPS, "--check")
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 3, out)
        first = line(out, "install-deps: needed first: ")
        self.assertIn("nvcc", first)
        self.assertTrue("export PATH=" in first or "install the CUDA toolkit" in first, first)
        self.assertNotIn("nvcc", packages(line(out, "install-deps: install with")))
        self.assertFalse(m.apt_get_ran())

    def test_matplotlib_is_optional(self):
        # Everything needed there, matplotlib not: --check passes, and the set-up goes on,
        # naming how to get it, without installing (this user cannot).
        m = FakeMachine(self.tmp, cmake="3.25.1")
        m.hide_module("matplotlib")
        p = m.run("bash", INSTALL_DEPS, "--check")
        out = p.stdout + p.stderr
        if "GoogleTest" in out or "Google Benchmark" in out:
            self.skipTest("GoogleTest or Google Benchmark is not installed on this machine")
        self.assertEqual(p.returncode, 0, out)
        self.assertIn("matplotlib", line(out, "install-deps: missing, optional: "))
        self.assertNotIn("install-deps: missing: ", out)
        p = m.run("bash", INSTALL_DEPS)
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 0, out)
        self.assertIn("python3-matplotlib",
                      packages(line(out, "install-deps: install with (as root): ")))
        self.assertIn("install-deps: note: no matplotlib", out)
        self.assertFalse(m.apt_get_ran())

    def test_cudnn_frontend_is_needed_and_this_user_can_fetch_it(self):
        # Lab 11's baseline: PyPI's headers into build/tools/, no root needed, so --check says
        # this user can install it (here python3 has no pip: the set-up itself is not run).
        if (REPO / "build/tools/cudnn-frontend/include/cudnn_frontend.h").is_file():
            self.skipTest("this checkout already holds the frontend (build/tools/cudnn-frontend)")
        m = FakeMachine(self.tmp, cmake="3.25.1", frontend=False)
        p = m.run("bash", INSTALL_DEPS, "--check")
        out = p.stdout + p.stderr
        if "GoogleTest" in out or "Google Benchmark" in out:
            self.skipTest("GoogleTest or Google Benchmark is not installed on this machine")
        self.assertIn("the cuDNN frontend's headers", line(out, "install-deps: missing: "))
        self.assertIn(p.returncode, (1, 3), out)
        self.assertFalse(m.apt_get_ran())

    def test_unknown_option(self):
        p = FakeMachine(self.tmp).run("bash", INSTALL_DEPS, "--bogus")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown option --bogus", p.stderr)


class TestCommandAsUserTest(unittest.TestCase):
    """scripts/test stops after the set-up's message, before CMake."""

    def test_stops_before_building(self):
        with tempfile.TemporaryDirectory() as d:
            m = FakeMachine(Path(d))
            p = m.run("bash", TEST_COMMAND)
            out = p.stdout + p.stderr
            self.assertEqual(p.returncode, 1, out)
            self.assertIn("cmake", packages(line(out, "install-deps: install with (as root): ")))
            self.assertIn("test: the set-up is not complete (above): nothing was built", out)
            self.assertFalse(m.apt_get_ran())

    def test_help_is_its_own_and_sets_up_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            m = FakeMachine(Path(d))
            for flag in ("--help", "-h"):
                p = m.run("bash", TEST_COMMAND, flag)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                self.assertTrue(p.stdout.startswith("usage: scripts/test"), p.stdout)
                self.assertIn("cmake --workflow --preset student", p.stdout)
                self.assertNotIn("install-deps: missing", p.stdout + p.stderr)
                self.assertFalse(m.apt_get_ran())


class GraderSetupTest(unittest.TestCase):
    def test_grade_without_cmake_names_the_command(self):
        # The README's grade command on a machine without CMake, as a user who cannot install:
        # one line naming what is missing and the command, exit 2, no traceback, no apt-get.
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            m = FakeMachine(d)
            lab = discover_labs(REPO / "labs")[0]   # any lab: a release may hold only one
            p = m.run(sys.executable, "-m", "grader", "grade", lab, "--build-dir", d / "build",
                      "-o", d / "r.json", "--no-performance")
            self.assertEqual(p.returncode, EXIT_USAGE, p.stdout + p.stderr)
            self.assertNotIn("Traceback", p.stderr)
            err = line(p.stderr, "grader: error: cannot build: missing ")
            self.assertIn("CMake >= 3.25", err)
            self.assertIn("This user cannot install packages (not root, no sudo without a "
                          "password)", err)
            self.assertIn("then run python3 -m grader grade again: apt-get install -y "
                          "--no-install-recommends ", err)
            self.assertIn("cmake", packages(err))
            self.assertEqual(p.stderr.count("grader: error:"), 1, p.stderr)
            self.assertNotIn("not graded", p.stdout)   # no table of labs never built
            self.assertFalse(m.apt_get_ran())
            self.assertFalse((d / "build" / "CMakeCache.txt").exists())   # nothing configured

    def test_explain_without_installer(self):
        out = ("install-deps: missing: CMake >= 3.25, Ninja\n"
               "install-deps: missing, optional: matplotlib for /usr/bin/python3 (the HTML reports)\n"
               "install-deps: install with: sudo apt-get install -y --no-install-recommends "
               "cmake ninja-build python3-matplotlib\n")
        self.assertEqual(setup.explain(out, 3),
                         "cannot build: missing CMake >= 3.25, Ninja. This user cannot install "
                         "packages (not root, no sudo without a password). Install them with "
                         "this one command, then run python3 -m grader grade again: sudo "
                         "apt-get install -y --no-install-recommends cmake ninja-build "
                         "python3-matplotlib")

    def test_explain_what_is_needed_first(self):
        out = ("install-deps: missing: Ninja\n"
               "install-deps: needed first: nvcc is not on PATH (the CUDA toolkit is in "
               "/usr/local/cuda): export PATH=/usr/local/cuda/bin:$PATH\n"
               "install-deps: install with (as root): apt-get install -y "
               "--no-install-recommends ninja-build\n")
        text = setup.explain(out, 3)
        self.assertTrue(text.startswith("cannot build: nvcc is not on PATH"), text)
        self.assertIn("export PATH=/usr/local/cuda/bin:$PATH", text)
        self.assertIn("; missing Ninja. Install it with this one command, then run python3 -m "
                      "grader grade again: apt-get install -y --no-install-recommends "
                      "ninja-build", text)
        self.assertTrue(text.endswith("ninja-build"), text)   # the command ends the line
        self.assertNotIn("cannot install packages", text)   # not why it stops

    def test_installs_where_it_can_then_checks_again(self):
        calls = []
        results = iter([1, 1, 0])   # check: installable; again under the lock; after: done

        def run_check(repo):
            calls.append("check")
            return subprocess.CompletedProcess([], next(results), "install-deps: missing: Ninja\n", "")

        with tempfile.TemporaryDirectory() as d:
            repo = Path(d)
            (repo / "scripts").mkdir()
            (repo / "scripts" / "install-deps").write_text("")
            with mock.patch.object(setup, "_run_check", run_check), \
                    mock.patch.object(setup, "_install", lambda r, log: calls.append("install")), \
                    mock.patch.object(setup, "cmake_command", lambda r=None: "/usr/bin/cmake"):
                self.assertEqual(setup.ensure_build_tools(repo), "/usr/bin/cmake")
                self.assertEqual(calls, ["check", "check", "install", "check"])
                setup.ensure_build_tools(repo)   # once per process
                self.assertEqual(calls, ["check", "check", "install", "check"])
        setup._done.discard(repo)

    def test_install_that_leaves_something_missing(self):
        results = iter([1, 1, 1])

        def run_check(repo):
            return subprocess.CompletedProcess(
                [], next(results), "install-deps: missing: GoogleTest\n"
                "install-deps: this user can install them: scripts/install-deps\n", "")

        with tempfile.TemporaryDirectory() as d:
            repo = Path(d)
            (repo / "scripts").mkdir()
            (repo / "scripts" / "install-deps").write_text("")
            with mock.patch.object(setup, "_run_check", run_check), \
                    mock.patch.object(setup, "_install", lambda r, log: None):
                with self.assertRaises(GraderError) as cm:
                    setup.ensure_build_tools(repo)
        self.assertEqual(cm.exception.exit_code, EXIT_USAGE)
        self.assertIn("still missing: GoogleTest", cm.exception.message)

    def test_cmake_from_the_tools_venv_first(self):
        with tempfile.TemporaryDirectory() as d:
            repo = Path(d)
            tools = repo / setup.TOOLS_BIN
            tools.mkdir(parents=True)
            _script(tools / "cmake", "exit 0\n")
            self.assertEqual(setup.cmake_command(repo), str(tools / "cmake"))
            (tools / "cmake").unlink()
            with mock.patch.dict(os.environ, {"PATH": str(tools)}):
                self.assertIsNone(setup.cmake_command(repo))


if __name__ == "__main__":
    unittest.main()
