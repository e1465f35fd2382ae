"""bench.run_benchmark against fake Google Benchmark binaries (no GPU, no CUDA)."""

import re
import tempfile
import time
import unittest
from pathlib import Path

from grader import bench
from grader.tests import fakes

SUFFIX = "iterations:10/manual_time"
COUNTERS = {"ratio": 0.07, "GFLOPS": 3000.0, "cublas_GFLOPS": 42857.1, "student_ms": 45.8,
            "cublas_ms": 3.2}


def benches(how_4096="ok", counters=COUNTERS):
    return [
        ("matmul/v1_naive/1024/iterations:20/manual_time", "ok", {"ratio": 0.5, "GFLOPS": 1.0}),
        (f"matmul/v1_naive/40960/{SUFFIX}", "ok", {"ratio": 0.9, "GFLOPS": 2.0}),
        (f"matmul/v1_naive/4096/{SUFFIX}", how_4096, counters),
        (f"matmul/v2_tiled/4096/{SUFFIX}", "ok", {"ratio": 0.3, "GFLOPS": 3.0}),
    ]


class BenchFakeTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)
        self.log = self.dir / "runs.log"

    def tearDown(self):
        self._tmp.cleanup()

    def make(self, entries, name="01_naive_matmul_bench"):
        return fakes.fake_bench(self.dir / name, entries, log=self.log)

    def assertBenchError(self, binary, status, *words, name="matmul/v1_naive/4096", timeout_s=20):
        with self.assertRaises(bench.BenchError) as cm:
            bench.run_benchmark(binary, name, timeout_s, {})
        self.assertEqual(cm.exception.status, status)
        self.assertEqual(str(cm.exception), cm.exception.message)
        for w in words:
            self.assertIn(w, cm.exception.message)
        return cm.exception

    def test_finds_the_entry_by_prefix(self):
        entry = bench.run_benchmark(self.make(benches()), "matmul/v1_naive/4096", 20,
                                    {"LABKIT_SEED": "5"})
        self.assertEqual(entry["run_name"], f"matmul/v1_naive/4096/{SUFFIX}")
        self.assertEqual(entry["ratio"], 0.07)
        self.assertEqual(entry["GFLOPS"], 3000.0)
        self.assertEqual(entry["student_ms"], 45.8)

    def test_filter_is_anchored_and_ends_at_a_slash(self):
        bench.run_benchmark(self.make(benches()), "matmul/v1_naive/4096", 20, {"LABKIT_SEED": "5"})
        run = fakes.read_log(self.log)[-1]
        self.assertEqual(run["seed"], "5")
        filters = [a.split("=", 1)[1] for a in run["argv"] if a.startswith("--benchmark_filter=")]
        self.assertEqual(len(filters), 1)
        rx = re.compile(filters[0])
        self.assertTrue(rx.search(f"matmul/v1_naive/4096/{SUFFIX}"))
        self.assertTrue(rx.search("matmul/v1_naive/4096"))
        self.assertFalse(rx.search(f"matmul/v1_naive/40960/{SUFFIX}"))
        self.assertFalse(rx.search(f"x/matmul/v1_naive/4096/{SUFFIX}"))
        self.assertFalse(rx.search("matmul/v1_naive/1024/iterations:20/manual_time"))
        self.assertIn("--benchmark_out_format=json", run["argv"])

    def test_prefix_must_end_at_a_slash_in_the_output_too(self):
        # A benchmark binary that ignores the filter and reports everything: 40960 comes first
        # but is not 4096.
        binary = fakes.write_executable(self.dir / "nofilter_bench", f"""
            out = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--benchmark_out=')][0]
            json.dump({{"context": {{}}, "benchmarks": [
                {{"name": "matmul/v1_naive/40960/{SUFFIX}", "run_name": "matmul/v1_naive/40960/{SUFFIX}",
                  "ratio": 0.9}},
                {{"name": "matmul/v1_naive/4096/{SUFFIX}", "run_name": "matmul/v1_naive/4096/{SUFFIX}",
                  "ratio": 0.07}}]}}, open(out, 'w'))
        """)
        entry = bench.run_benchmark(binary, "matmul/v1_naive/4096", 20)
        self.assertEqual(entry["ratio"], 0.07)

    def test_entry_without_run_name_is_found_by_name(self):
        binary = fakes.write_executable(self.dir / "old_bench", f"""
            out = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--benchmark_out=')][0]
            json.dump({{"context": {{}}, "benchmarks": [
                {{"name": "matmul/v1_naive/4096/{SUFFIX}", "ratio": 0.02}}]}}, open(out, 'w'))
        """)
        self.assertEqual(bench.run_benchmark(binary, "matmul/v1_naive/4096", 20)["ratio"], 0.02)

    def test_error_occurred_is_failed_with_its_message(self):
        e = self.assertBenchError(self.make(benches("error")), "failed")
        self.assertEqual(e.message, fakes.ERROR_MESSAGE)

    def test_crash(self):
        self.assertBenchError(self.make(benches("segv")), "failed", "no result", "SIGSEGV")

    def test_nonzero_exit_without_output(self):
        binary = fakes.write_executable(self.dir / "nogpu_bench", """
            print("no CUDA GPU: no device; benchmark skipped", file=sys.stderr)
            sys.exit(77)
        """)
        self.assertBenchError(binary, "failed", "exit code 77", "no CUDA GPU")

    def test_unreadable_json(self):
        binary = fakes.write_executable(self.dir / "half_bench", """
            out = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--benchmark_out=')][0]
            open(out, 'w').write('{"context": {}, "benchmarks": [')
            sys.exit(1)
        """)
        self.assertBenchError(binary, "failed", "no result", "exit code 1")

    def test_missing_benchmark_name(self):
        e = self.assertBenchError(self.make(benches()), "failed", "no benchmark named",
                                  "'matmul/v3_fast/4096'", name="matmul/v3_fast/4096")
        self.assertIn("exit code 0", e.message)

    def test_missing_name_when_only_other_sizes_exist(self):
        entries = [b for b in benches() if "/4096/" not in b[0] or "v2_tiled" in b[0]]
        self.assertBenchError(self.make(entries), "failed", "no benchmark named",
                              "'matmul/v1_naive/4096'")

    def test_hang_is_a_timeout(self):
        start = time.monotonic()
        e = self.assertBenchError(self.make(benches("hang")), "timeout", "within 1 s", "killed",
                                  timeout_s=1)
        self.assertLess(time.monotonic() - start, 10)
        self.assertNotIn("no result", e.message)


if __name__ == "__main__":
    unittest.main()
