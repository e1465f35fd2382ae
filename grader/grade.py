"""The grading pipeline: stage, build, probe the GPU, run tests, benchmark, score.

Every step records what happened in the result; nothing here prints (report.py does)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import time
from pathlib import Path

from grader import __version__, bench, build, gpulock, gtest, runner, scoring
from grader.config import LabConfig
from grader.errors import GraderError
from grader.results import GradeResult, GroupResult, LabResult, PerfResult, TestResult


def probe_gpu(binary: Path) -> dict:
    """Runs labkit_gpu_info: {'available': bool, 'reason': str, 'name': ...}."""
    proc = runner.run([str(binary)], 60)
    try:
        info = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return {"available": False,
                "reason": f"the GPU probe failed (exit {proc.returncode}): {proc.output[-500:]}"}
    if proc.timed_out:
        return {"available": False, "reason": "the GPU probe hung for 60 s"}
    return info


def find_binary(build_dir: Path, name: str) -> Path:
    for candidate in [build_dir / name, *build_dir.glob(f"**/{name}")]:
        if candidate.is_file():
            return candidate
    raise GraderError(f"built, but {name} is not in {build_dir}", 1)


def grade(repo: Path, submission: Path, configs: list, seed: int, build_dir: Path,
          jobs: int | None = None, run_performance: bool = True, progress=None,
          test_timeout_s: float | None = None) -> GradeResult:
    progress = progress or (lambda msg: None)
    started = time.monotonic()
    result = GradeResult(submission=str(submission), seed=seed, grader_version=__version__,
                         started=datetime.datetime.now(datetime.timezone.utc).isoformat(
                             timespec="seconds"))
    stage_dir = build_dir / "submission"
    staged = []
    for cfg in configs:
        lab = LabResult(lab=cfg.name, title=cfg.title, max_points=cfg.max_points)
        result.labs.append(lab)
        try:
            lab.files = build.stage_submission(submission, cfg.name, cfg.student_files, stage_dir)
            staged.append((cfg, lab))
        except GraderError as e:
            lab.status, lab.message = "missing_files", e.message

    if staged:
        progress(f"configuring ({', '.join(c.name for c, _ in staged)})")
        configured = build.configure(repo, build_dir, stage_dir, [c.name for c, _ in staged])
        if not configured.ok:
            for _, lab in staged:
                lab.status, lab.build = "build_failed", configured
                lab.message = configured.hint
            staged = []

    built = []
    gpu = None
    if staged:
        probe_build = build.build_targets(build_dir, ["labkit_gpu_info"], jobs)
        if not probe_build.ok:
            raise GraderError("the harness itself does not build (labkit_gpu_info):\n"
                              + probe_build.log, 1)
        for cfg, lab in staged:
            progress(f"building {cfg.name}")
            lab.build = build.build_targets(build_dir, [cfg.test_binary, cfg.bench_binary], jobs)
            lab.build.log = build.readable(lab.build.log, stage_dir)
            lab.build.hint = build.readable(lab.build.hint, stage_dir)
            if lab.build.ok:
                built.append((cfg, lab))
            else:
                lab.status, lab.message = "build_failed", lab.build.hint
        gpu = probe_gpu(find_binary(build_dir, "labkit_gpu_info"))
        result.gpu = gpu

    if built and not gpu.get("available"):
        for cfg, lab in built:
            lab.status = "no_gpu"
            lab.message = (f"no CUDA GPU: {gpu.get('reason', 'unknown')}. The build succeeded; "
                           f"GPU tests and benchmarks were not run and no points were awarded.")
            lab.groups = [GroupResult(g.name, g.filter, g.points, note="not run: no GPU")
                          for g in cfg.groups]
            if cfg.performance is not None:
                lab.performance = PerfResult(max_points=cfg.performance.points,
                                             target=cfg.performance.target,
                                             floor=cfg.performance.floor, status="not_run",
                                             message="not run: no GPU")
        result.status = "no_gpu"
        result.message = f"no CUDA GPU: {gpu.get('reason', 'unknown')}"
    else:
        for cfg, lab in built:
            if test_timeout_s is not None:
                cfg = dataclasses.replace(cfg, test_timeout_s=test_timeout_s)
            grade_lab(cfg, lab, build_dir, seed, run_performance, progress)

    if result.status == "graded":
        if any(lab.status == "build_failed" for lab in result.labs):
            result.status = "build_failed"
        elif any(lab.status == "missing_files" for lab in result.labs):
            result.status = "missing_files"
        elif any(lab.status == "error" for lab in result.labs):
            result.status = "error"
            result.message = "; ".join(f"{lab.lab}: {lab.message.splitlines()[0]}"
                                       for lab in result.labs if lab.status == "error")
    result.seconds = round(time.monotonic() - started, 1)
    return result


def grade_lab(cfg: LabConfig, lab: LabResult, build_dir: Path, seed: int, run_performance: bool,
              progress) -> None:
    test_bin = find_binary(build_dir, cfg.test_binary)
    try:
        names = gtest.list_tests(test_bin)
    except RuntimeError as e:
        lab.status, lab.message = "error", str(e)
        lab.groups = [GroupResult(g.name, g.filter, g.points) for g in cfg.groups]
        return
    env = {"LABKIT_SEED": str(seed)}
    for g in cfg.groups:
        group = GroupResult(g.name, g.filter, g.points)
        selected = [n for n in names if gtest.matches_filter(n, g.filter)]
        if not selected:
            group.note = "no tests in this build (hidden tests are not part of a student release)"
            group.max_points = 0.0
        for i, name in enumerate(selected):
            progress(f"{cfg.name} {g.name} {i + 1}/{len(selected)}")
            with gpulock.gpu_lock(shared=True):
                group.tests.append(gtest.run_test(test_bin, name, cfg.test_timeout_s, env))
        group.points = scoring.score_group(group)
        lab.groups.append(group)

    if cfg.performance is not None:
        p = cfg.performance
        lab.performance = PerfResult(max_points=p.points, target=p.target, floor=p.floor,
                                     label=p.metric_label or p.metric)
        if not scoring.all_correct(lab.groups):
            lab.performance.status = "gated"
            lab.performance.message = "not measured: every correctness test must pass first"
        elif not run_performance:
            lab.performance.status = "not_run"
            lab.performance.message = "not measured (--no-performance)"
        else:
            progress(f"{cfg.name} benchmark {p.benchmark}")
            try:
                with gpulock.gpu_lock():
                    entry = bench.run_benchmark(find_binary(build_dir, cfg.bench_binary),
                                                p.benchmark, p.timeout_s, env)
                counters = {k: v for k, v in entry.items() if isinstance(v, (int, float))}
                lab.performance.counters = counters
                if p.metric not in entry:
                    lab.performance.status = "failed"
                    lab.performance.message = f"the benchmark reported no '{p.metric}' counter"
                else:
                    lab.performance.metric = float(entry[p.metric])
                    lab.performance.status = "measured"
            except bench.BenchError as e:
                lab.performance.status, lab.performance.message = e.status, e.message
        lab.performance.points = scoring.score_performance(lab.performance)

    lab.points = scoring.round_points(sum(g.points for g in lab.groups)
                                      + (lab.performance.points if lab.performance else 0.0))
    # Without hidden tests (a student release) the maximum shrinks to what can be earned.
    lab.max_points = scoring.round_points(sum(g.max_points for g in lab.groups)
                                          + (lab.performance.max_points if lab.performance else 0))
