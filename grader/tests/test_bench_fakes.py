"""bench.run_benchmarks against fake bench judges (no GPU, no CUDA)."""

import re
import tempfile
import time
import unittest
from pathlib import Path

from grader import bench
from grader.tests import fakes

SUFFIX = "iterations:10/manual_time"
COUNTERS = {"ratio": 0.07, "ratio_lo": 0.068, "ratio_hi": 0.072, "GFLOPS": 3000.0,
            "baseline_GFLOPS": 42857.1, "student_ms": 45.8, "baseline_ms": 3.2}
N4096 = "matmul/v1_naive/4096"


def benches(how_4096="ok", counters=COUNTERS):
    return [
        ("matmul/v1_naive/1024/iterations:20/manual_time", "ok", {"ratio": 0.5, "GFLOPS": 1.0}),
        (f"matmul/v1_naive/40960/{SUFFIX}", "ok", {"ratio": 0.9, "GFLOPS": 2.0}),
        (f"{N4096}/{SUFFIX}", how_4096, counters),
        (f"matmul/v2_tiled/4096/{SUFFIX}", "ok", {"ratio": 0.3, "GFLOPS": 3.0}),
    ]


class BenchFakeTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)
        self.log = self.dir / "runs.log"
        self.worker = fakes.fake_worker(self.dir / "01_naive_matmul_worker")

    def tearDown(self):
        self._tmp.cleanup()

    def make(self, entries, name="01_naive_matmul_bench"):
        return fakes.fake_bench(self.dir / name, entries, log=self.log)

    def run_bench(self, binary, names=(N4096,), timeout_s=20, seed=5):
        return bench.run_benchmarks(binary, list(names), timeout_s, worker=self.worker, seed=seed)

    def assertRunError(self, binary, status, *words, timeout_s=20):
        with self.assertRaises(bench.BenchError) as cm:
            self.run_bench(binary, timeout_s=timeout_s)
        self.assertEqual(cm.exception.status, status)
        self.assertEqual(str(cm.exception), cm.exception.message)
        for w in words:
            self.assertIn(w, cm.exception.message)
        return cm.exception

    def test_finds_the_entry_by_prefix(self):
        entry = self.run_bench(self.make(benches()))[N4096]
        self.assertEqual(entry["run_name"], f"{N4096}/{SUFFIX}")
        self.assertEqual(entry["ratio"], 0.07)
        self.assertEqual(entry["ratio_lo"], 0.068)
        self.assertEqual(entry["GFLOPS"], 3000.0)

    def test_several_benchmarks_in_one_run(self):
        found = self.run_bench(self.make(benches()), names=[N4096, "matmul/v2_tiled/4096"])
        self.assertEqual(found[N4096]["ratio"], 0.07)
        self.assertEqual(found["matmul/v2_tiled/4096"]["ratio"], 0.3)
        self.assertEqual(len(fakes.read_log(self.log)), 1)

    def test_flags_seed_and_filter(self):
        self.run_bench(self.make(benches()), seed=4242)
        run = fakes.read_log(self.log)[-1]
        self.assertEqual(run["seed"], "4242")                   # from stdin
        self.assertIn("--labkit-seed-stdin", run["argv"])
        self.assertIn(f"--labkit-worker={self.worker}", run["argv"])
        self.assertTrue(any(a.startswith("--labkit-results-fd=") for a in run["argv"]))
        self.assertFalse(any(a.startswith("--benchmark_out") for a in run["argv"]))
        self.assertNotIn("LABKIT_SEED", run["env"])
        self.assertEqual(run["cwd_mode"], 0o700)
        filters = [a.split("=", 1)[1] for a in run["argv"] if a.startswith("--benchmark_filter=")]
        self.assertEqual(len(filters), 1)
        rx = re.compile(filters[0])
        self.assertTrue(rx.search(f"{N4096}/{SUFFIX}"))
        self.assertTrue(rx.search(N4096))
        self.assertFalse(rx.search(f"matmul/v1_naive/40960/{SUFFIX}"))
        self.assertFalse(rx.search(f"x/{N4096}/{SUFFIX}"))
        self.assertFalse(rx.search("matmul/v1_naive/1024/iterations:20/manual_time"))

    def test_the_profiler_is_passed_only_when_asked(self):
        self.run_bench(self.make(benches()))
        self.assertFalse(any(a.startswith("--labkit-profiler")
                             for a in fakes.read_log(self.log)[-1]["argv"]))
        bench.run_benchmarks(self.make(benches()), [N4096], 20, worker=self.worker, seed=5,
                             options=bench.Options(profiler="/opt/ncu"))
        self.assertIn("--labkit-profiler=/opt/ncu", fakes.read_log(self.log)[-1]["argv"])

    def test_the_race_audit_is_passed_only_when_asked(self):
        self.run_bench(self.make(benches()))
        argv = fakes.read_log(self.log)[-1]["argv"]
        self.assertFalse(any(a.startswith(("--labkit-race-audit", "--labkit-sanitizer"))
                             for a in argv))
        bench.run_benchmarks(self.make(benches()), [N4096], 20, worker=self.worker, seed=5,
                             options=bench.Options(race_audit="/opt/cs/compute-sanitizer"))
        argv = fakes.read_log(self.log)[-1]["argv"]
        self.assertIn("--labkit-race-audit", argv)
        self.assertIn("--labkit-sanitizer=/opt/cs/compute-sanitizer", argv)

    def test_filter_escapes_and_alternates(self):
        f = bench.benchmark_filter(["a.b/1", "c+d/(2)"])
        self.assertEqual(f, r"^(a\.b/1|c\+d/\(2\))(/|$)")
        rx = re.compile(f)
        self.assertTrue(rx.search("a.b/1"))
        self.assertTrue(rx.search("c+d/(2)/manual_time"))
        self.assertFalse(rx.search("axb/1"))
        self.assertFalse(rx.search("a.b/10"))

    def test_prefix_must_end_at_a_slash_in_the_output_too(self):
        # A judge that ignores the filter and reports everything: 40960 comes first but is not
        # 4096.
        binary = fakes.write_executable(self.dir / "nofilter_bench", f"""
            res = results_stream(flags())
            json.dump({{"context": {{}}, "benchmarks": [
                {{"name": "{N4096}0/{SUFFIX}", "run_name": "{N4096}0/{SUFFIX}", "ratio": 0.9}},
                {{"name": "{N4096}/{SUFFIX}", "run_name": "{N4096}/{SUFFIX}",
                  "ratio": 0.07}}]}}, res)
        """)
        self.assertEqual(self.run_bench(binary)[N4096]["ratio"], 0.07)

    def test_error_occurred_is_failed_with_its_message(self):
        found = self.run_bench(self.make(benches("error")))
        self.assertIsInstance(found[N4096], bench.BenchError)
        self.assertEqual(found[N4096].status, "failed")
        self.assertEqual(found[N4096].message, fakes.ERROR_MESSAGE)

    def test_crash(self):
        self.assertRunError(self.make(benches("segv")), "failed", "no result", "SIGSEGV")

    def test_half_a_document(self):
        self.assertRunError(self.make(benches("garbage")), "failed", "no result", "exit code 1")

    def test_a_document_on_stdout_is_not_read(self):
        e = self.assertRunError(self.make(benches("stdout_only")), "failed", "no result")
        self.assertIn("exit code 0", e.message)

    def test_nonzero_exit_without_output(self):
        binary = fakes.write_executable(self.dir / "nogpu_bench", """
            print("no CUDA GPU: no device; benchmark skipped", file=sys.stderr)
            sys.exit(77)
        """)
        self.assertRunError(binary, "failed", "exit code 77", "no CUDA GPU")

    def test_missing_benchmark_name(self):
        found = self.run_bench(self.make(benches()), names=["matmul/v3_fast/4096"])
        e = found["matmul/v3_fast/4096"]
        self.assertIsInstance(e, bench.BenchError)
        self.assertIn("no benchmark named 'matmul/v3_fast/4096'", e.message)

    def test_hang_is_a_timeout(self):
        start = time.monotonic()
        e = self.assertRunError(self.make(benches("hang")), "timeout", "within 1 s", "killed",
                                timeout_s=1)
        self.assertLess(time.monotonic() - start, 10)
        self.assertNotIn("no result", e.message)


if __name__ == "__main__":
    unittest.main()
