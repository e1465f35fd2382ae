"""The grading pipeline without CUDA: fake test and benchmark binaries in a fake build dir.

grade.grade_lab is run for real on the fakes; grade.grade is run with CMake (build.configure,
build.build_targets) replaced by stand-ins, so that staging, the GPU probe, scoring and statuses
are exercised end to end. Also: report.render, GradeResult.to_json, and cli.main's usage errors.
"""

import contextlib
import copy
import io
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from grader import build, cli, gpulock, grade, report
from grader.config import parse_lab_config
from grader.errors import GraderError
from grader.results import (BuildResult, GradeResult, GroupResult, LabResult, PerfResult,
                            TestResult)
from grader.tests import fakes

LAB = "01_naive_matmul"
PUB, HID = "Shapes/MatmulPublic", "Shapes/MatmulHidden"
BENCH = "matmul/v1_naive/4096"

CONFIG = {
    "lab": {"title": "Naive matmul", "student_files": ["matmul.cu"], "test_timeout_s": 10},
    "correctness": [{"name": "public", "filter": "*MatmulPublic*", "points": 30},
                    {"name": "hidden", "filter": "*MatmulHidden*", "points": 50}],
    "performance": {"points": 20, "benchmark": BENCH, "metric": "ratio",
                    "metric_label": "speed / cuBLAS", "target": 0.05, "floor": 0.01,
                    "timeout_s": 20},
}


def cfg(**perf_changes):
    data = copy.deepcopy(CONFIG)
    data["performance"].update(perf_changes)
    return parse_lab_config(LAB, data)


def tests_all_pass():
    return [(PUB, "MatchesCpuReference/v1_naive_M1_N1_K1", "pass"),
            (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "pass"),
            (PUB, "MatchesCpuReference/v1_naive_M64_N64_K64", "pass"),
            (HID, "MatchesCpuReference/v1_naive_M1_N1_K1", "seed"),
            (HID, "MatchesCpuReference/v1_naive_M9_N9_K9", "pass")]


def benches(ratio=0.03, how="ok", counters=None):
    c = {"ratio": ratio, "GFLOPS": 3000.0, "cublas_GFLOPS": 50000.0}
    c.update(counters or {})
    return [("matmul/v1_naive/1024/iterations:20/manual_time", "ok", {"ratio": 0.99}),
            (f"{BENCH}/iterations:10/manual_time", how, c)]


class FakeBuildDir:
    """A build dir with fake binaries where grade.find_binary looks (nested, like CMake's)."""

    def __init__(self, root: Path, tests, bench_entries, gpu=None):
        self.root = root
        self.log = root / "fake-runs.log"
        out = root / "labs" / LAB
        lock = gpulock.DEFAULT_LOCK     # patched to a temporary file by TempDirTest
        self.test_bin = fakes.fake_gtest(out / f"{LAB}_test", tests, log=self.log, lock=lock)
        self.bench_bin = fakes.fake_bench(out / f"{LAB}_bench", bench_entries, log=self.log,
                                          lock=lock)
        gpu = gpu if gpu is not None else {"available": True, "reason": "",
                                           "name": "Fake GPU 80GB (sm_90)"}
        fakes.write_executable(root / "common" / "labkit_gpu_info", f"""
            print("some driver chatter")
            print(json.dumps({gpu!r}))
            sys.exit(0 if {gpu.get('available')!r} else 1)
        """)

    def runs(self):
        return fakes.read_log(self.log)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = Path(self._tmp.name)
        # The grader's GPU lock, private to this test: never wait on a real grader's lock.
        patcher = mock.patch.object(gpulock, "DEFAULT_LOCK", self.tmp / "gpu.lock")
        patcher.start()
        self.addCleanup(patcher.stop)

    def tearDown(self):
        self._tmp.cleanup()


