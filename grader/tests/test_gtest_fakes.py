"""gtest.list_tests and gtest.run_test against fake GoogleTest binaries (no GPU, no CUDA)."""

import tempfile
import time
import os
import unittest
import unittest.mock
from pathlib import Path

from grader import gtest
from grader.tests import fakes

PUB = "Shapes/MatmulPublic"
HID = "Shapes/MatmulHidden"

TESTS = [
    (PUB, "MatchesCpuReference/v1_naive_M1_N1_K1", "pass"),
    (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "fail"),
    (PUB, "MatchesCpuReference/v1_naive_M64_N64_K64", "skip"),
    (HID, "MatchesCpuReference/v1_naive_M1_N1_K1", "segv"),
    (HID, "MatchesCpuReference/v1_naive_M9_N9_K9", "abort_cuda"),
    (HID, "MatchesCpuReference/v1_naive_M1000_N1000_K1000", "hang"),
    (HID, "MatchesCpuReference/v1_naive_M2_N2_K2", "exit0"),
    (HID, "MatchesCpuReference/v1_naive_M3_N3_K3", "pass_exit1"),
    (HID, "Seeded/v1_naive", "seed"),
]


def full(i):
    suite, test, _ = TESTS[i]
    return f"{suite}.{test}"


class GtestFakeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls._tmp.name)
        cls.log = cls.dir / "runs.log"
        cls.binary = fakes.fake_gtest(cls.dir / "01_naive_matmul_test", TESTS, log=cls.log)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def run_one(self, i, timeout_s=20, env=None):
        return gtest.run_test(self.binary, full(i), timeout_s, env or {})


class ListTestsTest(GtestFakeTest):
    def test_lists_full_names_in_order(self):
        names = gtest.list_tests(self.binary)
        self.assertEqual(names, [f"{s}.{t}" for s, t, _ in TESTS])
        self.assertEqual(names[0], "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N1_K1")

    def test_listing_that_fails_raises(self):
        bad = fakes.write_executable(self.dir / "broken_test",
                                     "print('cannot start: libcudart.so.12 missing')\n"
                                     "sys.exit(127)\n")
        with self.assertRaises(RuntimeError) as cm:
            gtest.list_tests(bad)
        self.assertIn("broken_test", str(cm.exception))
        self.assertIn("exit 127", str(cm.exception))
        self.assertIn("libcudart", str(cm.exception))

    def test_listing_without_json_raises(self):
        nojson = fakes.write_executable(self.dir / "nojson_test", "print('A.\\n  b')\n")
        with self.assertRaises(RuntimeError):
            gtest.list_tests(nojson)

    def test_listing_that_hangs_raises(self):
        hang = fakes.write_executable(self.dir / "hang_list_test", "time.sleep(100)\n")
        start = time.monotonic()
        with self.assertRaises(RuntimeError):
            gtest.list_tests(hang, timeout_s=1)
        self.assertLess(time.monotonic() - start, 10)

    def test_filters_select_groups(self):
        names = gtest.list_tests(self.binary)
        pub = [n for n in names if gtest.matches_filter(n, "*MatmulPublic*")]
        hid = [n for n in names if gtest.matches_filter(n, "*MatmulHidden*")]
        self.assertEqual(len(pub), 3)
        self.assertEqual(len(hid), 6)


