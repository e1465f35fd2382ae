"""gtest.list_tests, gtest.run_judge and the verdicts read from the results descriptor, against
fake test judges (no GPU, no CUDA)."""

import os
import tempfile
import time
import unittest
import unittest.mock
from pathlib import Path

from grader import gtest, runner
from grader.tests import fakes

PUB = "Shapes/MatmulPublic"
HID = "Shapes/MatmulHidden"

TESTS = [
    (PUB, "MatchesCpuReference/v1_naive_M1_N1_K1", "pass"),
    (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "fail"),
    (PUB, "MatchesCpuReference/v1_naive_M64_N64_K64", "skip"),
    (HID, "MatchesCpuReference/v1_naive_M1_N1_K1", "worker_crash"),
    (HID, "MatchesCpuReference/v1_naive_M9_N9_K9", "worker_timeout"),
    (HID, "Seeded/v1_naive", "seed"),
]


def full(test):
    suite, name, _ = test
    return f"{suite}.{name}"


class JudgeTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)
        self.log = self.dir / "runs.log"
        self.worker = fakes.fake_worker(self.dir / "01_naive_matmul_worker")

    def tearDown(self):
        self._tmp.cleanup()

    def judge(self, tests, name="01_naive_matmul_test", **kw):
        return fakes.fake_judge(self.dir / name, tests, log=self.log, **kw)

    def run_all(self, tests, seed=1234, call_timeout_s=10.0, flt="*", sanitizer=None, **kw):
        binary = self.judge(tests, **kw)
        run = gtest.run_judge(binary, flt, len(tests), worker=self.worker, seed=seed,
                              call_timeout_s=call_timeout_s, sanitizer=sanitizer)
        return run, [gtest.result_for(run, full(t)) for t in tests]


class ListTestsTest(JudgeTest):
    def test_lists_full_names_in_order(self):
        names = gtest.list_tests(self.judge(TESTS))
        self.assertEqual(names, [full(t) for t in TESTS])
        self.assertEqual(names[0], "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N1_K1")

    def test_each_tests_case_comes_from_the_variant_it_lists(self):
        listed = [("Sizes/ScanPublic", "Matches/v1_naive_f32_n1", "pass", "v1_naive"),
                  ("Sizes/ScanPublic", "Matches/v2_work_efficient_f32_n1", "pass",
                   "v2_work_efficient"),
                  ("Sizes/ScanPublic", "Matches/v1_naive_f32_n9", "pass", "v1_naive"),
                  ("Variants/ScanStream", "OnTheStream/v1_naive", "pass", "v1_naive"),
                  ("Variants/ScanStream", "OnTheStream/v2_work_efficient", "pass",
                   "v2_work_efficient"),
                  ("Other", "Plain", "pass")]
        cases = {}
        names = gtest.list_tests(self.judge(listed), cases=cases)
        self.assertEqual(names, [f"{t[0]}.{t[1]}" for t in listed])
        self.assertEqual(cases, {
            "Sizes/ScanPublic.Matches/v1_naive_f32_n1": "Sizes/ScanPublic.Matches/_f32_n1",
            "Sizes/ScanPublic.Matches/v2_work_efficient_f32_n1": "Sizes/ScanPublic.Matches/_f32_n1",
            "Sizes/ScanPublic.Matches/v1_naive_f32_n9": "Sizes/ScanPublic.Matches/_f32_n9",
            "Variants/ScanStream.OnTheStream/v1_naive": "Variants/ScanStream.OnTheStream/",
            "Variants/ScanStream.OnTheStream/v2_work_efficient":
                "Variants/ScanStream.OnTheStream/",
            "Other.Plain": "Other.Plain"})
        # A case's versions share one shard; the cases go round the shards in order.
        shard = gtest.shard_of(names, "*", 2, cases)
        self.assertEqual([shard[n] for n in names], [0, 0, 1, 0, 0, 1])
        # Without cases: GoogleTest's own, test by test.
        self.assertEqual([gtest.shard_of(names, "*", 2)[n] for n in names], [0, 1, 0, 1, 0, 1])
        # A name that does not hold its variant where the judge puts it is a case of its own.
        self.assertEqual(gtest.case_of("S.T/v2_x_n1", "v1_naive"), "S.T/v2_x_n1")
        self.assertEqual(gtest.case_of("S.T", "v1_naive"), "S.T")

    def test_listing_runs_in_a_private_dir_with_a_scrubbed_env(self):
        with unittest.mock.patch.dict(os.environ, {"GTEST_FILTER": "nothing", "LD_PRELOAD": "x.so",
                                                   "LABKIT_SEED": "5"}):
            gtest.list_tests(self.judge(TESTS))
        run = fakes.read_log(self.log)[-1]
        self.assertNotIn("GTEST_FILTER", run["env"])
        self.assertNotIn("LD_PRELOAD", run["env"])
        self.assertNotIn("LABKIT_SEED", run["env"])
        self.assertEqual(run["cwd_mode"], 0o700)
        self.assertFalse(Path(run["cwd"]).exists())           # removed afterwards
        out = [a for a in run["argv"] if a.startswith("--gtest_output=json:")][0]
        self.assertTrue(out.split(":", 1)[1].startswith(run["cwd"]))
        self.assertFalse(any(a.startswith("--labkit-worker") for a in run["argv"]))

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

    def test_listing_with_bad_json_raises(self):
        bad = fakes.write_executable(self.dir / "badjson_test", """
            out = [a.split(':', 1)[1] for a in sys.argv if a.startswith('--gtest_output=json:')][0]
            open(out, 'w').write('{"testsuites": [{"testsuite": 3}]}')
        """)
        with self.assertRaises(RuntimeError) as cm:
            gtest.list_tests(bad)
        self.assertIn("unreadable", str(cm.exception))

    def test_listing_that_hangs_raises(self):
        hang = fakes.write_executable(self.dir / "hang_list_test", "time.sleep(100)\n")
        start = time.monotonic()
        with self.assertRaises(RuntimeError):
            gtest.list_tests(hang, timeout_s=1)
        self.assertLess(time.monotonic() - start, 10)


