"""cmake/test_summary.py and cmake/TestSummary.cmake: after CTest's "100% tests passed", the last
line says how many tests did not run, and why (no GPU), with the right counts; the exit status
stays CTest's own.

  python3 -m unittest discover -s scripts/tests -v      (scripts/release-check runs it)

The summary on JUnit files written here, then the real thing: a small CMake project that
includes cmake/TestSummary.cmake, with tests that pass, skip the way the labs' tests skip without
a GPU (GoogleTest's skip message, a benchmark's exit code 77) or for another reason, and fail,
run through a test preset like the project's (a few seconds). test_release_handouts.py checks
the student workflow of a whole release the same way.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shutil
import subprocess
import tempfile
import textwrap
import unittest
from contextlib import redirect_stdout
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUMMARY = REPO / "cmake" / "test_summary.py"


def load_summary():
    spec = importlib.util.spec_from_file_location("test_summary", SUMMARY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ts = load_summary()

REASON = "no NVIDIA driver found (cudaErrorInsufficientDriver (CUDA driver version is " \
         "insufficient for CUDA runtime version))"
# The output of a lab's test without a GPU, as CTest keeps it (common/src/gtest_main.cpp,
# LABKIT_REQUIRE_GPU in common/include/labkit/gpu.hpp).
GTEST_GPU = (f"[ labkit  ] GPU: no CUDA GPU: {REASON}\n"
             "[ RUN      ] Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N1_K1\n"
             "/x/labs/01_naive_matmul/tests/public_test.cpp:25: Skipped\n"
             f"no CUDA GPU: {REASON} (this test needs one; it was skipped, not passed)\n"
             "[  SKIPPED ] Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N1_K1 (0 ms)\n")
BENCH_GPU = f"no CUDA GPU: {REASON}; benchmark skipped\n"
GTEST_OTHER = (f"[ labkit  ] GPU: no CUDA GPU: {REASON}\n"
               "[ RUN      ] Protocol.Sanitizer\n/x/common/tests/protocol_test.cpp:166: Skipped\n"
               "no --labkit-sanitizer given: nothing to test\n[  SKIPPED ] Protocol.Sanitizer\n")


def junit(cases) -> str:
    """A JUnit file as CTest writes it: cases are (name, 'run'|'skip'|'fail', output)."""
    body = []
    for name, status, out in cases:
        inner = {"run": "", "fail": '<failure message="Failed"/>',
                 "skip": '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>'}[status]
        out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        body.append(f'<testcase name="{name}" classname="{name}" time="0" '
                    f'status="{"notrun" if status == "skip" else status}">{inner}'
                    f"<system-out>{out}</system-out></testcase>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="(empty)" tests="'
            f'{len(cases)}">' + "".join(body) + "</testsuite>\n")


class SummaryTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="test-summary-")
        self.path = Path(self.tmp.name) / "ctest-results.xml"

    def tearDown(self):
        self.tmp.cleanup()

    def summary(self, cases) -> tuple:
        """-> (what test_summary.py prints, its exit status) for a results file of `cases`."""
        self.path.write_text(junit(cases))
        out = io.StringIO()
        with redirect_stdout(out):
            rc = ts.main(["test_summary.py", str(self.path)])
        return out.getvalue(), rc

    def test_gpu_tests_skipped(self):
        cases = [(f"gpu{i}", "skip", GTEST_GPU) for i in range(472)] + \
                [("bench", "skip", BENCH_GPU)] + [(f"cpu{i}", "run", "ok") for i in range(113)]
        out, rc = self.summary(cases)
        self.assertEqual(rc, 0)
        self.assertEqual(out, f"NOTE: 473 of 586 tests did not run: no CUDA GPU on this machine "
                              f"({REASON}); they are not passed\n")
        self.assertFalse(self.path.exists(), "read once, then removed")

    def test_other_reasons_are_named(self):
        out, _ = self.summary([("a", "skip", GTEST_GPU), ("b", "skip", GTEST_GPU),
                               ("c", "skip", GTEST_OTHER), ("d", "run", ""), ("e", "fail", "")])
        self.assertEqual(out, "NOTE: 3 of 5 tests did not run; they are not passed: 2 need a GPU: "
                              f"no CUDA GPU on this machine ({REASON}); 1: no --labkit-sanitizer "
                              "given: nothing to test\n")
        out, _ = self.summary([("c", "skip", GTEST_OTHER), ("d", "skip", "")])
        self.assertEqual(out, "NOTE: 2 of 2 tests did not run; they are not passed: 1: no "
                              "--labkit-sanitizer given: nothing to test; 1: skipped "
                              "(SKIP_REGULAR_EXPRESSION_MATCHED)\n")

    def test_nothing_skipped_nothing_said(self):
        self.assertEqual(self.summary([("a", "run", ""), ("b", "fail", "")]), ("", 0))

    def test_no_results_file_or_a_bad_one(self):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(ts.main(["test_summary.py", str(self.path)]), 0)
        self.assertEqual(out.getvalue(), "")     # a plain `ctest` run writes none
        self.path.write_text("<testsuite><testcase")
        with redirect_stdout(out):
            self.assertEqual(ts.main(["test_summary.py", str(self.path)]), 0)
        self.assertIn("could not be read", out.getvalue())

    def test_the_presets_write_the_file_that_is_read(self):
        presets = json.loads((REPO / "CMakePresets.json").read_text())
        written = {p["name"]: p.get("output", {}).get("outputJUnitFile")
                   for p in presets["testPresets"]}
        self.assertEqual(set(written.values()), {"ctest-results.xml"}, written)
        self.assertIn('"${CMAKE_BINARY_DIR}/ctest-results.xml"',
                      (REPO / "cmake" / "TestSummary.cmake").read_text())
        self.assertIn("include(cmake/TestSummary.cmake)", (REPO / "CMakeLists.txt").read_text())


def cmake_version():
    exe = shutil.which("cmake")
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


@unittest.skipUnless((cmake_version() or (0, 0)) >= (3, 25) and shutil.which("sh"),
                     "needs CMake 3.25+ (test presets of schema 6) and sh")
class CTestTest(unittest.TestCase):
    """A small project with the labs' kinds of skipped tests, through a test preset."""

    SCRIPTS = {
        "pass.sh": "echo ok\n",
        "gpu.sh": "cat <<'EOF'\n" + GTEST_GPU + "EOF\n",
        "bench.sh": f"echo '{BENCH_GPU.strip()}' >&2\nexit 77\n",
        "other.sh": "cat <<'EOF'\n" + GTEST_OTHER + "EOF\n",
        "fail.sh": "echo broken\nexit 1\n",
    }

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="test-summary-ctest-")
        src = Path(cls.tmp.name)
        for name, text in cls.SCRIPTS.items():
            (src / name).write_text(text)
        (src / "CMakeLists.txt").write_text(textwrap.dedent(f"""\
            cmake_minimum_required(VERSION 3.25)
            project(summary_probe NONE)
            enable_testing()
            include("{(REPO / 'cmake' / 'TestSummary.cmake').as_posix()}")
            foreach(name pass gpu1 gpu2 gpu3 bench other fail)
              string(REGEX REPLACE "[0-9]$" "" script "${{name}}")
              add_test(NAME ${{name}} COMMAND sh "${{CMAKE_SOURCE_DIR}}/${{script}}.sh")
            endforeach()
            # As gtest_discover_tests() and the labs' benchmark smoke tests do.
            set_tests_properties(gpu1 gpu2 gpu3 other PROPERTIES
                                 SKIP_REGULAR_EXPRESSION "\\\\[  SKIPPED \\\\]")
            set_tests_properties(bench PROPERTIES SKIP_RETURN_CODE 77)
            """))
        # As the project's test presets: output.outputJUnitFile = ctest-results.xml.
        (src / "CMakePresets.json").write_text(json.dumps({
            "version": 6,
            "configurePresets": [{"name": "p", "binaryDir": "${sourceDir}/build"}],
            "testPresets": [
                {"name": "gpu", "configurePreset": "p",
                 "output": {"outputOnFailure": True, "outputJUnitFile": "ctest-results.xml"},
                 "filter": {"include": {"name": "pass|gpu|bench"}}},
                {"name": "all", "configurePreset": "p",
                 "output": {"outputOnFailure": True, "outputJUnitFile": "ctest-results.xml"}}]}))
        proc = subprocess.run(["cmake", "--preset", "p"], cwd=src, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"configure failed:\n{proc.stdout}{proc.stderr}")
        cls.src = src

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def ctest(self, *args) -> tuple:
        proc = subprocess.run(["ctest", *args], cwd=self.src, capture_output=True, text=True)
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        return proc.returncode, lines, proc.stdout + proc.stderr

    def test_gpu_tests_skipped_last_line(self):
        rc, lines, out = self.ctest("--preset", "gpu")
        self.assertEqual(rc, 0, out)
        self.assertIn("100% tests passed, 0 tests failed out of 5", out)
        self.assertEqual(lines[-1], f"NOTE: 4 of 5 tests did not run: no CUDA GPU on this machine "
                                    f"({REASON}); they are not passed", out)
        self.assertFalse((self.src / "build" / "ctest-results.xml").exists())

    def test_a_failure_keeps_ctests_exit_status(self):
        rc, lines, out = self.ctest("--preset", "all")
        self.assertEqual(rc, 8, out)
        self.assertIn("tests failed out of 7", out)
        self.assertEqual(lines[-1], "NOTE: 5 of 7 tests did not run; they are not passed: 4 need "
                                    f"a GPU: no CUDA GPU on this machine ({REASON}); 1: no "
                                    "--labkit-sanitizer given: nothing to test", out)

    def test_plain_ctest_says_nothing_more(self):
        rc, lines, out = self.ctest("--test-dir", "build", "-R", "pass|gpu")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("NOTE", out)


if __name__ == "__main__":
    unittest.main()