class GradeLabTest(TempDirTest):
    def grade_lab(self, tests, bench_entries, config=None, seed=1234, run_performance=True):
        self.build = FakeBuildDir(self.tmp / "build", tests, bench_entries)
        config = config or cfg()
        lab = LabResult(lab=config.name, title=config.title, max_points=config.max_points)
        self.progress = []
        grade.grade_lab(config, lab, self.build.root, seed, run_performance, self.progress.append)
        return lab

    def test_find_binary(self):
        b = FakeBuildDir(self.tmp / "build", tests_all_pass(), benches())
        self.assertEqual(grade.find_binary(b.root, f"{LAB}_test"), b.test_bin)
        self.assertEqual(grade.find_binary(b.root, f"{LAB}_bench"), b.bench_bin)
        with self.assertRaises(GraderError) as cm:
            grade.find_binary(b.root, "02_missing_test")
        self.assertIn("02_missing_test", cm.exception.message)

    def test_all_pass_measures_performance_partial_points(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.03))
        self.assertEqual(lab.status, "graded")
        self.assertEqual([(g.name, len(g.tests), g.passed_count, g.points, g.max_points)
                          for g in lab.groups],
                         [("public", 3, 3, 30.0, 30.0), ("hidden", 2, 2, 50.0, 50.0)])
        p = lab.performance
        self.assertEqual(p.status, "measured", p.message)
        self.assertEqual(p.metric, 0.03)
        self.assertEqual(p.points, 10.0)          # halfway between floor 0.01 and target 0.05
        self.assertEqual(p.max_points, 20.0)
        self.assertEqual((p.target, p.floor, p.label), (0.05, 0.01, "speed / cuBLAS"))
        self.assertEqual(p.counters["GFLOPS"], 3000.0)
        self.assertTrue(all(isinstance(v, (int, float)) for v in p.counters.values()))
        self.assertNotIn("name", p.counters)
        self.assertEqual(lab.points, 90.0)
        self.assertEqual(lab.max_points, 100.0)
        self.assertTrue(any("benchmark" in m for m in self.progress))
        self.assertTrue(any("hidden 2/2" in m for m in self.progress))

    def test_fast_enough_gets_all_points(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.08))
        self.assertEqual(lab.performance.points, 20.0)
        self.assertEqual(lab.points, 100.0)

    def test_too_slow_gets_no_performance_points(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.005))
        self.assertEqual(lab.performance.status, "measured")
        self.assertEqual(lab.performance.points, 0.0)
        self.assertEqual(lab.points, 80.0)

    def test_points_per_group_and_gating(self):
        tests = [(PUB, "A/1", "pass"), (PUB, "A/2", "fail"), (PUB, "A/3", "pass"),
                 (HID, "B/1", "pass"), (HID, "B/2", "segv"), (HID, "B/3", "skip"),
                 (HID, "B/4", "pass")]
        lab = self.grade_lab(tests, benches(ratio=0.08))
        pub, hid = lab.groups
        self.assertEqual((pub.passed_count, len(pub.tests), pub.points), (2, 3, 20.0))
        self.assertEqual((hid.passed_count, len(hid.tests), hid.points), (2, 4, 25.0))
        self.assertEqual([t.status for t in pub.tests], ["passed", "failed", "passed"])
        self.assertEqual([t.status for t in hid.tests], ["passed", "crashed", "skipped", "passed"])
        self.assertEqual(pub.tests[1].name, f"{PUB}.A/2")
        self.assertEqual(lab.performance.status, "gated")
        self.assertEqual(lab.performance.points, 0.0)
        self.assertIn("every correctness test must pass", lab.performance.message)
        self.assertEqual(lab.points, 45.0)
        self.assertEqual(lab.max_points, 100.0)
        # the benchmark was never started
        self.assertFalse(any(any(a.startswith("--benchmark") for a in r["argv"])
                             for r in self.build.runs()))

    def test_one_failure_gates_even_with_a_fast_benchmark(self):
        tests = tests_all_pass()
        tests[-1] = (HID, "MatchesCpuReference/v1_naive_M9_N9_K9", "fail")
        lab = self.grade_lab(tests, benches(ratio=1.0))
        self.assertEqual(lab.performance.status, "gated")
        self.assertEqual(lab.groups[1].points, 25.0)
        self.assertEqual(lab.points, 55.0)

    def test_hidden_group_without_tests(self):
        public_only = [t for t in tests_all_pass() if t[0] == PUB]
        lab = self.grade_lab(public_only, benches(ratio=0.03))
        pub, hid = lab.groups
        self.assertEqual(pub.points, 30.0)
        self.assertEqual(hid.tests, [])
        self.assertEqual(hid.max_points, 0.0)
        self.assertEqual(hid.points, 0.0)
        self.assertIn("no tests in this build", hid.note)
        # an absent group does not gate performance
        self.assertEqual(lab.performance.status, "measured")
        self.assertEqual(lab.points, 40.0)
        self.assertEqual(lab.max_points, 50.0)     # 30 public + 20 performance

    def test_seed_reaches_tests_and_benchmark(self):
        lab = self.grade_lab(tests_all_pass(), benches(), seed=1234)
        self.assertEqual(lab.groups[1].tests[0].status, "passed")
        runs = self.build.runs()
        test_runs = [r for r in runs if any(a.startswith("--gtest_filter=") for a in r["argv"])]
        bench_runs = [r for r in runs if any(a.startswith("--benchmark") for a in r["argv"])]
        self.assertEqual(len(test_runs), 5)        # one process per test
        self.assertEqual({r["seed"] for r in test_runs}, {"1234"})
        self.assertEqual([r["seed"] for r in bench_runs], ["1234"])

    def test_gpu_lock_shared_for_tests_exclusive_for_the_benchmark(self):
        self.grade_lab(tests_all_pass(), benches())
        runs = self.build.runs()
        listing = [r for r in runs if "--gtest_list_tests" in r["argv"]]
        test_runs = [r for r in runs if any(a.startswith("--gtest_filter=") for a in r["argv"])]
        bench_runs = [r for r in runs if any(a.startswith("--benchmark") for a in r["argv"])]
        self.assertEqual({r["lock"] for r in test_runs}, {"shared"})
        self.assertEqual([r["lock"] for r in bench_runs], ["exclusive"])
        self.assertEqual([r["lock"] for r in listing], ["free"])
        # released afterwards
        import fcntl
        with open(gpulock.DEFAULT_LOCK, "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def test_wrong_seed_fails_the_seeded_test(self):
        lab = self.grade_lab(tests_all_pass(), benches(), seed=99)
        t = lab.groups[1].tests[0]
        self.assertEqual(t.status, "failed")
        self.assertIn("'99'", t.message)
        self.assertEqual(lab.groups[1].points, 25.0)
        self.assertEqual(lab.performance.status, "gated")

    def test_no_performance_flag(self):
        lab = self.grade_lab(tests_all_pass(), benches(), run_performance=False)
        self.assertEqual(lab.performance.status, "not_run")
        self.assertEqual(lab.performance.points, 0.0)
        self.assertEqual(lab.points, 80.0)
        self.assertEqual(lab.max_points, 100.0)

    def test_benchmark_error(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="error"))
        self.assertEqual(lab.performance.status, "failed")
        self.assertEqual(lab.performance.message, fakes.ERROR_MESSAGE)
        self.assertEqual(lab.performance.points, 0.0)
        self.assertEqual(lab.points, 80.0)

    def test_benchmark_hang(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="hang"), config=cfg(timeout_s=1))
        self.assertEqual(lab.performance.status, "timeout")
        self.assertEqual(lab.performance.points, 0.0)

    def test_benchmark_without_the_metric(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="no_ratio"))
        self.assertEqual(lab.performance.status, "failed")
        self.assertIn("'ratio'", lab.performance.message)
        self.assertEqual(lab.performance.counters["GFLOPS"], 3000.0)
        self.assertEqual(lab.performance.points, 0.0)

    def test_other_metric(self):
        lab = self.grade_lab(tests_all_pass(), benches(counters={"GFLOPS": 2000.0}),
                             config=cfg(metric="GFLOPS", target=3000.0, floor=1000.0))
        self.assertEqual(lab.performance.metric, 2000.0)
        self.assertEqual(lab.performance.points, 10.0)

    def test_no_performance_section(self):
        data = copy.deepcopy(CONFIG)
        del data["performance"]
        lab = self.grade_lab(tests_all_pass(), benches(), config=parse_lab_config(LAB, data))
        self.assertIsNone(lab.performance)
        self.assertEqual((lab.points, lab.max_points), (80.0, 80.0))

    def test_listing_failure_is_a_lab_error(self):
        self.build = FakeBuildDir(self.tmp / "build", tests_all_pass(), benches())
        fakes.write_executable(self.build.test_bin, "print('boom', file=sys.stderr)\nsys.exit(3)\n")
        config = cfg()
        lab = LabResult(lab=LAB, title=config.title, max_points=config.max_points)
        grade.grade_lab(config, lab, self.build.root, 1, True, lambda m: None)
        self.assertEqual(lab.status, "error")
        self.assertIn("could not list", lab.message)
        self.assertIn("boom", lab.message)
        self.assertEqual([(g.name, g.tests, g.points) for g in lab.groups],
                         [("public", [], 0.0), ("hidden", [], 0.0)])
        self.assertEqual(lab.points, 0.0)


