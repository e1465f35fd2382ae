"""The grading pipeline without CUDA: fake judges, worker and GPU probe in a fake build dir with
a fake labs-manifest.json, and a fake grader.policy.

grade.grade_lab is run for real on the fakes; grade.grade is run with CMake (build.configure,
build.build_targets) replaced by stand-ins, so that staging, seeds, the policy step, binary
hashes, the GPU probe, scoring, statuses and exit codes are exercised end to end. Also:
report.render, GradeResult.to_json, and cli.main's checks of its arguments.
"""

import contextlib
import copy
import dataclasses
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest
from pathlib import Path
from unittest import mock

from grader import build, cli, console_report, gpulock, grade, judge, manifest, seeds
from grader.config import parse_lab_config
from grader.results import (BuildResult, GradeResult, GroupResult, LabResult, PerfResult,
                            PolicyReport, TestResult)
from grader.tests import fakes

LAB = "01_naive_matmul"
PUB, HID = "Shapes/MatmulPublic", "Shapes/MatmulHidden"
BENCH = "matmul/v1_naive/4096"
SECRET_TEXT = "TOP-SECRET-INSTRUCTOR-KEY-7f3a"

CONFIG = {
    "lab": {"title": "Naive matmul", "student_files": ["matmul.cu"], "test_timeout_s": 10},
    "correctness": [{"name": "public", "filter": "*MatmulPublic*", "points": 30},
                    {"name": "hidden", "filter": "*MatmulHidden*", "points": 50}],
    "performance": [{"points": 20, "benchmark": BENCH, "metric": "ratio",
                     "metric_label": "speed / cuBLAS", "target": 0.05, "floor": 0.01,
                     "timeout_s": 20, "bands": 4}],
    "policy": {"forbid_imports": ["cudaMemcpy*"]},
}


def cfg(data=None, **perf_changes):
    data = copy.deepcopy(data or CONFIG)
    data["performance"][0].update(perf_changes)
    with fakes.use_policy(fakes.FakePolicy()):
        return parse_lab_config(LAB, data)


def tests_all_pass():
    return [(PUB, "MatchesCpuReference/v1_naive_M1_N1_K1", "pass"),
            (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "pass"),
            (PUB, "MatchesCpuReference/v1_naive_M64_N64_K64", "pass"),
            (HID, "MatchesCpuReference/v1_naive_M1_N1_K1", "seed"),
            (HID, "MatchesCpuReference/v1_naive_M9_N9_K9", "pass")]


def tests_pass_any_seed():
    """tests_all_pass, the hidden test passing whatever the seed (not only 1234)."""
    return [(group, name, "pass") for group, name, _ in tests_all_pass()]


def benches(ratio=0.03, how="ok", counters=None):
    c = {"ratio": ratio, "ratio_lo": ratio * 0.98, "ratio_hi": ratio * 1.02, "GFLOPS": 3000.0,
         "baseline_GFLOPS": 50000.0}
    c.update(counters or {})
    return [("matmul/v1_naive/1024/iterations:20/manual_time", "ok", {"ratio": 0.99}),
            (f"{BENCH}/iterations:10/manual_time", how, c)]