class VerdictsTest(JudgeTest):
    def test_each_status_comes_from_the_descriptor(self):
        run, results = self.run_all(TESTS)
        self.assertEqual([r.status for r in results],
                         ["passed", "failed", "skipped", "crashed", "timeout", "passed"])
        self.assertEqual(results[1].message, fakes.FAIL_MESSAGE)
        self.assertEqual(results[2].message, fakes.SKIP_LINE)
        self.assertIn("SIGSEGV", results[3].message)
        self.assertIn("within 10 s", results[4].message)    # --labkit-call-timeout reached it
        self.assertEqual(results[0].seconds, 0.01)
        self.assertEqual(run.done, len(TESTS))
        self.assertEqual(run.warnings, [])

    def test_where_data_comes_with_a_failed_verdict_only(self):
        tests = [(PUB, "a", "where"), (PUB, "b", "where_passed"), (PUB, "c", "where_bad"),
                 (PUB, "d", "fail")]
        run, results = self.run_all(tests)
        self.assertEqual([r.status for r in results], ["failed", "passed", "failed", "failed"])
        self.assertEqual(results[0].where, fakes.WHERE)
        self.assertEqual(results[0].message, fakes.FAIL_MESSAGE)
        # A pass carries none; where data that is not an object is dropped, the verdict kept.
        self.assertEqual([r.where for r in results[1:]], [None, None, None])
        self.assertEqual(run.warnings, [])

    def test_worker_routes_become_worker_for_flags(self):
        cmd = gtest.judge_command(Path("/b/t"), "*", Path("/b/w"), 5, None, 3,
                                  routes={"v2": Path("/b/h2"), "v1": Path("/b/h1")})
        self.assertEqual([a for a in cmd if a.startswith("--labkit-worker")],
                         ["--labkit-worker=/b/w", "--labkit-worker-for=v1=/b/h1",
                          "--labkit-worker-for=v2=/b/h2"])
        self.assertEqual([a for a in gtest.judge_command(Path("/b/t"), "*", Path("/b/w"), 5,
                                                         None, 3)
                          if a.startswith("--labkit-worker")], ["--labkit-worker=/b/w"])

    def test_one_process_for_all_tests_with_the_contract_flags(self):
        self.run_all(TESTS, seed=77, call_timeout_s=12.5, flt="*Public*:*Hidden*",
                     sanitizer="/opt/cuda/bin/compute-sanitizer")
        runs = fakes.read_log(self.log)
        self.assertEqual(len(runs), 1)
        argv = runs[0]["argv"]
        self.assertIn("--gtest_filter=*Public*:*Hidden*", argv)
        self.assertIn("--labkit-seed-stdin", argv)
        self.assertIn(f"--labkit-worker={self.worker}", argv)
        self.assertIn("--labkit-call-timeout=12.5", argv)
        self.assertIn("--labkit-sanitizer=/opt/cuda/bin/compute-sanitizer", argv)
        fd = [a for a in argv if a.startswith("--labkit-results-fd=")]
        self.assertEqual(len(fd), 1)
        self.assertGreaterEqual(int(fd[0].split("=")[1]), 3)
        self.assertEqual(runs[0]["seed"], "77")              # read from stdin
        self.assertFalse(any(a.startswith("--gtest_output") for a in argv))

    def test_no_sanitizer_flag_without_a_sanitizer(self):
        self.run_all(TESTS[:1], sanitizer=None)
        self.assertFalse(any(a.startswith("--labkit-sanitizer")
                             for a in fakes.read_log(self.log)[-1]["argv"]))

    def test_seed_from_stdin(self):
        _, results = self.run_all(TESTS, seed=99)
        self.assertEqual(results[5].status, "failed")
        self.assertIn("'99'", results[5].message)

    def test_scrubbed_env_and_private_cwd(self):
        with unittest.mock.patch.dict(os.environ, {"GTEST_TOTAL_SHARDS": "2",
                                                   "GTEST_SHARD_INDEX": "1",
                                                   "LABKIT_SEED": "5", "LD_PRELOAD": "evil.so",
                                                   "NVIDIA_VISIBLE_DEVICES": "all",
                                                   "SOME_SECRET_TOKEN": "hunter2"}):
            _, results = self.run_all(TESTS)
        self.assertEqual(results[0].status, "passed")   # a shard setting would leave it unrun
        run = fakes.read_log(self.log)[-1]
        for key in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "LABKIT_SEED", "LD_PRELOAD",
                    "SOME_SECRET_TOKEN"):
            self.assertNotIn(key, run["env"])
        self.assertEqual(run["env"]["NVIDIA_VISIBLE_DEVICES"], "all")
        self.assertEqual(run["env"]["LANG"], "C.UTF-8")
        self.assertIn("PATH", run["env"])
        self.assertEqual(run["cwd_mode"], 0o700)
        self.assertFalse(Path(run["cwd"]).exists())

    def test_sandbox_event(self):
        run, _ = self.run_all(TESTS[:1])
        self.assertEqual(run.sandbox, {"sandbox": fakes.WORKER_EVENT["sandbox"],
                                       "device": "Fake GPU 80GB"})
        run, _ = self.run_all(TESTS[:1], worker_event=None)
        self.assertIsNone(run.sandbox)