class GradeFlowTest(TempDirTest):
    """grade.grade with CMake replaced: staging, the GPU probe, statuses, max points."""

    def setUp(self):
        super().setUp()
        self.submission = self.tmp / "submission"
        (self.submission / LAB).mkdir(parents=True)
        (self.submission / LAB / "matmul.cu").write_text("// student code\n")
        self.build_dir = self.tmp / "build"
        self.calls = []

    def run_grade(self, gpu=None, tests=None, lab_build_ok=True, seed=1234, test_timeout_s=None):
        self.fake = FakeBuildDir(self.build_dir, tests or tests_all_pass(), benches(0.03), gpu=gpu)
        stage = self.build_dir / "submission"

        def configure(repo, build_dir, stage_dir, labs):
            self.calls.append(("configure", labs))
            self.assertEqual(stage_dir, stage)
            self.assertTrue((stage_dir / LAB / "matmul.cu").is_file())
            return BuildResult(ok=True, seconds=0.5)

        def build_targets(build_dir, targets, jobs=None):
            self.calls.append(("build", targets))
            if targets == ["labkit_gpu_info"] or lab_build_ok:
                return BuildResult(ok=True, seconds=1.0)
            return BuildResult(ok=False, seconds=1.0,
                               log=f"{stage}/{LAB}/matmul.cu(3): error: expected a \";\"",
                               hint=f"your file does not compile ({stage}/{LAB}/matmul.cu)")

        with mock.patch.object(build, "configure", configure), \
                mock.patch.object(build, "build_targets", build_targets):
            return grade.grade(Path("/repo"), self.submission, [cfg()], seed, self.build_dir,
                               jobs=2, run_performance=True, progress=lambda m: None,
                               test_timeout_s=test_timeout_s)

    def test_graded_on_a_gpu(self):
        r = self.run_grade()
        self.assertEqual(r.status, "graded")
        self.assertEqual(r.gpu["name"], "Fake GPU 80GB (sm_90)")
        self.assertEqual(r.seed, 1234)
        lab = r.labs[0]
        self.assertEqual(lab.status, "graded")
        self.assertEqual(lab.files, {"matmul.cu": build.sha256(self.submission / LAB / "matmul.cu")})
        self.assertEqual((r.points, r.max_points), (90.0, 100.0))
        self.assertEqual(self.calls, [("configure", [LAB]), ("build", ["labkit_gpu_info"]),
                                      ("build", [f"{LAB}_test", f"{LAB}_bench"])])
        text = report.render(r)
        self.assertIn("TOTAL 90.00 / 100", text)
        self.assertIn("Fake GPU 80GB", text)
        self.assertNotIn("NOT GRADED ON A GPU", text)

    def test_test_timeout_override(self):
        tests = tests_all_pass()
        tests[1] = (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "hang")   # config says 10 s
        r = self.run_grade(tests=tests, test_timeout_s=1)
        t = r.labs[0].groups[0].tests[1]
        self.assertEqual(t.status, "timeout")
        self.assertIn("within 1 s", t.message)
        self.assertLess(t.seconds, 5)
        self.assertEqual(r.labs[0].performance.status, "gated")
        self.assertEqual(r.points, 70.0)

    def test_no_gpu(self):
        r = self.run_grade(gpu={"available": False, "reason": "no CUDA-capable device is detected",
                                "name": ""})
        self.assertEqual(r.status, "no_gpu")
        self.assertIn("no CUDA-capable device", r.message)
        lab = r.labs[0]
        self.assertEqual(lab.status, "no_gpu")
        self.assertIn("The build succeeded", lab.message)
        self.assertEqual([(g.name, g.tests, g.note, g.points) for g in lab.groups],
                         [("public", [], "not run: no GPU", 0.0),
                          ("hidden", [], "not run: no GPU", 0.0)])
        self.assertEqual(lab.performance.status, "not_run")
        self.assertEqual((r.points, r.max_points), (0.0, 100.0))
        self.assertEqual(self.fake.runs(), [])      # no test or benchmark process was started
        text = report.render(r)
        self.assertIn("NOT GRADED ON A GPU", text)
        self.assertIn("no CUDA-capable device", text)

    def test_gpu_probe(self):
        probe = self.build_dir / "labkit_gpu_info"
        fakes.write_executable(probe, """
            print("driver chatter")
            print(json.dumps({"available": True, "reason": "", "name": "Fake GPU"}))
        """)
        self.assertEqual(grade.probe_gpu(probe), {"available": True, "reason": "", "name": "Fake GPU"})
        fakes.write_executable(probe, "print('Segmentation fault')\nsys.exit(139)\n")
        info = grade.probe_gpu(probe)
        self.assertFalse(info["available"])
        self.assertIn("exit 139", info["reason"])
        self.assertIn("Segmentation fault", info["reason"])
        fakes.write_executable(probe, "sys.exit(1)\n")      # no output at all
        self.assertFalse(grade.probe_gpu(probe)["available"])

    def test_missing_files(self):
        (self.submission / LAB / "matmul.cu").unlink()
        r = self.run_grade()
        self.assertEqual(r.status, "missing_files")
        lab = r.labs[0]
        self.assertEqual(lab.status, "missing_files")
        self.assertIn("matmul.cu", lab.message)
        self.assertEqual(self.calls, [])             # nothing configured or built
        self.assertEqual(r.points, 0.0)
        self.assertIn("matmul.cu", report.render(r))

    def test_lab_error_is_recorded(self):
        self.run_grade()   # creates the fakes
        fakes.write_executable(self.fake.test_bin, "print('libcudart.so.12: cannot open')\n"
                                                   "sys.exit(127)\n")
        with mock.patch.object(build, "configure", lambda *a: BuildResult(ok=True)), \
                mock.patch.object(build, "build_targets", lambda *a: BuildResult(ok=True)):
            r = grade.grade(Path("/repo"), self.submission, [cfg()], 1, self.build_dir)
        lab = r.labs[0]
        self.assertEqual(lab.status, "error")
        self.assertIn("libcudart", lab.message)
        self.assertEqual(r.points, 0.0)
        self.assertIn("libcudart", report.render(r))

    def test_lab_error_makes_the_grade_an_error(self):
        # Known gap (grader 0.1.0): a lab whose tests could not even be listed leaves the
        # overall status 'graded' (CLI exit 0), as if 0 points were a valid grade.
        # GradeResult documents an 'error' status that nothing sets.
        self.run_grade()
        fakes.write_executable(self.fake.test_bin, "sys.exit(127)\n")
        with mock.patch.object(build, "configure", lambda *a: BuildResult(ok=True)), \
                mock.patch.object(build, "build_targets", lambda *a: BuildResult(ok=True)):
            r = grade.grade(Path("/repo"), self.submission, [cfg()], 1, self.build_dir)
        self.assertEqual(r.labs[0].status, "error")
        self.assertEqual(r.status, "error")

    def test_build_failure(self):
        r = self.run_grade(lab_build_ok=False)
        self.assertEqual(r.status, "build_failed")
        lab = r.labs[0]
        self.assertEqual(lab.status, "build_failed")
        self.assertFalse(lab.build.ok)
        # the staging dir is cut from what the student reads
        stage = str(self.build_dir / "submission")
        self.assertNotIn(stage, lab.build.log)
        self.assertNotIn(stage, lab.message)
        self.assertIn(f"{LAB}/matmul.cu(3): error", lab.build.log)
        self.assertEqual(lab.message, lab.build.hint)
        self.assertEqual(self.fake.runs(), [])
        self.assertEqual(r.points, 0.0)
        text = report.render(r)
        self.assertIn("FAILED", text)
        self.assertIn("expected a", text)