class FakeBuildDir:
    """A build dir with fake binaries and the labs-manifest.json that names them."""

    def __init__(self, root: Path, tests, bench_entries, gpu=None, helper=False):
        self.root = root
        self.log = root / "fake-runs.log"
        out = root / "labs" / LAB
        lock = gpulock.DEFAULT_LOCK     # patched to a temporary file by TempDirTest
        self.test_bin = fakes.fake_judge(out / f"{LAB}_test", tests, log=self.log, lock=lock)
        self.bench_bin = fakes.fake_bench(out / f"{LAB}_bench", bench_entries, log=self.log,
                                          lock=lock)
        self.worker = fakes.fake_worker(out / f"{LAB}_worker")
        extra = {}
        if helper:   # v1_naive alone given a helper library: its own worker
            self.helper = fakes.fake_worker(out / f"{LAB}_helper_worker")
            extra["helper_worker"] = (self.helper, ["v1_naive"])
        self.gpu_info = fakes.fake_gpu_info(
            root / "common" / "labkit_gpu_info",
            gpu if gpu is not None else {"available": True, "reason": "",
                                         "name": "Fake GPU 80GB (sm_90)"})
        self.obj = out / "matmul.cu.o"
        self.obj.write_bytes(b"\x7fELF fake object")
        self.manifest = fakes.write_manifest(
            root, {LAB: {"test": self.test_bin, "bench": self.bench_bin, "worker": self.worker,
                         "objects": [self.obj],
                         "sources": [root / "submission" / LAB / "matmul.cu"],
                         "headers": [Path("/repo/labs") / LAB / "matmul.h"], **extra}},
            gpu_info=self.gpu_info, compile_commands=root / "compile_commands.json")

    def paths(self) -> manifest.LabPaths:
        return manifest.load_manifest(self.root).lab(LAB)

    def hashes(self) -> judge.BinaryHashes:
        h = judge.BinaryHashes()
        p = self.paths()
        for t in (p.test, p.bench, *p.workers):
            h.record(t.target, t.path)
        return h

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
    def grade_lab(self, tests, bench_entries, config=None, seed=1234, run_performance=True,
                  sanitizer=None, sanitize=True, helper=False, before=None):
        self.build = FakeBuildDir(self.tmp / "build", tests, bench_entries, helper=helper)
        hashes = self.build.hashes()
        if before:
            before(self.build)
        config = config or cfg()
        lab = LabResult(lab=config.name, title=config.title, max_points=config.max_points,
                        seed=seed)
        self.progress = []
        grade.grade_lab(config, lab, self.build.paths(), hashes, run_performance,
                        self.progress.append, sanitizer=sanitizer, sanitize=sanitize)
        return lab

    def test_all_pass_measures_performance_in_bands(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.03))
        self.assertEqual(lab.status, "graded")
        self.assertEqual([(g.name, len(g.tests), g.passed_count, g.points, g.max_points)
                          for g in lab.groups],
                         [("public", 3, 3, 30.0, 30.0), ("hidden", 2, 2, 50.0, 50.0)])
        (p,) = lab.performance
        self.assertEqual(p.status, "measured", p.message)
        self.assertEqual(p.metric, 0.03)
        self.assertEqual((p.band, p.bands), (2, 4))   # halfway between floor 0.01 and 0.05
        self.assertEqual(p.points, 10.0)
        self.assertEqual((p.metric_lo, p.metric_hi), (0.03 * 0.98, 0.03 * 1.02))
        self.assertEqual(p.max_points, 20.0)
        self.assertEqual((p.target, p.floor, p.label, p.name), (0.05, 0.01, "speed / cuBLAS",
                                                                BENCH))
        self.assertEqual(p.counters["GFLOPS"], 3000.0)
        self.assertTrue(all(isinstance(v, (int, float)) for v in p.counters.values()))
        self.assertNotIn("name", p.counters)
        self.assertEqual(p.baseline, "")      # the benchmark named no baseline
        self.assertEqual(lab.points, 90.0)
        self.assertEqual(lab.max_points, 100.0)
        self.assertEqual(lab.sandbox["sandbox"], fakes.WORKER_EVENT["sandbox"])
        self.assertTrue(any("benchmarking" in m for m in self.progress))

    def test_the_baseline_and_its_version_are_kept_beside_the_ratio(self):
        # The bench judge's label names the library with its version (bench::version_text); a
        # label that is not text is no baseline.
        lab = self.grade_lab(tests_all_pass(), benches(counters={
            "label": "cuBLAS SGEMM (FP32, cuBLAS 13.0.2)"}))
        (p,) = lab.performance
        self.assertEqual(p.baseline, "cuBLAS SGEMM (FP32, cuBLAS 13.0.2)")
        self.assertNotIn("label", p.counters)
        lab = self.grade_lab(tests_all_pass(), benches(counters={"label": 7}))
        self.assertEqual(lab.performance[0].baseline, "")

    def test_one_judge_run_for_all_tests(self):
        self.grade_lab(tests_all_pass(), benches())
        runs = self.build.runs()
        test_runs = [r for r in runs if any(a.startswith("--gtest_filter=") for a in r["argv"])]
        self.assertEqual(len(test_runs), 1)
        self.assertIn("--gtest_filter=*MatmulPublic*:*MatmulHidden*", test_runs[0]["argv"])
        self.assertIn(f"--labkit-worker={self.build.worker}", test_runs[0]["argv"])
        self.assertIn("--labkit-call-timeout=10", test_runs[0]["argv"])
        # The judge's own budget for its tests: grading.toml's test_budget_s, default 240 s.
        self.assertIn("--labkit-test-budget=240", test_runs[0]["argv"])
        # Large calls take turns with other gradings' through the lock beside the GPU lock.
        lock = gpulock.memory_lock_path()
        self.assertEqual(lock.parent,
                         Path(gpulock.DEFAULT_LOCK or gpulock.default_lock_path()).parent)
        self.assertIn(f"--labkit-memory-lock={lock.absolute()}", test_runs[0]["argv"])

    def test_a_lab_that_refuses_shared_memory_has_its_executor_refuse_it_too(self):
        # The SASS rule cannot see a generic address into the shared window; the executor
        # refuses any dynamic shared memory, in the tests' judges and the benchmark's alike.
        def judges(config):
            self.grade_lab(tests_all_pass(), benches(ratio=0.03), config=config)
            return [r["argv"] for r in self.build.runs()
                    if any(a.startswith("--labkit-worker=") for a in r["argv"])]
        plain = judges(cfg())
        self.assertEqual(len(plain), 2)   # the tests' judge and the benchmark's
        self.assertFalse(any("--labkit-no-shared-memory" in argv for argv in plain), plain)
        rules = types.SimpleNamespace(forbid_device_instructions=("tensor_cores", "shared_memory"))
        refusing = judges(dataclasses.replace(cfg(), policy=rules))[len(plain):]  # the log grows
        self.assertEqual(len(refusing), 2)
        self.assertTrue(all("--labkit-no-shared-memory" in argv for argv in refusing), refusing)

    def test_many_tests_are_split_among_judges_with_the_same_verdicts(self):
        tests = tests_all_pass()
        tests[1] = (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "fail")
        one = self.grade_lab(tests, benches(ratio=0.03))
        with mock.patch.object(grade, "TESTS_PER_JUDGE", 2):
            split = self.grade_lab(tests, benches(ratio=0.03))
        verdicts = lambda lab: [(t.name, t.status) for g in lab.groups for t in g.tests]
        self.assertEqual(verdicts(split), verdicts(one))
        self.assertEqual(split.points, one.points)
        runs = [r for r in self.build.runs() if any(a.startswith("--gtest_filter=") for a in r["argv"])]
        # One judge first, with the groups' filter; then 5 tests, 2 per judge: 3 judges, each
        # given its shard's tests by name (no GoogleTest sharding), together every test once
        self.assertEqual(len(runs), 4)
        self.assertIn("--gtest_filter=*MatmulPublic*:*MatmulHidden*", runs[0]["argv"])
        self.assertFalse(any("GTEST_TOTAL_SHARDS" in r["env"] for r in runs))
        given = [[a[len("--gtest_filter="):] for a in r["argv"] if a.startswith("--gtest_filter=")]
                 for r in runs[1:]]
        named = [n for g in given for n in g[0].split(":")]
        self.assertEqual(sorted(named), sorted(f"{s}.{t}" for s, t, *_ in tests))
        self.assertEqual(sorted(len(g[0].split(":")) for g in given), [1, 2, 2])
        # The three judges of the split count each variant's hangs and crashes in one file
        # (the first judge, of the unsplit grading, in one of its own).
        streaks = [[a for a in r["argv"] if a.startswith("--labkit-streaks=/")] for r in runs]
        self.assertTrue(all(len(s) == 1 for s in streaks), streaks)
        self.assertEqual(len({s[0] for s in streaks[1:]}), 1, streaks)
        self.assertNotEqual(streaks[0], streaks[1])

    def test_a_crashed_judge_costs_only_the_tests_of_its_shard(self):
        tests = tests_all_pass()
        tests[1] = (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "judge_crash")   # shard 1 of 2
        with mock.patch.object(grade, "TESTS_PER_JUDGE", 3):
            lab = self.grade_lab(tests, benches(ratio=0.08))
        statuses = [t.status for g in lab.groups for t in g.tests]
        # shard 0 runs tests 0, 2, 4; shard 1 runs 1, then 3, which its crash left unreported
        self.assertEqual(statuses, ["passed", "crashed", "passed", "crashed", "passed"])
        self.assertIn("crashed (SIGSEGV)", lab.groups[1].tests[0].message)
        self.assertEqual(lab.performance[0].status, "gated")

    def test_judges_per_lab(self):
        self.assertEqual([grade.test_judges(n) for n in (0, 1, 64, 65, 128, 129, 500)],
                         [1, 1, 1, 2, 2, 3, 3])

    def test_a_helper_worker_gets_its_variants_in_tests_and_benchmarks(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.03), helper=True)
        self.assertEqual(lab.status, "graded", lab.message)
        runs = [r for r in self.build.runs()
                if any(a.startswith("--labkit-worker=") for a in r["argv"])]
        route = f"--labkit-worker-for=v1_naive={self.build.helper}"
        self.assertEqual(len(runs), 2, runs)    # the test judge, then the bench judge
        for r in runs:
            self.assertIn(f"--labkit-worker={self.build.worker}", r["argv"])
            self.assertIn(route, r["argv"])
        # Without a helper, no route.
        self.build.log.unlink()
        self.grade_lab(tests_all_pass(), benches(ratio=0.03))
        self.assertFalse(any(a.startswith("--labkit-worker-for")
                             for r in self.build.runs() for a in r["argv"]))

    def test_a_changed_helper_worker_is_never_run(self):
        lab = self.grade_lab(tests_all_pass(), benches(), helper=True,
                             before=lambda b: b.helper.write_text("#!/bin/sh\nevil\n"))
        self.assertEqual(lab.status, "error")
        self.assertIn(f"{LAB}_helper_worker", lab.message)
        self.assertFalse(any(a.startswith("--labkit-worker=")
                             for r in self.build.runs() for a in r["argv"]))

    def test_just_under_a_band_edge(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.0299))
        self.assertEqual((lab.performance[0].band, lab.performance[0].points), (1, 5.0))
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.04))
        self.assertEqual((lab.performance[0].band, lab.performance[0].points), (3, 15.0))

    def test_fast_enough_gets_all_points(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.08))
        self.assertEqual(lab.performance[0].points, 20.0)
        self.assertEqual(lab.performance[0].band, 4)
        self.assertEqual(lab.points, 100.0)

    def test_too_slow_gets_no_performance_points(self):
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.005))
        self.assertEqual(lab.performance[0].status, "measured")
        self.assertEqual(lab.performance[0].points, 0.0)
        self.assertEqual(lab.points, 80.0)

    def test_several_performance_entries_in_one_bench_run(self):
        data = copy.deepcopy(CONFIG)
        data["performance"].append({"name": "throughput", "points": 10, "benchmark": BENCH,
                                    "metric": "GFLOPS", "target": 4000, "floor": 0,
                                    "bands": 2})
        data["performance"].append({"name": "small", "points": 5,
                                    "benchmark": "matmul/v1_naive/1024", "metric": "ratio",
                                    "target": 0.5, "floor": 0.1, "timeout_s": 7})
        config = cfg(data)
        self.assertEqual(config.max_points, 115.0)
        lab = self.grade_lab(tests_all_pass(), benches(ratio=0.03), config=config)
        self.assertEqual([(p.name, p.status, p.metric, p.band, p.points)
                          for p in lab.performance],
                         [(BENCH, "measured", 0.03, 2, 10.0),
                          ("throughput", "measured", 3000.0, 1, 5.0),
                          ("small", "measured", 0.99, 4, 5.0)])
        self.assertEqual((lab.points, lab.max_points), (100.0, 115.0))
        bench_runs = [r for r in self.build.runs()
                      if any(a.startswith("--benchmark_filter") for a in r["argv"])]
        self.assertEqual(len(bench_runs), 1)
        self.assertEqual(bench_runs[0]["lock"], "exclusive")
        text = console_report.render(GradeResult("s", None, "x", labs=[lab]))
        self.assertIn("perf throughput", text)
        self.assertIn("band 1/2", text)

    def test_points_per_group_and_gating(self):
        tests = [(PUB, "A/1", "pass"), (PUB, "A/2", "fail"), (PUB, "A/3", "pass"),
                 (HID, "B/1", "pass"), (HID, "B/2", "worker_crash"), (HID, "B/3", "skip"),
                 (HID, "B/4", "pass")]
        lab = self.grade_lab(tests, benches(ratio=0.08))
        pub, hid = lab.groups
        self.assertEqual((pub.passed_count, len(pub.tests), pub.points), (2, 3, 20.0))
        self.assertEqual((hid.passed_count, len(hid.tests), hid.points), (2, 4, 25.0))
        self.assertEqual([t.status for t in pub.tests], ["passed", "failed", "passed"])
        self.assertEqual([t.status for t in hid.tests], ["passed", "crashed", "skipped", "passed"])
        self.assertEqual(pub.tests[1].name, f"{PUB}.A/2")
        self.assertEqual(lab.performance[0].status, "gated")
        self.assertEqual(lab.performance[0].points, 0.0)
        self.assertIn("every correctness test must pass", lab.performance[0].message)
        self.assertEqual(lab.points, 45.0)
        self.assertEqual(lab.max_points, 100.0)
        # the benchmark was never started
        self.assertFalse(any(any(a.startswith("--benchmark") for a in r["argv"])
                             for r in self.build.runs()))

    def test_a_lesson_is_scored_from_the_kernels_and_gated_like_performance(self):
        data = copy.deepcopy(CONFIG)
        data["correctness"][1]["points"] = 45
        data["lesson"] = [{"name": "registers", "counter": "local_memory", "points": 5}]
        config = cfg(data)
        self.assertEqual(config.max_points, 100.0)

        def graded(tests, stack_bytes):
            row = {"kernel": "k(float*)", "arch": "sm_90", "registers": 40, "shared_bytes": 0,
                   "local_bytes": 0, "stack_bytes": stack_bytes, "local_loads": 0,
                   "local_stores": 2 if stack_bytes else 0}
            self.build = FakeBuildDir(self.tmp / f"build{stack_bytes}{len(tests)}", tests,
                                      benches(ratio=0.05))
            lab = LabResult(lab=config.name, title=config.title, max_points=config.max_points,
                            seed=1234, policy=PolicyReport(ok=True, kernels=[row]))
            grade.grade_lab(config, lab, self.build.paths(), self.build.hashes(), True,
                            lambda m: None)
            return lab

        lab = graded(tests_all_pass(), 0)
        self.assertEqual([(g.name, g.points, g.max_points) for g in lab.groups][-1],
                         ("lesson: registers", 5.0, 5.0))
        self.assertEqual((lab.points, lab.max_points), (100.0, 100.0))
        text = console_report.render(GradeResult("s", None, "x", labs=[lab]))
        self.assertIn("\n  lesson: registers\n" + " " * 16 + "1/1 tests passed", text)
        # Local memory: the lesson's points go, the benchmark still runs (it is not correctness).
        lab = graded(tests_all_pass(), 32)
        lesson = lab.groups[-1]
        self.assertEqual((lesson.points, [t.status for t in lesson.tests]), (0.0, ["failed"]))
        self.assertIn("local memory", lesson.tests[0].message)
        self.assertEqual(lab.performance[0].status, "measured")
        self.assertEqual((lab.points, lab.max_points), (95.0, 100.0))
        # A wrong submission earns neither, whatever its kernels.
        tests = tests_all_pass()
        tests[0] = (tests[0][0], tests[0][1], "fail")
        lab = graded(tests, 0)
        self.assertEqual((lab.groups[-1].points, lab.performance[0].status), (0.0, "gated"))
        self.assertIn("every correctness test must pass first", lab.groups[-1].note)

    def test_judge_crash_mid_run_costs_the_unreported_tests(self):
        tests = tests_all_pass()
        tests[1] = (PUB, "MatchesCpuReference/v1_naive_M7_N3_K5", "judge_crash")
        lab = self.grade_lab(tests, benches(ratio=0.08))
        statuses = [t.status for g in lab.groups for t in g.tests]
        self.assertEqual(statuses, ["passed", "crashed", "crashed", "crashed", "crashed"])
        self.assertEqual(lab.points, 10.0)
        self.assertEqual(lab.performance[0].status, "gated")

    def test_stdout_liar_gets_zero(self):
        tests = [(s, t, "stdout_liar") for s, t, _ in tests_all_pass()]
        lab = self.grade_lab(tests, benches(ratio=0.08))
        self.assertEqual(lab.points, 0.0)
        self.assertTrue(all(t.status == "crashed" for g in lab.groups for t in g.tests))
        self.assertEqual(lab.performance[0].status, "gated")

    def test_malformed_lines_become_warnings_in_the_report(self):
        tests = tests_all_pass()
        tests[0] = (PUB, "MatchesCpuReference/v1_naive_M1_N1_K1", "malformed")
        lab = self.grade_lab(tests, benches(), sanitizer="/cuda/bin/compute-sanitizer")
        self.assertEqual(lab.groups[0].tests[0].status, "crashed")
        self.assertEqual(len(lab.warnings), 4)
        text = console_report.render(GradeResult("s", None, "x", labs=[lab]))
        self.assertIn("note: ignored a malformed", text)

    def test_one_failure_gates_even_with_a_fast_benchmark(self):
        tests = tests_all_pass()
        tests[-1] = (HID, "MatchesCpuReference/v1_naive_M9_N9_K9", "fail")
        lab = self.grade_lab(tests, benches(ratio=1.0))
        self.assertEqual(lab.performance[0].status, "gated")
        self.assertEqual(lab.groups[1].points, 25.0)
        self.assertEqual(lab.points, 55.0)

    def test_hidden_group_without_tests(self):
        public_only = [t for t in tests_all_pass() if t[0] == PUB]
        lab = self.grade_lab(public_only, benches(ratio=0.03))
        pub, hid = lab.groups
        self.assertEqual(pub.points, 30.0)
        self.assertEqual(hid.tests, [])
        self.assertEqual(hid.max_points, 0.0)
        self.assertIn("no tests in this build", hid.note)
        # an absent group does not gate performance
        self.assertEqual(lab.performance[0].status, "measured")
        self.assertEqual(lab.points, 40.0)
        self.assertEqual(lab.max_points, 50.0)     # 30 public + 20 performance

    def test_seed_reaches_the_judges_on_stdin_only(self):
        with mock.patch.dict(os.environ, {"LABKIT_SEED": "999"}):
            lab = self.grade_lab(tests_all_pass(), benches(how="seed"), seed=1234)
        self.assertEqual(lab.groups[1].tests[0].status, "passed")
        self.assertEqual(lab.performance[0].metric, 0.03)
        runs = [r for r in self.build.runs() if "--gtest_list_tests" not in r["argv"]]
        self.assertEqual([r["seed"] for r in runs], ["1234", "1234"])
        self.assertTrue(all("LABKIT_SEED" not in r["env"] for r in runs))

    def test_gpu_lock_shared_for_tests_exclusive_for_the_benchmark(self):
        self.grade_lab(tests_all_pass(), benches())
        runs = self.build.runs()
        listing = [r for r in runs if "--gtest_list_tests" in r["argv"]]
        test_runs = [r for r in runs if any(a.startswith("--gtest_filter=") for a in r["argv"])]
        bench_runs = [r for r in runs if any(a.startswith("--benchmark") for a in r["argv"])]
        self.assertEqual([r["lock"] for r in test_runs], ["shared"])
        self.assertEqual([r["lock"] for r in bench_runs], ["exclusive"])
        self.assertEqual([r["lock"] for r in listing], ["free"])
        import fcntl
        with open(gpulock.DEFAULT_LOCK, "a+") as f:      # released afterwards
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def test_sanitizer_flag_and_warning(self):
        self.grade_lab(tests_all_pass(), benches(), sanitizer="/cuda/bin/compute-sanitizer")
        run = [r for r in self.build.runs() if any(a.startswith("--gtest_filter=")
                                                   for a in r["argv"])][0]
        self.assertIn("--labkit-sanitizer=/cuda/bin/compute-sanitizer", run["argv"])
        self.assertNotIn("--labkit-memcheck=0", run["argv"])
        lab = self.grade_lab(tests_all_pass(), benches(), sanitizer=None)
        self.assertIn("compute-sanitizer was not found", lab.warnings[0])

    def test_no_sanitize_keeps_the_race_checks(self):
        # --no-sanitize: no memcheck re-runs, but a lab's graded race checks still get the tool.
        self.grade_lab(tests_all_pass(), benches(), sanitizer="/cuda/bin/compute-sanitizer",
                       sanitize=False)
        run = [r for r in self.build.runs() if any(a.startswith("--gtest_filter=")
                                                   for a in r["argv"])][0]
        self.assertIn("--labkit-sanitizer=/cuda/bin/compute-sanitizer", run["argv"])
        self.assertIn("--labkit-memcheck=0", run["argv"])

    def test_wrong_seed_fails_the_seeded_test(self):
        lab = self.grade_lab(tests_all_pass(), benches(), seed=99)
        t = lab.groups[1].tests[0]
        self.assertEqual(t.status, "failed")
        self.assertIn("'99'", t.message)
        self.assertEqual(lab.groups[1].points, 25.0)
        self.assertEqual(lab.performance[0].status, "gated")

    def test_no_performance_flag(self):
        lab = self.grade_lab(tests_all_pass(), benches(), run_performance=False)
        self.assertEqual(lab.performance[0].status, "not_run")
        self.assertEqual(lab.points, 80.0)
        self.assertEqual(lab.max_points, 100.0)

    def test_benchmark_error(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="error"))
        self.assertEqual(lab.performance[0].status, "failed")
        self.assertEqual(lab.performance[0].message, fakes.ERROR_MESSAGE)
        self.assertEqual(lab.points, 80.0)

    def test_benchmark_hang(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="hang"), config=cfg(timeout_s=1))
        self.assertEqual(lab.performance[0].status, "timeout")
        self.assertEqual(lab.performance[0].points, 0.0)

    def test_the_bench_judge_is_ready_before_its_seed_and_the_gpu_held_alone(self):
        # Started as the tests end, under the shared lock; 'go' only inside the exclusive one
        lab = self.grade_lab(tests_all_pass(), benches(how="seed"), seed=1234)
        self.assertEqual(lab.performance[0].status, "measured", lab.performance[0].message)
        self.assertEqual(lab.performance[0].metric, 0.03)             # the seed came, then 'go'
        ready = fakes.read_log(Path(str(self.build.log) + ".ready"))
        self.assertEqual([(r["lock"], r["seed"]) for r in ready], [("shared", "1234")])
        (run,) = [r for r in self.build.runs() if any(a.startswith("--benchmark") for a in r["argv"])]
        self.assertEqual(run["lock"], "exclusive")
        self.assertTrue(any(a.startswith("--labkit-ready-fd=") for a in run["argv"]))
        self.assertIn("bench: start", [s["stage"] for s in lab.stages])

    def test_a_bench_judge_that_ends_before_it_is_ready(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="exit_before_ready"))
        p = lab.performance[0]
        self.assertEqual(p.status, "failed")
        self.assertIn("exit code 3", p.message)
        self.assertEqual(lab.points, 80.0)

    def test_a_bench_judge_never_ready_is_bounded(self):
        # not waited for past READY_TIMEOUT_S; then its run is bounded like any other
        t0 = time.monotonic()
        with mock.patch.object(grade.bench, "READY_TIMEOUT_S", 0.5):
            lab = self.grade_lab(tests_all_pass(), benches(how="never_ready"),
                                 config=cfg(timeout_s=1))
        self.assertEqual(lab.performance[0].status, "timeout")
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual(fakes.read_log(Path(str(self.build.log) + ".ready")), [])

    def test_no_bench_judge_is_started_for_a_lab_that_failed_a_test(self):
        tests = tests_all_pass()
        tests[0] = (tests[0][0], tests[0][1], "fail")
        lab = self.grade_lab(tests, benches())
        self.assertEqual(lab.performance[0].status, "gated")
        self.assertNotIn("bench: start", [s["stage"] for s in lab.stages])
        self.assertFalse(Path(str(self.build.log) + ".ready").exists())

    def test_benchmark_without_the_metric(self):
        lab = self.grade_lab(tests_all_pass(), benches(how="no_ratio"))
        p = lab.performance[0]
        self.assertEqual(p.status, "failed")
        self.assertIn("'ratio'", p.message)
        self.assertEqual(p.counters["GFLOPS"], 3000.0)
        self.assertEqual(p.points, 0.0)

    def test_non_finite_metric_fails_and_json_stays_strict(self):
        lab = self.grade_lab(tests_all_pass(), benches(counters={"ratio": float("nan"),
                                                                 "GFLOPS": float("inf")}))
        p = lab.performance[0]
        self.assertEqual(p.status, "failed")
        self.assertIn("not a finite number", p.message)
        self.assertNotIn("GFLOPS", p.counters)
        json.loads(GradeResult("s", None, "x", labs=[lab]).to_json(),
                   parse_constant=lambda c: self.fail(f"{c} in the results JSON"))

    def test_other_metric(self):
        lab = self.grade_lab(tests_all_pass(), benches(counters={"GFLOPS": 2000.0}),
                             config=cfg(metric="GFLOPS", target=3000.0, floor=1000.0))
        self.assertEqual(lab.performance[0].metric, 2000.0)
        self.assertIsNone(lab.performance[0].metric_lo)     # no GFLOPS_lo counter
        self.assertEqual(lab.performance[0].points, 10.0)

    def test_no_performance_section(self):
        data = copy.deepcopy(CONFIG)
        del data["performance"]
        lab = self.grade_lab(tests_all_pass(), benches(), config=cfg_without_perf(data))
        self.assertEqual(lab.performance, [])
        self.assertEqual((lab.points, lab.max_points), (80.0, 80.0))

    def test_listing_failure_is_a_lab_error(self):
        self.build = FakeBuildDir(self.tmp / "build", tests_all_pass(), benches())
        hashes = self.build.hashes()
        fakes.write_executable(self.build.test_bin, "print('boom', file=sys.stderr)\nsys.exit(3)\n")
        hashes.record(f"{LAB}_test", self.build.test_bin)
        config = cfg()
        lab = LabResult(lab=LAB, title=config.title, max_points=config.max_points, seed=1)
        grade.grade_lab(config, lab, self.build.paths(), hashes, True, lambda m: None)
        self.assertEqual(lab.status, "error")
        self.assertIn("could not list", lab.message)
        self.assertIn("boom", lab.message)
        self.assertEqual([(g.name, g.tests, g.points) for g in lab.groups],
                         [("public", [], 0.0), ("hidden", [], 0.0)])
        self.assertEqual(lab.points, 0.0)

    def test_changed_judge_is_not_run(self):
        self.build = FakeBuildDir(self.tmp / "build", tests_all_pass(), benches())
        hashes = self.build.hashes()
        with open(self.build.test_bin, "a") as f:
            f.write("# changed\n")
        config = cfg()
        lab = LabResult(lab=LAB, title=config.title, max_points=config.max_points, seed=1)
        grade.grade_lab(config, lab, self.build.paths(), hashes, True, lambda m: None)
        self.assertEqual(lab.status, "error")
        self.assertEqual(lab.message, f"the {LAB}_test binary changed after it was built "
                                      f"(tampering?): not run")
        self.assertEqual(lab.points, 0.0)
        self.assertEqual(self.build.runs(), [])            # not even listed

    def test_binary_changed_during_the_tests_is_caught_before_the_benchmark(self):
        # A worker that reached the build tree rewrites the bench judge while the tests run.
        self.build = FakeBuildDir(self.tmp / "build", [], benches(ratio=0.08))
        tests = tests_all_pass()
        tests[0] = (PUB, tests[0][1], f"append:{self.build.bench_bin}")
        fakes.fake_judge(self.build.test_bin, tests, log=self.build.log)
        hashes = self.build.hashes()
        config = cfg()
        lab = LabResult(lab=LAB, title=config.title, max_points=config.max_points, seed=1234)
        grade.grade_lab(config, lab, self.build.paths(), hashes, True, lambda m: None)
        self.assertEqual(lab.status, "error")
        self.assertIn(f"the {LAB}_bench binary changed after it was built", lab.message)
        self.assertEqual(lab.points, 0.0)
        self.assertTrue(all(g.points == 0.0 for g in lab.groups))
        self.assertEqual(lab.groups[0].passed_count, 3)     # what ran is kept, for the record
        self.assertFalse(any(any(a.startswith("--benchmark") for a in r["argv"])
                             for r in self.build.runs()))

    def test_stage_times_of_the_test_groups_and_the_benchmark(self):
        # Issue 19: each group's time from when its verdicts arrived (the judge's start and
        # exit apart), each benchmark's from the bench judge's own clock (its 'wall_s').
        tests = [(PUB, "A/1", "sleep:0.3"), (PUB, "A/2", "sleep:0.3"), (HID, "B/1", "pass")]
        lab = self.grade_lab(tests, benches(ratio=0.03, counters={"wall_s": 1.25}))
        self.assertEqual(lab.status, "graded")
        stages = {s["stage"]: s["seconds"] for s in lab.stages}
        self.assertEqual([s["stage"] for s in lab.stages],
                         ["tests: list", "tests: start", "tests: public", "tests: hidden",
                          "tests: exit", "bench: start", f"bench: {BENCH}", "bench: other"])
        self.assertGreaterEqual(stages["tests: public"], 0.55, lab.stages)
        self.assertLess(stages["tests: hidden"], 0.3)
        self.assertLess(stages["tests: start"], 0.3)
        self.assertEqual(stages[f"bench: {BENCH}"], 1.25)
        self.assertGreaterEqual(stages["bench: other"], 0.0)
        self.assertTrue(all(isinstance(s["seconds"], float) for s in lab.stages))
        # a group without tests in this build (a student release) has no stage
        lab = self.grade_lab([(PUB, "A/1", "pass")], benches(ratio=0.03))
        self.assertEqual([s["stage"] for s in lab.stages if s["stage"].startswith("tests")],
                         ["tests: list", "tests: start", "tests: public", "tests: exit"])
        self.assertEqual([s["stage"] for s in lab.stages if s["stage"].startswith("bench")],
                         ["bench: start", "bench: other"])   # no 'wall_s' from this bench judge
        # a benchmark run that failed as a whole is still timed
        lab = self.grade_lab(tests_all_pass(), benches(how="segv"))
        self.assertEqual([s["stage"] for s in lab.stages if s["stage"].startswith("bench")],
                         ["bench: start", "bench: other"])

    def test_waiting_for_the_gpu_is_a_stage(self):
        # another grader's benchmark holds the GPU for 5 s: the wait is timed, apart from the
        # tests (the margins allow a loaded 2-core machine: the judge's start took 1.1 s there)
        hold = subprocess.Popen([sys.executable, "-c", (
            "import fcntl, sys, time\n"
            f"f = open({str(gpulock.DEFAULT_LOCK)!r}, 'a+')\n"
            "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(5)")],
            stdout=subprocess.PIPE, text=True)
        self.addCleanup(hold.wait)
        self.assertEqual(hold.stdout.readline().strip(), "held")
        lab = self.grade_lab(tests_all_pass(), benches())
        stages = {s["stage"]: s["seconds"] for s in lab.stages}
        self.assertGreaterEqual(stages["wait: GPU"], 2.5)
        self.assertLess(stages["tests: start"], 2.5, "the wait is not the judge's start")
        self.assertEqual([s["stage"] for s in lab.stages].count("wait: GPU"), 1)