class RunTestTest(GtestFakeTest):
    def test_pass(self):
        r = self.run_one(0)
        self.assertEqual(r.name, full(0))
        self.assertEqual(r.status, "passed")
        self.assertTrue(r.passed)
        self.assertEqual(r.message, "")
        self.assertGreater(r.seconds, 0)

    def test_fail_carries_the_message(self):
        r = self.run_one(1)
        self.assertEqual(r.status, "failed")
        self.assertFalse(r.passed)
        self.assertEqual(r.message, fakes.FAIL_MESSAGE)

    def test_skip_reports_the_no_gpu_line(self):
        r = self.run_one(2)
        self.assertEqual(r.status, "skipped")
        self.assertIn("no CUDA GPU", r.message)
        self.assertEqual(r.message, fakes.SKIP_LINE.strip())

    def test_sigsegv(self):
        r = self.run_one(3)
        self.assertEqual(r.status, "crashed")
        self.assertIn("SIGSEGV", r.message)
        self.assertIn("crashed", r.message)
        self.assertIn("about to crash", r.message)   # the last output is shown
        self.assertNotIn("CUDA reported", r.message)

    def test_sigabrt_with_cuda_error(self):
        r = self.run_one(4)
        self.assertEqual(r.status, "crashed")
        self.assertIn("SIGABRT", r.message)
        self.assertIn("CUDA reported cudaErrorIllegalAddress (an illegal memory access was "
                      "encountered)", r.message)

    def test_hang_is_a_timeout(self):
        start = time.monotonic()
        r = self.run_one(5, timeout_s=1)
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(r.status, "timeout")
        self.assertIn("within 1 s", r.message)
        self.assertIn("killed", r.message)
        self.assertGreaterEqual(r.seconds, 0.9)

    def test_exit0_without_a_result(self):
        r = self.run_one(6)
        self.assertEqual(r.status, "crashed")
        self.assertIn("exit code 0", r.message)
        self.assertIn("exit()", r.message)
        self.assertIn("calling exit(0)", r.message)

    def test_pass_then_exit1(self):
        r = self.run_one(7)
        self.assertEqual(r.status, "crashed")
        self.assertTrue(r.message.startswith("the test's checks passed, but its process then "
                                             "failed (exit code 1)"), r.message)
        self.assertNotIn("before reporting a result", r.message)

    def test_inherited_gtest_settings_are_dropped(self):
        # A shard setting from the caller's shell would leave the test unrun.
        probe = fakes.write_executable(self.dir / "env_probe", """
            import os, sys
            leaked = sorted(k for k in os.environ if k.startswith("GTEST_"))
            print("leaked:", leaked)
            sys.exit(3 if leaked else 0)
        """)
        with unittest.mock.patch.dict(os.environ, {"GTEST_TOTAL_SHARDS": "2",
                                                   "GTEST_SHARD_INDEX": "1"}):
            r = gtest.run_test(probe, "A.b", 10, {})
        # The probe writes no JSON, so the run is a crash either way; its exit code tells
        # whether GoogleTest variables reached it (3) or not (0).
        self.assertIn("exit code 0", r.message)
        self.assertNotIn("GTEST_SHARD", r.message)

    def test_env_reaches_the_test(self):
        self.assertEqual(self.run_one(8, env={"LABKIT_SEED": "1234"}).status, "passed")
        r = self.run_one(8, env={"LABKIT_SEED": "99"})
        self.assertEqual(r.status, "failed")
        self.assertIn("'99'", r.message)

    def test_flags_and_env_passed_to_the_binary(self):
        self.run_one(0, env={"LABKIT_SEED": "77"})
        runs = fakes.read_log(self.log)
        last = runs[-1]
        self.assertEqual(last["seed"], "77")
        self.assertIn(f"--gtest_filter={full(0)}", last["argv"])
        self.assertIn("--gtest_color=no", last["argv"])
        self.assertTrue(any(a.startswith("--gtest_output=json:") for a in last["argv"]))

    def test_result_for_another_name_is_not_taken(self):
        # A binary that reports only a different test than the one asked for: no verdict.
        other = fakes.write_executable(self.dir / "other_test", """
            out = [a.split(':', 1)[1] for a in sys.argv if a.startswith('--gtest_output=json:')][0]
            json.dump({"testsuites": [{"name": "S", "testsuite": [
                {"name": "other", "status": "RUN", "result": "COMPLETED"}]}]}, open(out, 'w'))
        """)
        r = gtest.run_test(other, "S.wanted", 10, {})
        self.assertEqual(r.status, "crashed")
        self.assertIn("exit code 0", r.message)

    def test_broken_json_is_a_crash(self):
        broken = fakes.write_executable(self.dir / "badjson_test", """
            out = [a.split(':', 1)[1] for a in sys.argv if a.startswith('--gtest_output=json:')][0]
            open(out, 'w').write('{"testsuites": [')
            os.kill(os.getpid(), signal.SIGSEGV)
        """)
        r = gtest.run_test(broken, "S.t", 10, {})
        self.assertEqual(r.status, "crashed")
        self.assertIn("SIGSEGV", r.message)


if __name__ == "__main__":
    unittest.main()