class ReportTest(unittest.TestCase):
    def result(self, status="graded"):
        failing = TestResult(f"{PUB}.MatchesCpuReference/v1_naive_M7_N3_K5", "failed",
                             "C[3,4] = 1.5, expected 2.5 (tolerance 1e-4)\n  2 of 21 elements "
                             "differ", 0.2)
        crashed = TestResult(f"{HID}.MatchesCpuReference/v1_naive_M9_N9_K9", "crashed",
                             "the test process crashed (SIGSEGV)", 0.1)
        pub = GroupResult("public", "*MatmulPublic*", 30.0, points=20.0,
                          tests=[TestResult(f"{PUB}.ok", "passed"), failing,
                                 TestResult(f"{PUB}.ok2", "passed")])
        hid = GroupResult("hidden", "*MatmulHidden*", 50.0, points=25.0,
                          tests=[TestResult(f"{HID}.ok", "passed"), crashed])
        perf = PerfResult(max_points=20.0, status="gated", target=0.05, floor=0.01,
                          label="speed / cuBLAS", message="not measured")
        lab = LabResult(lab=LAB, title="Naive matmul", max_points=100.0, points=45.0,
                        build=BuildResult(ok=True, seconds=12.3), groups=[pub, hid],
                        performance=perf, files={"matmul.cu": "ab" * 32})
        r = GradeResult(submission="/subs/alice", seed=4242, grader_version="0.1.0", status=status,
                        message="no CUDA GPU: no device" if status == "no_gpu" else "",
                        gpu={"available": True, "name": "NVIDIA H100"}, labs=[lab],
                        started="2024-01-01T00:00:00+00:00", seconds=3.5)
        return r

    def test_render(self):
        text = report.render(self.result(), "out.json")
        self.assertIn("TOTAL 45.00 / 100", text)
        self.assertIn("(results: out.json)", text)
        self.assertIn("seed 4242", text)
        self.assertIn("NVIDIA H100", text)
        self.assertIn("2/3 tests passed", text)
        self.assertIn("1/2 tests passed", text)
        self.assertIn(f"{PUB}.MatchesCpuReference/v1_naive_M7_N3_K5: FAILED", text)
        self.assertIn("C[3,4] = 1.5, expected 2.5 (tolerance 1e-4)", text)
        self.assertIn(f"{HID}.MatchesCpuReference/v1_naive_M9_N9_K9: CRASHED", text)
        self.assertIn("What went wrong:", text)
        self.assertIn("not measured: correctness first", text)
        self.assertNotIn(f"{PUB}.ok:", text)
        self.assertNotIn("NOT GRADED ON A GPU", text)
        self.assertEqual(text.splitlines()[-1], "TOTAL 45.00 / 100    (results: out.json)")

    def test_render_no_gpu(self):
        text = report.render(self.result("no_gpu"))
        self.assertIn("NOT GRADED ON A GPU: no CUDA GPU: no device", text)
        self.assertNotIn("(results:", text)

    def test_render_measured_and_perf_failure(self):
        r = self.result()
        r.labs[0].performance = PerfResult(max_points=20.0, points=10.0, status="measured",
                                           metric=0.03, target=0.05, floor=0.01, label="ratio")
        self.assertIn("0.03 ratio (target 0.05, floor 0.01)", report.render(r))
        r.labs[0].performance = PerfResult(max_points=20.0, status="failed",
                                           message="output differs from cuBLAS")
        text = report.render(r)
        self.assertIn("benchmark failed", text)
        self.assertIn("[performance] output differs from cuBLAS", text)

    def test_many_failures_are_summarised(self):
        r = self.result()
        r.labs[0].groups[0].tests = [TestResult(f"T.f{i}", "failed", f"msg {i}") for i in range(8)]
        text = report.render(r)
        self.assertIn("T.f4: FAILED", text)
        self.assertNotIn("T.f5: FAILED", text)
        self.assertIn("and 4 more failing tests", text)   # 3 more in public, 1 crashed in hidden

    def test_long_message_is_clipped(self):
        r = self.result()
        r.labs[0].groups[0].tests[1].message = "\n".join(f"line {i}" for i in range(100))
        text = report.render(r)
        self.assertIn("line 29", text)
        self.assertNotIn("line 30\n", text + "\n")
        self.assertIn("[... 70 more lines ...]", text)

    def test_to_json_round_trip(self):
        r = self.result()
        d = json.loads(r.to_json())
        self.assertEqual(d["points"], 45.0)
        self.assertEqual(d["max_points"], 100.0)
        self.assertEqual(d["seed"], 4242)
        self.assertEqual(d["status"], "graded")
        lab = d["labs"][0]
        self.assertEqual(lab["points"], 45.0)
        self.assertEqual(lab["groups"][0]["tests"][1]["status"], "failed")
        self.assertEqual(lab["groups"][1]["max_points"], 50.0)
        self.assertEqual(lab["performance"]["status"], "gated")
        self.assertEqual(lab["files"], {"matmul.cu": "ab" * 32})
        self.assertTrue(lab["build"]["ok"])
        self.assertEqual(d, r.to_dict())