def cfg_without_perf(data):
    with fakes.use_policy(fakes.FakePolicy()):
        return parse_lab_config(LAB, data)


class GradeFlowTest(TempDirTest):
    """grade.grade with CMake replaced: staging, seeds, policy, hashes, the GPU probe,
    statuses, exit codes."""

    def setUp(self):
        super().setUp()
        self.submission = self.tmp / "submission"
        (self.submission / LAB).mkdir(parents=True)
        self.student_file = self.submission / LAB / "matmul.cu"
        self.student_file.write_text("// student code\n")
        self.build_dir = self.tmp / "build"
        self.calls = []
        self.policy = fakes.FakePolicy()

    def run_grade(self, gpu=None, tests=None, lab_build_ok=True, seed=1234, test_timeout_s=None,
                  write_manifest=True, config=None, on_probe=None, on_build=None,
                  worker_refused=None, unsandboxed_build=False, race_audit=False,
                  bench_counters=None):
        self.fake = FakeBuildDir(self.build_dir, tests or tests_all_pass(),
                                 benches(0.03, counters=bench_counters), gpu=gpu)
        if not write_manifest:
            self.fake.manifest.unlink()
        stage = self.build_dir / "submission"

        def configure(repo, build_dir, stage_dir, labs, sandbox=True):
            self.calls.append(("configure", labs))
            self.sandboxed = sandbox
            self.assertEqual(stage_dir, stage)
            self.assertTrue((stage_dir / LAB / "matmul.cu").is_file())
            return BuildResult(ok=True, seconds=0.5)

        def build_targets(build_dir, targets, jobs=None):
            self.calls.append(("build", targets))
            if on_build and f"{LAB}_worker" in targets:
                on_build()
            if worker_refused and f"{LAB}_worker" in targets:
                # build.check_linked_workers refused the linked worker (and deleted it)
                return BuildResult(ok=False, seconds=1.0, hint=worker_refused, refused=True)
            if targets == ["labkit_gpu_info"] or lab_build_ok:
                return BuildResult(ok=True, seconds=1.0)
            return BuildResult(ok=False, seconds=1.0,
                               log=f"{stage}/{LAB}/matmul.cu(3): error: expected a \";\"",
                               hint=f"your file does not compile ({stage}/{LAB}/matmul.cu)")

        probe = grade.probe_gpu

        def probe_gpu(binary):
            if on_probe:
                on_probe()
            return probe(binary)

        with mock.patch.object(build, "configure", configure), \
                mock.patch.object(build, "build_targets", build_targets), \
                mock.patch.object(grade, "probe_gpu", probe_gpu), \
                fakes.use_policy(self.policy):
            options = grade.GradeOptions(seed=seed, jobs=2,
                                         test_timeout_s=test_timeout_s,
                                         unsandboxed_build=unsandboxed_build,
                                         race_audit=race_audit)
            return grade.grade(Path("/repo"), self.submission, [config or cfg()], self.build_dir,
                               options, progress=lambda m: None)

    def test_no_build_sandbox_grades_nothing_unless_the_instructor_says_so(self):
        # The student's compile runs in the build sandbox (grader/buildbox.py) where one is
        # possible; where none is, nothing is configured or built, and the reason is the
        # grading's message; --unsandboxed-build builds without it, with a warning in each lab.
        from grader import buildbox
        r = self.run_grade()
        if buildbox.probe().get("mechanism"):
            self.assertTrue(self.sandboxed)
        self.calls.clear()
        none = {"mechanism": None, "why": "no Landlock in this kernel, and no namespace: x"}
        with mock.patch.object(buildbox, "probe", lambda *a: none):
            r = self.run_grade()
            self.assertEqual((r.status, r.exit_code), ("error", 2))
            self.assertIn("no build sandbox is possible", r.message)
            self.assertIn("--unsandboxed-build", r.message)
            self.assertEqual(self.calls, [])
            r = self.run_grade(unsandboxed_build=True)
        self.assertEqual(r.status, "graded")
        self.assertFalse(self.sandboxed)
        self.assertTrue(any("WITHOUT the build sandbox" in w for w in r.labs[0].warnings))

    def test_a_race_audit_needs_the_sanitizer_and_reaches_only_the_bench_judge(self):
        # grade --race-audit: the bench judge replays each benchmark's last timed call under
        # racecheck (--labkit-race-audit, with the sanitizer); a replay that reached no verdict
        # is a warning. Without compute-sanitizer the grading is refused, saying why.
        with mock.patch.object(judge, "find_sanitizer", lambda *a: None):
            r = self.run_grade(race_audit=True)
        self.assertEqual((r.status, r.exit_code), ("error", 2))
        self.assertIn("--race-audit needs compute-sanitizer", r.message)
        with mock.patch.object(judge, "find_sanitizer", lambda *a: "/opt/cs/compute-sanitizer"):
            r = self.run_grade(race_audit=True, bench_counters={"race_audit": -1.0})
            self.assertEqual(r.status, "graded")
            audited = [run for run in fakes.read_log(self.fake.log)
                       if "--labkit-race-audit" in run["argv"]]
            self.assertEqual(len(audited), 1)                 # the bench judge's run alone
            self.assertIn("--labkit-sanitizer=/opt/cs/compute-sanitizer", audited[0]["argv"])
            self.assertTrue(any("race audit reached no verdict" in w for w in r.labs[0].warnings),
                            r.labs[0].warnings)
            before = len(fakes.read_log(self.fake.log))
            r = self.run_grade(bench_counters={"race_audit": -1.0})   # not asked: never passed
        runs = fakes.read_log(self.fake.log)[before:]
        self.assertTrue(runs)
        self.assertFalse(any("--labkit-race-audit" in run["argv"] for run in runs))

    def test_submission_name_that_is_not_utf8(self):
        # A folder named in Latin-1 (b"caf\xe9"): the results are valid UTF-8 JSON, the byte
        # shown as an escape, never a lone surrogate.
        named = self.tmp / os.fsdecode(b"caf\xe9")
        self.submission.rename(named)
        self.submission = named
        r = self.run_grade()
        self.assertEqual(r.status, "graded")
        self.assertTrue(r.submission.endswith("caf\\xe9"), r.submission)
        data = r.to_json().encode("utf-8")           # raises on a lone surrogate
        back = json.loads(data.decode("utf-8"))
        self.assertEqual(back["submission"], r.submission)
        self.assertNotIn(b"\\udc", data)

    def test_graded_on_a_gpu(self):
        r = self.run_grade()
        self.assertEqual((r.status, r.exit_code), ("graded", 0))
        self.assertEqual(r.gpu["name"], "Fake GPU 80GB (sm_90)")
        self.assertEqual(r.seed, 1234)
        lab = r.labs[0]
        self.assertEqual(lab.status, "graded")
        self.assertEqual(lab.seed, 1234)
        self.assertEqual(lab.files, {"matmul.cu": build.sha256(self.student_file)})
        self.assertEqual((r.points, r.max_points), (90.0, 100.0))
        self.assertEqual(self.calls, [("configure", [LAB]), ("build", ["labkit_gpu_info"]),
                                      ("build", [f"{LAB}_student"]),
                                      ("build", [f"{LAB}_worker", f"{LAB}_test", f"{LAB}_bench"]),
                                      ("build", ["labkit_gpu_ceilings"])])
        # The GPU's ceilings, from the fake labkit_gpu_ceilings beside the probe (fakes.py);
        # without them no performance points (test_plausibility.py).
        self.assertEqual(r.gpu["ceilings"], fakes.FAKE_CEILINGS)
        self.assertEqual(lab.binaries, {
            f"{LAB}_test": judge.file_sha256(self.fake.test_bin),
            f"{LAB}_bench": judge.file_sha256(self.fake.bench_bin),
            f"{LAB}_worker": judge.file_sha256(self.fake.worker),
            "labkit_gpu_info": judge.file_sha256(self.fake.gpu_info)})
        # Two stages (source before the compile, object after), 0.25 s each in the fake.
        self.assertEqual(lab.policy, PolicyReport(ok=True, violations=[], seconds=0.5))
        source, obj = self.policy.calls
        self.assertEqual(source["objects"], [])  # before the compile: includes and text
        self.assertEqual(source["sources"], [self.build_dir / "submission" / LAB / "matmul.cu"])
        self.assertEqual(source["compile_commands"], self.build_dir / "compile_commands.json")
        self.assertEqual(obj["objects"], [self.fake.obj])  # after: symbols, constructors, syscalls
        self.assertEqual(obj["sources"], [])
        for call in (source, obj):
            self.assertEqual(call["interface_headers"], [Path("/repo/labs") / LAB / "matmul.h"])
            self.assertEqual(call["rules"].table, {"forbid_imports": ["cudaMemcpy*"]})
        d = json.loads(r.to_json())
        self.assertEqual(d["exit_code"], 0)
        self.assertEqual(d["labs"][0]["seed"], 1234)
        self.assertEqual(d["labs"][0]["sandbox"]["sandbox"], fakes.WORKER_EVENT["sandbox"])
        self.assertEqual(d["labs"][0]["policy"], {"ok": True, "violations": [], "seconds": 0.5,
                                                  "kernels": None})
        self.assertEqual(set(d["labs"][0]["binaries"]), set(lab.binaries))
        self.assertEqual(d["labs"][0]["performance"][0]["band"], 2)
        text = console_report.render(r)
        self.assertIn("TOTAL 90.00 / 100", text)
        self.assertIn("Fake GPU 80GB", text)
        self.assertIn("uid 65534 (root dropped)", text)
        self.assertIn("band 2/4", text)
        self.assertIn("0.0300 [0.0294, 0.0306]", text)
        self.assertNotIn("NOT GRADED ON A GPU", text)

    def judge_seeds(self) -> list:
        """The seeds the fake judges read on their standard input (the listing reads none)."""
        return [r["seed"] for r in self.fake.runs() if r["seed"] is not None]

    def test_without_seed_every_grading_draws_a_fresh_one(self):
        # The same file graded twice: two seeds, each recorded, each sent to the judges; the
        # same score (a correct submission passes every draw).
        first = self.run_grade(seed=None, tests=tests_pass_any_seed())
        first_sent = self.judge_seeds()
        second = self.run_grade(seed=None, tests=tests_pass_any_seed())
        a, b = first.labs[0].seed, second.labs[0].seed
        self.assertIsInstance(a, int)
        self.assertTrue(0 <= a <= seeds.MAX_SEED and 0 <= b <= seeds.MAX_SEED)
        self.assertNotEqual(a, b)
        self.assertEqual((first.points, first.status), (second.points, second.status))
        self.assertEqual(first_sent, [str(a), str(a)])          # the test and bench judges
        self.assertEqual(self.judge_seeds()[len(first_sent):], [str(b), str(b)])  # one log
        for r, seed in ((first, a), (second, b)):
            self.assertIsNone(r.seed)                           # no --seed
            self.assertEqual(json.loads(r.to_json())["labs"][0]["seed"], seed)   # for a replay
            self.assertIn(f"{LAB} - Naive matmul  (seed {seed})", console_report.render(r))
            self.assertIn("--seed <its seed>", console_report.render(r))

    def test_a_drawn_seed_comes_from_the_systems_entropy(self):
        with mock.patch.object(seeds.secrets, "randbits", return_value=4242) as randbits:
            r = self.run_grade(seed=None, tests=tests_pass_any_seed())
        randbits.assert_called_once_with(63)
        self.assertEqual(r.labs[0].seed, 4242)
        self.assertEqual(self.judge_seeds(), ["4242", "4242"])

    def test_a_forced_seed_is_honoured_and_recorded(self):
        with mock.patch.object(seeds, "draw_seed", side_effect=AssertionError("drawn")):
            r = self.run_grade(seed=987654321, tests=tests_pass_any_seed())
        self.assertEqual((r.seed, r.labs[0].seed), (987654321, 987654321))
        self.assertEqual(self.judge_seeds(), ["987654321", "987654321"])
        d = json.loads(r.to_json())
        self.assertEqual((d["seed"], d["labs"][0]["seed"]), (987654321, 987654321))

    def test_a_drawn_seed_is_drawn_after_the_build_and_written_nowhere_before_the_judges(self):
        drawn = 7_000_000_000_000_000_123      # fits 63 bits; its digits appear nowhere else

        def draw():
            self.calls.append(("draw",))
            return drawn

        seen = []

        def scan(real):
            def wrapped(*args, **kw):
                # What the build folder (the staged files included) and the judges' command
                # line and environment hold when a judge starts (less the fake judges' own logs
                # of their runs, which the test judge has written by the time the bench starts).
                logs = (self.fake.log, Path(str(self.fake.log) + ".ready"))
                text = b"".join(p.read_bytes() for p in sorted(self.build_dir.rglob("*"))
                                if p.is_file() and not p.is_symlink() and p not in logs)
                seen.append((str(drawn).encode() in text,
                             any(str(drawn) in str(a) for a in args),
                             any(str(drawn) in str(v) for k, v in kw.items() if k != "seed"),
                             str(drawn) in repr(dict(os.environ))))
                return real(*args, **kw)
            return wrapped

        with mock.patch.object(seeds, "draw_seed", draw), \
                mock.patch.object(grade.gtest, "run_judge", scan(grade.gtest.run_judge)), \
                mock.patch.object(grade.bench, "start_benchmarks",
                                  scan(grade.bench.start_benchmarks)):
            r = self.run_grade(seed=None, tests=tests_pass_any_seed())
        self.assertEqual(r.labs[0].seed, drawn)
        self.assertEqual(seen, [(False, False, False, False)] * 2)   # test judge, bench judge
        # drawn once, after every build (the ceilings' too), when nothing is left to build
        self.assertEqual(self.calls[-1], ("draw",))
        self.assertEqual(self.calls.count(("draw",)), 1)
        self.assertEqual(self.judge_seeds(), [str(drawn)] * 2)     # on stdin only
        for run in self.fake.runs():
            self.assertNotIn(str(drawn), " ".join(run["argv"]) + repr(run["env"]))

    def test_no_seed_is_drawn_for_a_lab_that_never_runs(self):
        with mock.patch.object(seeds, "draw_seed", side_effect=AssertionError("drawn")):
            failed = self.run_grade(seed=None, lab_build_ok=False)
            no_gpu = self.run_grade(seed=None, gpu={"available": False, "reason": "none"})
        self.assertEqual(failed.labs[0].status, "build_failed")
        self.assertEqual(no_gpu.labs[0].status, "no_gpu")
        for r in (failed, no_gpu):
            self.assertIsNone(r.labs[0].seed)
            self.assertNotIn("--seed <its seed>", console_report.render(r))

    def test_policy_rejection_runs_nothing(self):
        self.policy = fakes.FakePolicy(violations=[fakes.FakeViolation(
            "forbid_imports", "cudaMemcpy", "the launcher must not copy: the harness moves "
                                            "the data")])
        r = self.run_grade()
        lab = r.labs[0]
        self.assertEqual((r.status, r.exit_code), ("rejected", 4))
        self.assertEqual(lab.status, "rejected")
        self.assertEqual(lab.points, 0.0)
        self.assertEqual(lab.policy.violations, [{"rule": "forbid_imports", "symbol": "cudaMemcpy",
                                                  "message": "the launcher must not copy: the "
                                                             "harness moves the data"}])
        self.assertIn("cudaMemcpy", lab.message)
        # Rejected at the source stage: the student's file was never even compiled.
        self.assertNotIn(("build", [f"{LAB}_student"]), self.calls)
        self.assertFalse(any(f"{LAB}_worker" in c[1] for c in self.calls if c[0] == "build"))
        self.assertEqual(self.fake.runs(), [])                             # nothing run
        self.assertEqual(lab.binaries, {})
        text = console_report.render(r)
        self.assertIn("REJECTED by the policy check", text)
        self.assertIn("forbid_imports: cudaMemcpy: the launcher must not copy", text)

    def test_refused_linked_worker_is_rejected_not_a_build_failure(self):
        # The object passed the policy; the worker linked from it asks for an executable stack
        # (grader/build.py refuses and deletes it): a policy refusal, status 'rejected'.
        why = ("the worker linked from your file was refused: it asks for an executable stack "
               f"(PT_GNU_STACK RWE). Memory that is both writable and executable ... "
               f"({self.build_dir}/submission/{LAB}/matmul.cu)")
        r = self.run_grade(worker_refused=why)
        lab = r.labs[0]
        self.assertEqual((r.status, r.exit_code), ("rejected", 4))
        self.assertEqual(lab.status, "rejected")
        self.assertEqual(lab.points, 0.0)
        self.assertTrue(lab.build.ok)            # it compiled and linked
        self.assertFalse(lab.build.refused)
        self.assertEqual(lab.build.seconds, 2.0)  # the student object's build and the rest's
        self.assertFalse(lab.policy.ok)
        (v,) = lab.policy.violations
        self.assertEqual((v["rule"], v["symbol"]), (grade.LINKED_WORKER_RULE, f"{LAB}_worker"))
        self.assertIn("executable stack", v["message"])
        self.assertIn("executable stack", lab.message)
        self.assertNotIn(str(self.build_dir), lab.message)   # staged paths shown as the student's
        self.assertIn(f"{LAB}/matmul.cu", lab.message)
        self.assertEqual(self.fake.runs(), [])                # nothing run
        self.assertEqual(lab.binaries, {})
        text = console_report.render(r)
        self.assertIn("REJECTED by the policy check", text)
        self.assertIn("executable stack", text)
        self.assertNotIn("build_failed", json.dumps(r.to_dict()))

    def test_policy_check_that_breaks_runs_nothing(self):
        self.policy = fakes.FakePolicy(error=RuntimeError("nm: not found"))
        r = self.run_grade()
        self.assertEqual(r.labs[0].status, "error")
        self.assertIn("nm: not found", r.labs[0].message)
        self.assertEqual(self.fake.runs(), [])
        self.assertEqual(r.exit_code, 1)

    def test_changed_gpu_probe_is_not_run(self):
        # hashed right after its build; changed while the lab builds; checked before it runs
        r = self.run_grade(on_build=lambda: self.fake.gpu_info.write_text("#!/bin/sh\n"))
        self.assertEqual(r.labs[0].status, "error")
        self.assertIn("labkit_gpu_info binary changed after it was built", r.labs[0].message)
        self.assertEqual(r.exit_code, 1)

    def test_changed_worker_is_not_run(self):
        r = self.run_grade(on_probe=lambda: self.fake.worker.write_text("#!/bin/sh\nevil\n"))
        lab = r.labs[0]
        self.assertEqual(lab.status, "error")
        self.assertEqual(lab.message, f"the {LAB}_worker binary changed after it was built "
                                      f"(tampering?): not run")
        self.assertEqual(lab.points, 0.0)
        self.assertEqual(self.fake.runs(), [])
        self.assertIn("changed after it was built", console_report.render(r))

    def test_test_timeout_override(self):
        r = self.run_grade(test_timeout_s=7.5)
        run = [x for x in self.fake.runs()
               if any(a.startswith("--gtest_filter") for a in x["argv"])]
        self.assertIn("--labkit-call-timeout=7.5", run[0]["argv"])
        self.assertEqual(r.status, "graded")

    def test_no_gpu(self):
        r = self.run_grade(gpu={"available": False, "reason": "no CUDA-capable device is detected",
                                "name": ""})
        self.assertEqual((r.status, r.exit_code), ("no_gpu", 3))
        self.assertIn("no CUDA-capable device", r.message)
        lab = r.labs[0]
        self.assertEqual(lab.status, "no_gpu")
        self.assertIn("The build succeeded", lab.message)
        self.assertEqual([(g.name, g.tests, g.note, g.points) for g in lab.groups],
                         [("public", [], "not run: no GPU", 0.0),
                          ("hidden", [], "not run: no GPU", 0.0)])
        self.assertEqual([p.status for p in lab.performance], ["not_run"])
        self.assertEqual((r.points, r.max_points), (0.0, 100.0))
        self.assertEqual(self.fake.runs(), [])      # no test or benchmark process was started
        text = console_report.render(r)
        self.assertIn("NOT GRADED ON A GPU", text)

    def test_no_gpu_said_once_plainly_and_no_replay_hint(self):
        # No driver at all: CUDA's "driver version is insufficient" is not repeated to the user,
        # the reason is said once for the grading (not once per lab), and there is nothing to
        # replay, so no --seed hint. The probe's own words stay in the results.
        raw = ("no NVIDIA driver found (CUDA driver version is insufficient for CUDA runtime "
               "version (cudaErrorInsufficientDriver))")
        r = self.run_grade(gpu={"available": False, "reason": raw, "name": ""})
        self.assertEqual(r.status, "no_gpu")
        self.assertEqual(r.gpu["reason"], raw)
        text = console_report.render(r)
        self.assertNotIn("insufficient", text)
        self.assertEqual(text.count("no NVIDIA driver on this machine"), 1, text)
        self.assertIn("NOT GRADED ON A GPU: no CUDA GPU: no NVIDIA driver on this machine", text)
        self.assertNotIn("--seed", text)

    def test_plain_gpu_reason(self):
        from grader.grade import plain_gpu_reason
        self.assertIn("older than this CUDA toolkit",
                      plain_gpu_reason("CUDA driver version is insufficient for CUDA runtime "
                                       "version (cudaErrorInsufficientDriver)"))
        self.assertEqual(plain_gpu_reason("the CUDA runtime found no device"),
                         "the CUDA runtime found no device")

    def test_stage_times_without_a_gpu(self):
        # Issue 19: configure, the harness, the object beside the judges, the probe for the
        # grading; policy and build stages for the lab; nothing that ran on a GPU
        r = self.run_grade(gpu={"available": False, "reason": "no CUDA-capable device", "name": ""})
        self.assertEqual(r.status, "no_gpu")
        self.assertEqual([s["stage"] for s in r.stages],
                         ["configure", "build: harness", "build: object and judges", "GPU probe"])
        self.assertEqual([s["stage"] for s in r.labs[0].stages],
                         ["policy: source", "build: student object", "policy: object",
                          "build: worker and judges"])
        d = json.loads(r.to_json())
        self.assertEqual(d["stages"], r.stages)
        self.assertEqual(set(d["labs"][0]["stages"][0]), {"stage", "seconds"})
        self.assertEqual(GradeResult.from_dict(d).labs[0].stages, r.labs[0].stages)
        text = console_report.render(r, times=True)
        self.assertRegex(text, r"\n  time          policy \d+\.\d s, build \d+\.\d s; "
                               r"\d+\.\d s in all\n")
        self.assertRegex(text, r"\nTime: configure \d+\.\d s, build: harness \d+\.\d s, build: "
                               r"object and judges \d+\.\d s, GPU probe \d+\.\d s; the whole "
                               r"grading \d+\.\d s\n")
        self.assertNotIn("time ", console_report.render(r), "only when asked (not with --quiet)")
        # a build failure: the stages that ran
        r = self.run_grade(lab_build_ok=False)
        self.assertEqual([s["stage"] for s in r.labs[0].stages],
                         ["policy: source", "build: student object"])

    def test_no_ceilings_are_measured_when_no_lab_reaches_its_benchmarks(self):
        # A wrong submission (most of a class's) costs no ceilings run: they are measured when
        # the first lab is about to be benchmarked.
        failing = [(g, n, "fail" if i == 0 else how) for i, (g, n, how) in enumerate(tests_all_pass())]
        r = self.run_grade(tests=failing)
        self.assertEqual(r.status, "graded")
        self.assertNotIn("GPU ceilings", [s["stage"] for s in r.stages])
        self.assertNotIn("ceilings", r.gpu)
        self.assertEqual([p.status for p in r.labs[0].performance], ["gated"])

    def test_stage_times_on_a_gpu(self):
        r = self.run_grade()
        self.assertEqual(r.status, "graded")
        self.assertEqual([s["stage"] for s in r.stages],
                         ["configure", "build: harness", "build: object and judges", "GPU probe",
                          "GPU ceilings"])
        self.assertEqual([s["stage"] for s in r.labs[0].stages],
                         ["policy: source", "build: student object", "policy: object",
                          "build: worker and judges", "tests: list", "tests: start",
                          "tests: public", "tests: hidden", "tests: exit", "bench: start",
                          "bench: other"])
        self.assertIn("tests ", console_report.render(r, times=True))

    def test_a_grading_waits_for_another_on_its_build_folder(self):
        import threading
        held, release = threading.Event(), threading.Event()
        staged_meanwhile = []

        def other_grading():
            with gpulock.build_lock(self.build_dir):
                held.set()
                release.wait(10)
                staged_meanwhile.append((self.build_dir / "submission").exists())

        t = threading.Thread(target=other_grading)
        t.start()
        self.addCleanup(t.join)
        self.addCleanup(release.set)
        held.wait(10)
        threading.Timer(0.5, release.set).start()
        said = []
        with mock.patch.object(build, "configure", lambda *a, **k: BuildResult(ok=True)), \
                mock.patch.object(build, "build_targets", lambda *a, **k: BuildResult(ok=True)):
            r = grade.grade(Path("/repo"), self.submission, [cfg()], self.build_dir,
                            grade.GradeOptions(seed=1), notice=said.append)
        self.assertEqual(said, [f"waiting for the other grading of the build folder "
                                f"{self.build_dir} (pid {os.getpid()}) to finish"])
        self.assertEqual(r.stages[0]["stage"], "wait: build folder")
        self.assertGreaterEqual(r.stages[0]["seconds"], 0.3)
        # nothing of this grading happened before the other one ended; then it did
        self.assertEqual(staged_meanwhile, [False])
        self.assertTrue((self.build_dir / "submission" / LAB / "matmul.cu").is_file())

    def test_gpu_probe(self):
        probe = self.tmp / "labkit_gpu_info"
        fakes.write_executable(probe, """
            print("driver chatter")
            print(json.dumps({"available": True, "reason": "", "name": "Fake GPU"}))
        """)
        self.assertEqual(grade.probe_gpu(probe),
                         {"available": True, "reason": "", "name": "Fake GPU"})
        fakes.write_executable(probe, "print('Segmentation fault')\nsys.exit(139)\n")
        info = grade.probe_gpu(probe)
        self.assertFalse(info["available"])
        self.assertIn("exit 139", info["reason"])
        fakes.write_executable(probe, "sys.exit(1)\n")      # no output at all
        self.assertFalse(grade.probe_gpu(probe)["available"])
        fakes.write_executable(probe, "print('[1, 2]')\n")  # JSON, but not an object
        self.assertFalse(grade.probe_gpu(probe)["available"])

    def test_missing_file(self):
        self.student_file.unlink()
        r = self.run_grade()
        self.assertEqual((r.status, r.exit_code), ("bad_files", 2))
        lab = r.labs[0]
        self.assertEqual(lab.status, "bad_files")
        self.assertIn("matmul.cu", lab.message)
        self.assertIsNone(lab.seed)
        self.assertEqual(self.calls, [])             # nothing configured or built
        self.assertEqual(r.points, 0.0)
        self.assertIn("matmul.cu", console_report.render(r))

    def test_symlink_to_a_secret_never_shows_its_content(self):
        secret = self.tmp / "instructor-only" / "answers.cu"
        secret.parent.mkdir()
        secret.write_text(f"// {SECRET_TEXT}\n")
        self.student_file.unlink()
        self.student_file.symlink_to(secret)
        r = self.run_grade()
        self.assertEqual((r.status, r.exit_code), ("bad_files", 2))
        self.assertIn("symbolic link", r.labs[0].message)
        self.assertEqual(self.calls, [])
        out = r.to_json() + console_report.render(r)
        self.assertNotIn(SECRET_TEXT, out)
        self.assertNotIn(str(secret), out)
        self.assertFalse((self.build_dir / "submission" / LAB / "matmul.cu").exists())

    def test_fifo_is_bad_files_and_does_not_hang(self):
        self.student_file.unlink()
        os.mkfifo(self.student_file)
        r = self.run_grade()       # a blocking open would hang here, and the whole test run
        self.assertEqual(r.labs[0].status, "bad_files")
        self.assertIn("FIFO", r.labs[0].message)

    def test_missing_manifest_is_an_error_with_results(self):
        r = self.run_grade(write_manifest=False)
        self.assertEqual((r.status, r.exit_code), ("error", 1))
        self.assertIn("did not write labs-manifest.json", r.message)
        self.assertEqual(r.labs[0].status, "error")
        self.assertEqual(r.labs[0].seed, 1234)          # what was known is kept
        self.assertIn("labs-manifest.json", r.to_json())

    def test_build_failure_of_the_student_object(self):
        r = self.run_grade(lab_build_ok=False)
        self.assertEqual((r.status, r.exit_code), ("build_failed", 4))
        lab = r.labs[0]
        self.assertEqual(lab.status, "build_failed")
        self.assertFalse(lab.build.ok)
        stage = str(self.build_dir / "submission")
        self.assertNotIn(stage, lab.build.log)
        self.assertNotIn(stage, lab.message)
        self.assertIn(f"{LAB}/matmul.cu(3): error", lab.build.log)
        self.assertEqual(lab.message, lab.build.hint)
        # Only the source stage ran (before the compile); there is no object to check.
        self.assertEqual([c["objects"] for c in self.policy.calls], [[]])
        self.assertEqual(self.fake.runs(), [])
        self.assertEqual(r.points, 0.0)
        text = console_report.render(r)
        self.assertIn("FAILED", text)
        self.assertIn("expected a", text)

    def test_a_grader_bug_still_gives_the_result_so_far(self):
        with mock.patch.object(grade, "build_labs", side_effect=ZeroDivisionError("oops")):
            with self.assertRaises(grade.GradeCrashed) as cm:
                self.run_grade()
        self.assertEqual(cm.exception.result.status, "error")
        self.assertIn("ZeroDivisionError", cm.exception.result.message)
        self.assertEqual(cm.exception.result.labs[0].seed, 1234)