class MissingVerdictsTest(JudgeTest):
    def test_judge_crash_mid_run(self):
        tests = [(PUB, "a", "pass"), (PUB, "b", "judge_crash"), (PUB, "c", "pass")]
        run, results = self.run_all(tests)
        self.assertEqual([r.status for r in results], ["passed", "crashed", "crashed"])
        for r in results[1:]:
            self.assertIn("SIGSEGV", r.message)
            self.assertIn("before reporting this test", r.message)
            self.assertIn("about to crash", r.message)        # the judge's last output
        self.assertIsNone(run.done)

    def test_judge_exit_mid_run(self):
        tests = [(PUB, "a", "judge_exit"), (PUB, "b", "pass")]
        _, results = self.run_all(tests)
        self.assertEqual([r.status for r in results], ["crashed", "crashed"])
        self.assertIn("exit code 1", results[0].message)
        self.assertIn("giving up", results[0].message)

    def test_hang_is_killed_at_the_limit_for_the_whole_run(self):
        tests = [(PUB, "a", "pass"), (PUB, "b", "hang"), (PUB, "c", "pass")]
        start = time.monotonic()
        run, results = self.run_all(tests, call_timeout_s=0.25)   # (3 + 5) * 0.25 = 2 s
        elapsed = time.monotonic() - start
        self.assertLess(elapsed, 8)
        self.assertGreaterEqual(elapsed, 1.9)
        self.assertEqual(run.timeout_s, 2.0)
        self.assertTrue(run.proc.timed_out)
        self.assertEqual([r.status for r in results], ["passed", "timeout", "timeout"])
        self.assertIn("limit of 2 s", results[1].message)
        self.assertIn("waiting forever", results[1].message)

    def test_a_test_without_a_line_never_passes(self):
        # The judge ends normally (exit 0) but reports only some tests.
        tests = [(PUB, "a", "pass"), (PUB, "b", "pass")]
        run, _ = self.run_all(tests)
        r = gtest.result_for(run, f"{PUB}.not_reported")
        self.assertEqual(r.status, "crashed")
        self.assertFalse(r.passed)
        self.assertIn("exit code 0", r.message)

    def test_malformed_lines_are_ignored_with_a_warning(self):
        tests = [(PUB, "a", "malformed"), (PUB, "b", "pass")]
        run, results = self.run_all(tests)
        self.assertEqual([r.status for r in results], ["crashed", "passed"])
        self.assertEqual(len(run.warnings), 4)
        self.assertTrue(all("malformed" in w for w in run.warnings))
        self.assertIn("this is not json", " ".join(run.warnings))

    def test_stdout_and_files_are_never_verdicts(self):
        tests = [(PUB, "a", "stdout_liar"), (HID, "b", "stdout_liar")]
        run, results = self.run_all(tests)
        self.assertEqual(run.proc.returncode, 0)
        self.assertIn("[  PASSED  ]", run.proc.stdout)
        self.assertIn('"status": "passed"', run.proc.stdout)
        self.assertEqual([r.status for r in results], ["crashed", "crashed"])
        self.assertFalse(any(r.passed for r in results))

    def test_a_second_line_cannot_upgrade_a_verdict(self):
        run, results = self.run_all([(PUB, "a", "double")])
        self.assertEqual(results[0].status, "failed")
        self.assertIn("twice", run.warnings[0])