class CliTest(unittest.TestCase):
    def main(self, argv):
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = cli.main(argv)
        return code, out.getvalue(), err.getvalue()

    def test_missing_submission(self):
        code, out, err = self.main(["grade", "--submission", "/nonexistent"])
        self.assertEqual(code, 2)
        self.assertIn("submission directory not found", err)
        self.assertIn("/nonexistent", err)
        self.assertEqual(out, "")

    def test_submission_that_is_a_file(self):
        with tempfile.NamedTemporaryFile() as f:
            code, _, err = self.main(["grade", "--submission", f.name])
        self.assertEqual(code, 2)
        self.assertIn("submission directory not found", err)

    def test_unknown_lab(self):
        code, out, err = self.main(["grade", "nosuchlab"])
        self.assertEqual(code, 2)
        self.assertIn("unknown lab 'nosuchlab'", err)
        self.assertIn("01_naive_matmul", err)
        self.assertEqual(out, "")

    def test_list(self):
        code, out, _ = self.main(["list"])
        self.assertEqual(code, 0)
        self.assertIn("01_naive_matmul", out)
        self.assertIn("100 points", out)

    def test_bad_arguments_exit_2(self):
        with self.assertRaises(SystemExit) as cm:
            self.main(["grade", "--seed", "notanumber"])
        self.assertEqual(cm.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