class NonDumpableTest(unittest.TestCase):
    @unittest.skipUnless(sys.platform.startswith("linux"), "prctl is Linux only")
    def test_grader_process_is_not_dumpable(self):
        code = ("import ctypes, sys\nfrom grader import grade\n"
                "libc = ctypes.CDLL(None)\nbefore = libc.prctl(3, 0, 0, 0, 0)\n"
                "ok = grade.make_non_dumpable()\n"
                "print(before, ok, libc.prctl(3, 0, 0, 0, 0))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parents[2], timeout=60)
        self.assertEqual(out.stdout.split(), ["1", "True", "0"], out.stderr)


class ReportTest(unittest.TestCase):
    def result(self, status="graded"):
        failing = TestResult(f"{PUB}.MatchesCpuReference/v1_naive_M7_N3_K5", "failed",
                             "C[3,4] = 1.5, expected 2.5 (tolerance 1e-4)\n  2 of 21 elements "
                             "differ", 0.2)
        crashed = TestResult(f"{HID}.MatchesCpuReference/v1_naive_M9_N9_K9", "crashed",
                             "the worker crashed (SIGSEGV)", 0.1)
        pub = GroupResult("public", "*MatmulPublic*", 30.0, points=20.0,
                          tests=[TestResult(f"{PUB}.ok", "passed"), failing,
                                 TestResult(f"{PUB}.ok2", "passed")])
        hid = GroupResult("hidden", "*MatmulHidden*", 50.0, points=25.0,
                          tests=[TestResult(f"{HID}.ok", "passed"), crashed])
        perf = PerfResult(max_points=20.0, status="gated", target=0.05, floor=0.01,
                          label="speed / cuBLAS", message="not measured", name=BENCH)
        lab = LabResult(lab=LAB, title="Naive matmul", max_points=100.0, points=45.0,
                        seed=987654321, build=BuildResult(ok=True, seconds=12.3),
                        groups=[pub, hid], performance=[perf], files={"matmul.cu": "ab" * 32})
        return GradeResult(submission="/subs/alice", seed=None, grader_version="0.2.0",
                           status=status,
                           message="no CUDA GPU: no device" if status == "no_gpu" else "",
                           gpu={"available": True, "name": "NVIDIA H100"}, labs=[lab],
                           started="2024-01-01T00:00:00+00:00", seconds=3.5)

    def test_render(self):
        text = console_report.render(self.result(), "out.json")
        self.assertIn("TOTAL 45.00 / 100", text)
        self.assertIn("(results: out.json)", text)
        self.assertIn("seeds per lab", text)
        self.assertIn(f"{LAB} - Naive matmul  (seed 987654321)", text)
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
        self.assertIn("TOTAL 45.00 / 100    (results: out.json)", text)

    def test_render_no_gpu(self):
        text = console_report.render(self.result("no_gpu"))
        self.assertIn("NOT GRADED ON A GPU: no CUDA GPU: no device", text)
        self.assertNotIn("(results:", text)

    def test_replay_hint_only_when_tests_ran(self):
        r = self.result()
        self.assertIn("Replay a lab's inputs", console_report.render(r))
        for g in r.labs[0].groups:       # a failed build: seeds drawn, nothing ran
            g.tests = []
        r.labs[0].status = "build_failed"
        self.assertNotIn("--seed", console_report.render(r))

    def test_render_measured_and_perf_failure(self):
        r = self.result()
        r.labs[0].performance = [PerfResult(max_points=20.0, points=15.0, status="measured",
                                            metric=0.061, metric_lo=0.060, metric_hi=0.062,
                                            band=3, bands=4, target=0.07, floor=0.015,
                                            label="ratio")]
        text = console_report.render(r)
        self.assertIn("0.0610 [0.0600, 0.0620] band 3/4 ratio", text)
        self.assertIn("(target 0.07, floor 0.015)", text)
        # The library the ratio is to, with its version, where the benchmark named it.
        r.labs[0].performance[0].baseline = "CUB DeviceScan::ExclusiveSum (CCCL 3.0.1)"
        self.assertIn("(target 0.07, floor 0.015; against CUB DeviceScan::ExclusiveSum "
                      "(CCCL 3.0.1))", console_report.render(r))
        r.labs[0].performance = [PerfResult(max_points=20.0, status="failed",
                                            message="output differs from cuBLAS")]
        text = console_report.render(r)
        self.assertIn("benchmark failed", text)
        self.assertIn("[performance] output differs from cuBLAS", text)

    def test_many_failures_are_summarised(self):
        r = self.result()
        r.labs[0].groups[0].tests = [TestResult(f"T.f{i}", "failed", f"msg {i}") for i in range(8)]
        text = console_report.render(r)
        self.assertIn("T.f4: FAILED", text)
        self.assertNotIn("T.f5: FAILED", text)
        self.assertIn("and 4 more failing tests", text)   # 3 more in public, 1 crashed in hidden

    def test_long_message_is_clipped(self):
        r = self.result()
        r.labs[0].groups[0].tests[1].message = "\n".join(f"line {i}" for i in range(100))
        text = console_report.render(r)
        self.assertIn("line 29", text)
        self.assertNotIn("line 30\n", text + "\n")
        self.assertIn("[... 70 more lines ...]", text)

    def test_bad_files_report(self):
        r = self.result()
        lab = r.labs[0]
        lab.status, lab.message, lab.groups, lab.performance = "bad_files", "x is a FIFO", [], []
        self.assertIn("x is a FIFO", console_report.render(r))

    def test_to_json_round_trip(self):
        r = self.result()
        d = json.loads(r.to_json())
        self.assertEqual(d["points"], 45.0)
        self.assertEqual(d["max_points"], 100.0)
        self.assertIsNone(d["seed"])
        self.assertEqual(d["status"], "graded")
        lab = d["labs"][0]
        self.assertEqual(lab["seed"], 987654321)
        self.assertEqual(lab["points"], 45.0)
        self.assertEqual(lab["groups"][0]["tests"][1]["status"], "failed")
        self.assertEqual(lab["groups"][1]["max_points"], 50.0)
        self.assertEqual(lab["performance"][0]["status"], "gated")
        self.assertEqual(lab["files"], {"matmul.cu": "ab" * 32})
        for key in ("sandbox", "policy", "binaries", "warnings"):
            self.assertIn(key, lab)
        self.assertTrue(lab["build"]["ok"])
        self.assertEqual(d, r.to_dict())


class CliTest(TempDirTest):
    """Arguments a user can get wrong: a clear message, exit 2, and nothing built."""

    def main(self, argv):
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                mock.patch.object(build, "configure", self.no_build), \
                mock.patch.object(build, "build_targets", self.no_build), \
                fakes.use_policy(fakes.real_or_fake_policy()):
            code = cli.main(argv)
        return code, out.getvalue(), err.getvalue()

    def no_build(self, *args, **kw):
        self.fail("the grader started building before checking its arguments")

    def assertUsageError(self, argv, *words):
        code, out, err = self.main(argv)
        self.assertEqual(code, 2, err)
        self.assertIn("grader: error:", err)
        self.assertNotIn("Traceback", err)
        for w in words:
            self.assertIn(w, err)
        return err

    def grade_args(self, *extra):
        sub = self.tmp / "sub"
        (sub / LAB).mkdir(parents=True, exist_ok=True)
        (sub / LAB / "matmul.cu").write_text("// x\n")
        return ["grade", "--submission", str(sub), "--build-dir", str(self.tmp / "build"),
                *extra]

    def test_missing_submission(self):
        self.assertUsageError(["grade", "--submission", "/nonexistent"],
                              "--submission: /nonexistent does not exist")

    def test_submission_that_is_a_symbolic_link(self):
        solutions = self.tmp / "opt" / "solutions"
        (solutions / LAB).mkdir(parents=True)
        (solutions / LAB / "matmul.cu").write_text(f"// {SECRET_TEXT}\n")
        repo = self.tmp / "alice"
        repo.mkdir()
        (repo / "labs").symlink_to(solutions)
        err = self.assertUsageError(["grade", "--submission", str(repo / "labs"), LAB],
                                    f"--submission: {repo / 'labs'} is a symbolic link: refused")
        self.assertNotIn(str(solutions), err)       # where it points is not even shown

    def test_lab_folder_that_is_a_symbolic_link_is_bad_files(self):
        # the lab folders below the submission are refused when staged (bad_files, exit 2)
        sub = self.tmp / "sub"
        sub.mkdir()
        solutions = self.tmp / "solutions"
        (solutions / LAB).mkdir(parents=True)
        (solutions / LAB / "matmul.cu").write_text(f"// {SECRET_TEXT}\n")
        (sub / LAB).symlink_to(solutions / LAB)
        with self.assertRaises(build.BadFilesError) as cm:
            build.stage_submission(sub, LAB, ("matmul.cu",), self.tmp / "stage")
        self.assertIn("is a symbolic link, not a folder: refused", cm.exception.message)
        # and the submission folder itself, should it become a link after the check
        link = self.tmp / "link"
        link.symlink_to(solutions)
        with self.assertRaises(build.BadFilesError) as cm:
            build.stage_submission(link, LAB, ("matmul.cu",), self.tmp / "stage")
        self.assertIn("it is a symbolic link: refused", cm.exception.message)
        self.assertFalse((self.tmp / "stage").exists())

    def test_submission_that_is_a_file(self):
        with tempfile.NamedTemporaryFile() as f:
            self.assertUsageError(["grade", "--submission", f.name], "is a file, not a folder",
                                  "shaped like labs/")

    def test_submission_that_is_the_student_file(self):
        args = self.grade_args()
        sub = Path(args[args.index("--submission") + 1])
        self.assertUsageError(["grade", "--submission", str(sub / LAB / "matmul.cu")],
                              "is a file, not a folder", f"e.g. --submission {sub}")

    def test_output_where_nothing_can_be_created(self):
        # Refused before grading, whoever runs it. Root passes the permission check (access())
        # and is stopped by the attempt to create a file; anyone else by the permission check.
        if os.access("/proc", os.W_OK | os.X_OK):
            why = "cannot write in /proc"
        else:
            why = "the folder /proc is not writable"
        self.assertUsageError(self.grade_args("-o", "/proc/r.json"), "--output", why)

    def test_unknown_lab(self):
        self.assertUsageError(["grade", "nosuchlab"], "unknown lab 'nosuchlab'", LAB)

    def test_lab_number_without_its_zero(self):
        err = self.assertUsageError(["grade", "1"], "unknown lab '1'",
                                    "did you mean '01' (01_naive_matmul)?")
        self.assertNotIn("did you mean", self.assertUsageError(["grade", "42"], "unknown lab '42'"))

    def test_submission_that_is_one_lab_folder(self):
        sub = self.tmp / "labs"
        (sub / LAB).mkdir(parents=True)
        (sub / LAB / "matmul.cu").write_text("// x\n")
        self.assertUsageError(["grade", "--submission", str(sub / LAB), "--build-dir",
                               str(self.tmp / "build")],
                              f"--submission: {sub / LAB} is one lab's folder",
                              f"e.g. --submission {sub}", f"grade --submission {sub} 01")
        # A folder that holds the lab folders is taken, whatever its name.
        (sub / LAB / LAB).mkdir()
        (sub / LAB / LAB / "matmul.cu").write_text("// x\n")
        from grader import api
        api.check_submission_dir(sub / LAB)                  # no error

    def test_output_in_a_missing_folder(self):
        self.assertUsageError(self.grade_args("-o", str(self.tmp / "nope" / "r.json")),
                              "--output", "does not exist")

    def test_output_that_is_a_directory(self):
        self.assertUsageError(self.grade_args("-o", str(self.tmp)), "--output", "is a directory")

    def test_output_that_is_a_symlink(self):
        link = self.tmp / "r.json"
        link.symlink_to(self.tmp / "elsewhere.json")
        self.assertUsageError(self.grade_args("-o", str(link)), "--output", "symbolic link")

    @unittest.skipIf(os.geteuid() == 0, "root may write anywhere")
    def test_output_in_a_read_only_folder(self):
        ro = self.tmp / "ro"
        ro.mkdir(mode=0o555)
        self.assertUsageError(self.grade_args("-o", str(ro / "r.json")), "not writable")

    def test_seed_out_of_range(self):
        for seed in ("-5", str(2**64), "99999999999999999999", str(2**63), "1e3", "0x10", ""):
            with self.subTest(seed=seed):
                self.assertUsageError(self.grade_args("--seed", seed), "seed", "2**63-1")

    def test_seed_limits_are_accepted(self):
        from grader.grade_args import seed_arg
        self.assertEqual(seed_arg("0"), 0)
        self.assertEqual(seed_arg(str(2**63 - 1)), 2**63 - 1)

    def test_bad_numbers(self):
        self.assertUsageError(self.grade_args("--test-timeout", "0"), "--test-timeout")
        self.assertUsageError(self.grade_args("--test-timeout", "nan"), "--test-timeout")
        self.assertUsageError(self.grade_args("--jobs", "0"), "--jobs")
        self.assertUsageError(["grade", "--seed", "notanumber"], "--seed")

    def test_secret_file_is_accepted_unused_with_a_notice(self):
        # Existing instructor scripts keep working: the option is taken, never read (the file
        # need not exist), and one line says it is no longer used.
        out_file = self.tmp / "results.json"
        args = self.grade_args("-o", str(out_file), "--secret-file", str(self.tmp / "none"),
                               "-q")
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), \
                mock.patch.dict(os.environ, {"LABS_GRADER_SECRET": ""}), \
                mock.patch.object(build, "configure", lambda *a: BuildResult(ok=True)), \
                fakes.use_policy(fakes.real_or_fake_policy()):
            cli.main(args + [LAB])
        notices = [line for line in err.getvalue().splitlines() if "--secret-file" in line]
        self.assertEqual(notices, ["grader: notice: --secret-file: no longer used (ignored): "
                                   "every grading draws its seeds from the system's entropy, "
                                   "so no secret is needed; remove it (docs/grading.md)"])
        self.assertTrue(out_file.is_file())          # and the grading went on

    def test_secret_in_the_environment_gets_the_notice_too(self):
        with mock.patch.dict(os.environ, {"LABS_GRADER_SECRET": "k3y"}):
            code, _, err = self.main(["grade", "nosuchlab"])
        self.assertEqual(code, 2)
        self.assertIn("grader: notice: $LABS_GRADER_SECRET: no longer used (ignored)", err)
        self.assertNotIn("k3y", err)

    def test_build_dir_that_is_a_file(self):
        f = self.tmp / "afile"
        f.write_text("")
        args = self.grade_args()
        args[args.index("--build-dir") + 1] = str(f)
        self.assertUsageError(args, "--build-dir")

    def test_list(self):
        code, out, _ = self.main(["list"])
        self.assertEqual(code, 0)
        self.assertIn(LAB, out)
        self.assertIn("100 points", out)

    def test_run_from_the_labs_folder(self):
        # `python3 -m grader` typed in labs/ runs the root's grader, in labs/, with the same
        # arguments (an error here proves the arguments arrived; a listing that it ran at all)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        labs = Path(cli.REPO) / "labs"
        ok = subprocess.run([sys.executable, "-m", "grader", "list"], cwd=labs, env=env,
                            capture_output=True, text=True, timeout=60)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn(LAB, ok.stdout)
        bad = subprocess.run([sys.executable, "-m", "grader", "grade", "--submission", "nope"],
                             cwd=labs, env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn(f"--submission: {labs / 'nope'} does not exist", bad.stderr)

    def test_help_is_not_an_error(self):
        code, out, err = self.main(["grade", "--help"])
        self.assertEqual(code, 0)
        self.assertIn("--no-sanitize", out)
        self.assertIn("replay", out)
        self.assertNotIn("--secret-file", out)     # accepted, unused: not offered
        self.assertNotIn("secret", out)
        # What each exit status means, every one the command can give.
        flat = " ".join(out.split())
        for code_text in ("0 graded", "1 the grader could not finish", "2 bad arguments",
                          "3 built and checked", "4 a lab did not build", "130 interrupted"):
            self.assertIn(code_text, flat)
        code, out, _ = self.main(["batch", "--help"])
        self.assertEqual(code, 0)
        flat = " ".join(out.split())
        for code_text in ("0 every submission graded", "1 some grading failed",
                          "2 bad arguments", "3 some only built"):
            self.assertIn(code_text, flat)

    def test_results_are_written_when_the_build_system_fails(self):
        out_file = self.tmp / "results.json"
        args = self.grade_args("-o", str(out_file), "--seed", "42", "-q")
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out), \
                mock.patch.object(build, "configure", lambda *a, **k: BuildResult(ok=True)), \
                fakes.use_policy(fakes.real_or_fake_policy()):
            code = cli.main(args + [LAB])
        self.assertEqual(code, 1, err.getvalue())
        d = json.loads(out_file.read_text())
        self.assertEqual(d["status"], "error")
        self.assertEqual(d["exit_code"], 1)
        self.assertEqual(d["seed"], 42)
        self.assertEqual(d["labs"][0]["seed"], 42)
        self.assertIn("labs-manifest.json", err.getvalue())
        self.assertNotIn("Traceback", err.getvalue())