class ParseResultsTest(unittest.TestCase):
    def parse(self, results: bytes, **proc):
        p = runner.ProcResult(returncode=proc.get("returncode", 0), timed_out=False, seconds=1,
                              stdout="", stderr="", results=results)
        return gtest.parse_results(p, 60)

    def test_fields_are_checked(self):
        bad = [b'{"event": "test", "name": "A.b", "status": "passed", "seconds": "1"}',
               b'{"event": "test", "name": "A.b", "status": "passed", "message": 3}',
               b'{"event": "test", "name": "", "status": "passed"}',
               b'{"event": "test", "name": "A.b", "status": "passed", "seconds": -1}',
               b'{"event": "test", "name": "A.b", "status": "not_run"}',
               b'{"event": "bogus"}', b'\xff\xfe', b'[1, 2]', b'{"event": "test"']
        run = self.parse(b"\n".join(bad) + b"\n")
        self.assertEqual(run.tests, {})
        self.assertEqual(len(run.warnings), len(bad))

    def test_good_line_with_defaults(self):
        run = self.parse(b'{"event": "test", "name": "A.b", "status": "passed"}')
        self.assertEqual(run.tests["A.b"].status, "passed")
        self.assertEqual(run.tests["A.b"].message, "")
        self.assertEqual(run.tests["A.b"].seconds, 0.0)

    def test_where_data_of_a_sane_size_only(self):
        line = '{"event": "test", "name": "A.b", "status": "failed", "where": {"map": "%s"}}'
        self.assertEqual(self.parse((line % ("x" * 1000)).encode()).tests["A.b"].where,
                         {"map": "x" * 1000})
        huge = self.parse((line % ("x" * gtest.MAX_WHERE)).encode()).tests["A.b"]
        self.assertEqual((huge.status, huge.where), ("failed", None))

    def test_huge_message_is_cut(self):
        line = ('{"event": "test", "name": "A.b", "status": "failed", "message": "%s"}'
                % ("x" * 50000)).encode()
        msg = self.parse(line).tests["A.b"].message
        self.assertLess(len(msg), 21000)
        self.assertIn("characters cut", msg)


class FilterTest(unittest.TestCase):
    def test_positive_union(self):
        self.assertEqual(gtest.positive_union(["*Public*", "*Hidden*"]), "*Public*:*Hidden*")
        self.assertEqual(gtest.positive_union(["a*:b*-*slow*", "b*:c*"]), "a*:b*:c*")
        self.assertEqual(gtest.positive_union(["*Public*", "-*slow*"]), "*")
        # it selects at least what each group selects
        names = ["a.x", "b.slow", "c.y", "d.z"]
        for flt in ("a*:b*-*slow*", "b*:c*"):
            union = gtest.positive_union(["a*:b*-*slow*", "b*:c*"])
            for n in names:
                if gtest.matches_filter(n, flt):
                    self.assertTrue(gtest.matches_filter(n, union), n)


if __name__ == "__main__":
    unittest.main()