class BonusEntryResultTest(unittest.TestCase):
    def test_results_json_marks_a_bonus_entry(self):
        cfg = parse_lab_config("x", {
            "lab": {"student_files": ["matmul.cu"]},
            "correctness": [{"name": "public", "filter": "*", "points": 80}],
            "performance": [
                {"points": 20, "benchmark": "b/1", "metric": "ratio", "target": 0.5, "floor": 0.1},
                {"points": 5, "benchmark": "b/2", "metric": "ratio", "target": 0.9, "floor": 0.5,
                 "bonus": True}]})
        perfs = [grade._perf_result(p) for p in cfg.performance]
        lab = LabResult(lab="x", title="x", max_points=cfg.max_points, performance=perfs)
        data = json.loads(GradeResult(submission="s", seed=None, grader_version="t",
                                      labs=[lab]).to_json())
        self.assertEqual([p["bonus"] for p in data["labs"][0]["performance"]], [False, True])
        self.assertEqual(data["max_points"], 100.0)
        back = GradeResult.from_dict(data)
        self.assertTrue(back.labs[0].performance[1].bonus)


if __name__ == "__main__":
    unittest.main()


class BuildLabsTest(unittest.TestCase):
    """grade.build_labs: the labs' targets are built together before each compiling step, and
    only for the labs still in the running: nothing is compiled before its source passed the
    policy, nor linked before its object did."""

    def item(self, name):
        target = lambda t: mock.Mock(target=t)  # noqa: E731
        paths = mock.Mock(student_target=f"{name}_student", workers=[target(f"{name}_worker")],
                          test=target(f"{name}_test"), bench=target(f"{name}_bench"))
        cfg = mock.Mock()
        cfg.name = name
        return grade.LabBuild(cfg, mock.Mock(), paths)

    def run_steps(self, names, fails, harness=()):
        events = []
        items = {n: self.item(n) for n in names}
        lock = threading.Lock()

        def step(kind):
            def run(item, *args):
                name = next(n for n, i in items.items() if i is item)
                with lock:
                    events.append((kind, name))
                return (kind, name) not in fails
            return run

        def together(build_dir, targets, jobs=None):
            events.append(("together", tuple(targets)))

        with mock.patch.object(grade, "_source_step", step("source")), \
                mock.patch.object(grade, "_object_step", step("object")), \
                mock.patch.object(grade, "_link_step", step("link")), \
                mock.patch.object(grade.build, "build_together", together):
            ready = grade.build_labs(list(items.values()), None, Path("b"), Path("s"), None,
                                     None, lambda *_: None, [], harness_targets=harness)
        return events, [next(n for n, i in items.items() if i is r) for r in ready]

    @staticmethod
    def phases(events):
        """The events as phases: runs of one kind, each a set (the labs' steps run side by
        side, in any order within a step)."""
        out = []
        for kind, what in events:
            if kind == "together":
                out.append((kind, what))
            elif out and out[-1][0] == kind:
                out[-1][1].add(what)
            else:
                out.append((kind, {what}))
        return out

    def test_targets_are_built_together_for_the_labs_still_in_the_running(self):
        events, ready = self.run_steps(["a", "b", "c", "d"], {("source", "b"), ("object", "c")},
                                       harness=("ceilings",))
        self.assertEqual(self.phases(events), [
            ("source", {"a", "b", "c", "d"}),
            # the judges (no student code) of the labs whose source passed join the objects
            ("together", ("a_student", "c_student", "d_student", "ceilings", "a_test", "a_bench",
                          "c_test", "c_bench", "d_test", "d_bench")),
            ("object", {"a", "c", "d"}),
            ("together", ("a_worker", "a_test", "a_bench", "d_worker", "d_test", "d_bench")),
            ("link", {"a", "d"})])
        self.assertEqual(ready, ["a", "d"])   # in their order

    def test_the_labs_steps_run_side_by_side(self):
        # Each lab's source step waits for the others': it passes only if all three overlap.
        barrier = threading.Barrier(3, timeout=10)
        items = [self.item(n) for n in "abc"]

        def source(item, *args):
            barrier.wait()
            return True

        with mock.patch.object(grade, "_source_step", source), \
                mock.patch.object(grade, "_object_step", lambda *a: False), \
                mock.patch.object(grade.build, "build_together", lambda *a, **k: None):
            ready = grade.build_labs(items, None, Path("b"), Path("s"), None, None,
                                     lambda *_: None, [])
        self.assertEqual(ready, [])
        self.assertFalse(barrier.broken)

    def test_one_lab_builds_its_judges_beside_its_object(self):
        events, ready = self.run_steps(["a"], set())
        self.assertEqual(events, [("source", "a"), ("together", ("a_student", "a_test", "a_bench")),
                                  ("object", "a"), ("link", "a")])
        self.assertEqual(ready, ["a"])

    def test_nothing_is_built_for_a_lab_whose_source_failed(self):
        events, ready = self.run_steps(["a"], {("source", "a")})
        self.assertEqual(events, [("source", "a")])
        self.assertEqual(ready, [])


class TestsThenBenchmarksTest(unittest.TestCase):
    """grade.tests_then_benchmarks: the labs' tests side by side, then benchmarks one lab at a
    time, in order, only for labs whose tests ended without an error."""

    def run_labs(self, labs, at_once, meet, hold=False):
        events, lock = [], threading.Lock()
        barrier = threading.Barrier(meet, timeout=1)

        def test(lab):
            with lock:
                events.append(("test", lab))
            barrier.wait()   # breaks (BrokenBarrierError) unless `meet` tests run at once
            return lab != "lab-error"

        def score(lab):
            with lock:
                events.append(("score", lab))

        @contextlib.contextmanager
        def held(passed):
            events.append(("hold", tuple(passed)))
            yield
            events.append(("release",))
        grade.tests_then_benchmarks(labs, test, score, at_once, held if hold else None)
        return events

    def test_the_benchmarks_of_all_labs_inside_one_hold(self):
        events = self.run_labs(["a", "lab-error", "c"], None, meet=3, hold=True)
        self.assertEqual(events[3:], [("hold", ("a", "c")), ("score", "a"), ("score", "c"),
                                      ("release",)])
        # No lab to score: nothing held.
        events = self.run_labs(["lab-error"], None, meet=1, hold=True)
        self.assertEqual(events, [("test", "lab-error")])

    def test_all_labs_tests_at_once_then_scores_in_order(self):
        labs = ["a", "lab-error", "c"]
        events = self.run_labs(labs, None, meet=3)
        self.assertEqual(sorted(e for e in events[:3]), sorted(("test", lab) for lab in labs))
        self.assertEqual(events[3:], [("score", "a"), ("score", "c")])

    def test_one_at_a_time(self):
        events = self.run_labs(["a", "b"], 1, meet=1)
        self.assertEqual(events, [("test", "a"), ("test", "b"), ("score", "a"), ("score", "b")])
        with self.assertRaises(threading.BrokenBarrierError):
            self.run_labs(["a", "b"], 1, meet=2)   # never two at once

    def test_at_most_at_once(self):
        self.run_labs(["a", "b", "c", "d"], 2, meet=2)   # pairs meet
        with self.assertRaises(threading.BrokenBarrierError):
            self.run_labs(["a", "b", "c", "d"], 2, meet=3)
