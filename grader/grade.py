"""The grading pipeline: stage, configure, build the student object, check the policy, build the
judges and the worker, hash them, probe the GPU, run the test judge, the bench judge, score.

Every step records what happened in the result; nothing here prints (console_report.py does).
See docs/architecture.md for who runs what.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import importlib
import json
import math
import re
import sys
import threading
import time
from pathlib import Path

from grader import (__version__, bench, build, gpulock, gtest, judge, manifest, runner,
                    scoring, seeds, setup)
from grader import config
from grader.config import LabConfig
from grader.errors import (EXIT_BUILD, EXIT_INTERNAL, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE,
                           GraderError)
from grader.results import (BuildResult, GradeResult, GroupResult, LabResult, PerfResult,
                            PolicyReport, safe_text)

GPU_INFO = "labkit_gpu_info"
CEILINGS = "labkit_gpu_ceilings"   # the GPU's ceilings: plausibility, roofline (no student code)
PR_SET_DUMPABLE = 4

# The overall status when labs differ, first match wins, and the exit code it gives.
_STATUS_ORDER = (("build_failed", EXIT_BUILD), ("rejected", EXIT_BUILD),
                 ("bad_files", EXIT_USAGE), ("error", EXIT_INTERNAL))


class GradeCrashed(Exception):
    """A bug in the grader stopped a grading; `result` holds what was recorded until then."""

    def __init__(self, result: GradeResult):
        super().__init__(result.message)
        self.result = result


def make_non_dumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0) on Linux; True when it took effect.

    The grader holds the read ends of the judges' results pipes and the write ends of their
    stdin. A process of the same user (the worker, should its sandbox fail) could otherwise
    open /proc/<grader>/fd/N and write fake verdict lines into a pipe, or read the seed. A
    non-dumpable process's /proc entries belong to root and ptrace is refused. Children get
    their own dumpable flag back at exec, so the judges are not affected. Failure is ignored:
    the judges' own protections still hold."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def plain_gpu_reason(reason: str) -> str:
    """Why there is no GPU, in plain words. Without any NVIDIA driver CUDA says "CUDA driver
    version is insufficient for CUDA runtime version", which reads as if a driver were there
    and too old; the probe's own words stay in the results (gpu.reason)."""
    reason = (reason or "unknown").strip()
    if reason.startswith("no NVIDIA driver found"):
        return "no NVIDIA driver on this machine, so no GPU to run on"
    if "insufficient for CUDA runtime version" in reason:
        return ("the NVIDIA driver is older than this CUDA toolkit needs: update the driver "
                "(or use an older toolkit)")
    return reason


def probe_gpu(binary: Path) -> dict:
    """Runs labkit_gpu_info: {'available': bool, 'reason': str, 'name': ...}."""
    with judge.private_dir() as cwd:
        proc = runner.run([str(binary)], 60, cwd=str(cwd), base_env=judge.scrubbed_env())
    if proc.timed_out:
        return {"available": False, "reason": "the GPU probe hung for 60 s"}
    try:
        info = json.loads(proc.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        info = None
    if not isinstance(info, dict):
        return {"available": False,
                "reason": f"the GPU probe failed (exit {proc.returncode}): {proc.output[-500:]}"}
    info["available"] = info.get("available") is True
    return info


@dataclasses.dataclass(frozen=True)
class GradeOptions:
    """How one grading runs, beside what it grades and where it builds: the `grade` command's
    options that change a grading (grader/grade_args.py has the command line's own)."""
    seed: int | None = None       # every lab's base seed (a replay); None: drawn per lab, fresh
                                  # from the system's entropy (grader/seeds.py)
    jobs: int | None = None       # parallel build jobs; None: the build tool's default
    performance: bool = True      # run the benchmarks (--no-performance: False)
    sanitize: bool = True         # re-run failing calls under memcheck (--no-sanitize: False)
    test_timeout_s: float | None = None   # one call of the student's code; None: grading.toml's
    labs_at_once: int | None = None   # labs whose tests run side by side (--labs-at-once); None: all
    # Build without the build sandbox where none is possible (--unsandboxed-build): a warning
    # in every lab's results. False: such a machine refuses to grade (build_sandbox_check).
    unsandboxed_build: bool = False
    # Profile one timed call of each benchmark under ncu (--profile): counters reported beside
    # the lecture's model, never scored (docs/grading.md, "The profile stage").
    profile: bool = False
    # Replay each benchmark's last timed call under compute-sanitizer racecheck, at the
    # benchmark's size (--race-audit): minutes per benchmark; hazards fail the benchmark
    # (docs/grading.md, "The race audit").
    race_audit: bool = False


def grade(repo: Path, submission: Path, configs: list, build_dir: Path,
          options: GradeOptions = GradeOptions(), *, progress=None,
          notice=None) -> GradeResult:
    """Grades `configs`' labs of `submission`, the LabConfig of each (grader/config.py; the
    grader's API, grader/api.py, takes lab names and folders and calls this). `options.seed`
    forces every lab's base seed (a replay); without it each lab's is drawn afresh from the
    system's entropy, in this process, after the build, right before its tests run
    (grader/seeds.py): written nowhere the build or the student's code can read, it reaches
    the judges on their standard input only, and is recorded in the lab's result.

    One grading at a time per build folder (gpulock.build_lock, held from staging the files to
    the end): another grader's grading there makes this one wait, after notice(one line saying
    so; default: progress). Each stage's wall-clock time goes into result.stages and each
    lab's stages (docs/grading.md, "Stage times").

    Always returns a result (status 'error' and the reason when a step of the grader or the
    build system failed), but for two cases: setup.SetupError when what the build needs is
    missing (grader/setup.py: nothing was built); GradeCrashed, carrying the result so far, on
    a grader bug."""
    make_non_dumpable()
    progress = progress or (lambda msg: None)
    notice = notice or progress
    started = time.monotonic()
    result = GradeResult(submission=safe_text(str(submission)), seed=options.seed,
                         grader_version=__version__,
                         started=datetime.datetime.now(datetime.timezone.utc).isoformat(
                             timespec="seconds"))
    try:
        with _build_folder(result, build_dir, notice):
            _grade(result, repo, submission, configs, build_dir, options, progress)
    except setup.SetupError:
        raise   # nothing could be built: one line from the command line, no results table
    except GraderError as e:
        _abort(result, e.message, e.exit_code)
    except Exception as e:
        _abort(result, f"internal error of the grader: {type(e).__name__}: {e}", EXIT_INTERNAL)
        result.seconds = round(time.monotonic() - started, 1)
        raise GradeCrashed(result) from e
    else:
        _finish(result)
    result.seconds = round(time.monotonic() - started, 1)
    return result


def add_stage(stages: list, name: str, seconds: float) -> None:
    stages.append({"stage": name, "seconds": round(max(0.0, seconds), 3)})


@contextlib.contextmanager
def timed(stages: list, name: str):
    """Appends {"stage": name, "seconds": wall-clock time of the block} to `stages`, also when
    the block raises."""
    t0 = time.monotonic()
    try:
        yield
    finally:
        add_stage(stages, name, time.monotonic() - t0)


@contextlib.contextmanager
def _build_folder(result: GradeResult, build_dir: Path, notice):
    """Holds `build_dir` for this grading alone (gpulock.build_lock); a wait is said once and
    timed as the stage 'wait: build folder'."""
    t0 = time.monotonic()
    waited = []

    def on_wait(pid):
        waited.append(pid)
        who = f" (pid {pid})" if pid is not None else ""
        notice(f"waiting for the other grading of the build folder {build_dir}{who} to finish")

    with gpulock.build_lock(build_dir, on_wait):
        if waited:
            add_stage(result.stages, "wait: build folder", time.monotonic() - t0)
        yield


def _abort(result: GradeResult, message: str, exit_code: int) -> None:
    result.status, result.message, result.exit_code = "error", message, exit_code
    for lab in result.labs:
        if lab.status == "graded":
            lab.status, lab.message, lab.points = "error", f"not graded: {message}", 0.0


def _finish(result: GradeResult) -> None:
    statuses = {lab.status for lab in result.labs}
    if result.status == "no_gpu":
        result.exit_code = EXIT_NO_GPU
        return
    for status, code in _STATUS_ORDER:
        if status in statuses:
            result.status, result.exit_code = status, code
            result.message = "; ".join(f"{lab.lab}: {(lab.message.splitlines() or [''])[0]}"
                                       for lab in result.labs if lab.status != "graded")
            return
    result.status, result.exit_code = "graded", EXIT_OK
    withheld = [f"{lab.lab}: {p.name}" for lab in result.labs for p in lab.performance
                if p.status == scoring.WITHHELD]
    if withheld:
        # The harness failed (labkit_gpu_ceilings): a re-grading may succeed, so this is an
        # error (exit 1; a batch grades it again), with the correctness points kept.
        why = scoring.ceiling_limits((result.gpu or {}).get("ceilings"))[2]
        result.status, result.exit_code = "error", EXIT_INTERNAL
        result.message = (f"performance points withheld ({', '.join(withheld)}): this GPU's "
                          f"ceilings could not be measured ({why}), so the speeds could not be "
                          f"checked against what the GPU can do; grade again")


def _grade(result: GradeResult, repo: Path, submission: Path, configs: list, build_dir: Path,
           options: GradeOptions, progress) -> None:
    seed, jobs = options.seed, options.jobs
    stage_dir = build_dir / "submission"
    staged = []
    for cfg in configs:
        lab = LabResult(lab=cfg.name, title=cfg.title, max_points=cfg.max_points)
        result.labs.append(lab)
        try:
            lab.files = build.stage_submission(submission, cfg.name, cfg.student_files,
                                               stage_dir, cfg.max_file_kib)
        except GraderError as e:
            # the report names the lab already
            lab.status, lab.message = "bad_files", e.message.removeprefix(f"{cfg.name}: ")
            continue
        lab.seed = seed     # a forced seed is known from the start; a drawn one: _draw_seeds
        staged.append((cfg, lab))
    if not staged:
        return

    sandbox, unsandboxed = build.build_sandbox_check(options.unsandboxed_build)
    if unsandboxed:
        for _, lab in staged:
            lab.warnings.append(unsandboxed)
        progress(f"WARNING: {unsandboxed}")
    progress(f"configuring ({', '.join(c.name for c, _ in staged)})")
    with timed(result.stages, "configure"):
        configured = build.configure(repo, build_dir, stage_dir, [c.name for c, _ in staged],
                                     sandbox=sandbox)
    if not configured.ok:
        for _, lab in staged:
            lab.status, lab.build, lab.message = "build_failed", configured, configured.hint
        return
    paths = manifest.load_manifest(build_dir)

    hashes = judge.BinaryHashes()
    with timed(result.stages, "build: harness"):
        probe_build = build.build_targets(build_dir, [GPU_INFO], jobs)
    if not probe_build.ok:
        raise GraderError(f"the harness itself does not build ({GPU_INFO}):\n" + probe_build.log,
                          EXIT_INTERNAL)
    _record(hashes, GPU_INFO, paths.gpu_info)

    items = []
    for cfg, lab in staged:
        try:
            items.append(LabBuild(cfg, lab, paths.lab(cfg.name)))
        except GraderError as e:
            _lab_error(cfg, lab, e.message)
    built = [(i.cfg, i.lab, i.lab_paths)
             for i in build_labs(items, paths, build_dir, stage_dir, jobs, hashes, progress,
                                 result.stages,
                                 harness_targets=(CEILINGS,) if options.performance else ())]
    if not built:
        return

    try:
        hashes.verify(GPU_INFO)
    except judge.TamperedError as e:
        for cfg, lab, _ in built:
            _lab_error(cfg, lab, e.message)
        return
    with timed(result.stages, "GPU probe"):
        gpu = probe_gpu(paths.gpu_info)
    # The GPU lock and the memory lock of the GPU probed (its UUID): gradings on other GPUs of
    # the host do not wait for this one's benchmarks.
    gpulock.use_gpu(gpu.get("uuid"))
    result.gpu = gpu
    if not gpu.get("available"):
        for cfg, lab, _ in built:
            lab.status = "no_gpu"
            # Said once for the grading (result.message), not once per lab.
            lab.message = ("The build succeeded; GPU tests and benchmarks were not run and no "
                           "points were awarded (no GPU).")
            lab.groups = [GroupResult(g.name, g.filter, g.points, note="not run: no GPU")
                          for g in cfg.groups]
            lab.groups += _lesson_groups(cfg, lab, False, note="not run: no GPU")
            lab.performance = [_perf_result(p, status="not_run", message="not run: no GPU")
                               for p in cfg.performance]
        result.status = "no_gpu"
        result.message = f"no CUDA GPU: {plain_gpu_reason(gpu.get('reason', 'unknown'))}"
        return

    # In a batch (LABS_GPU_LOCK_EXCLUSIVE=1): the GPU alone from the ceilings to the last
    # benchmark, this grading's labs tested side by side; other gradings build meanwhile.
    with _whole_grading(result.stages):
        # Every measured benchmark is checked against the GPU's ceilings; without them its points
        # are withheld. Measured once, when the first lab is about to be benchmarked (inside the
        # GPU's exclusive hold, after every test judge and worker has ended): a grading in which
        # no lab reaches its benchmarks (most wrong submissions) measures nothing.
        # Its program is built now, with the rest of the harness: nothing is built once the
        # seeds are drawn.
        ceilings_built = (build.build_targets(build_dir, [CEILINGS], jobs)
                          if options.performance and any(cfg.performance for cfg, _, _ in built)
                          else None)

        def ceilings() -> dict:
            if "ceilings" not in gpu:
                progress("measuring the GPU's ceilings (FP32 peak, memory bandwidth)")
                with timed(result.stages, "GPU ceilings"):
                    gpu["ceilings"] = measure_ceilings(build_dir, paths.gpu_info, jobs,
                                                       ceilings_built)
            return gpu["ceilings"] or {"error": "the ceilings were not measured"}

        # Found either way: graded race checks need it; `sanitize` controls memcheck re-runs only.
        sanitizer = judge.find_sanitizer()
        if options.test_timeout_s is not None:
            built = [(dataclasses.replace(cfg, test_timeout_s=options.test_timeout_s), lab, lab_paths)
                     for cfg, lab, lab_paths in built]
        if options.performance:
            built = _with_profiler(built, progress, every=options.profile)
        if options.performance and options.race_audit:
            if sanitizer is None:
                raise GraderError("--race-audit needs compute-sanitizer (PATH, $CUDA_HOME/bin, "
                                  "/usr/local/cuda/bin), which was not found", EXIT_USAGE)
            built = [(dataclasses.replace(cfg, race_audit=sanitizer) if cfg.performance else cfg,
                      lab, lab_paths) for cfg, lab, lab_paths in built]
        if seed is None:
            _draw_seeds(built)

        # Bench judges started as their labs' tests end (start_bench), each waiting for its seed
        # while other labs' tests run; the one a lab's score_lab does not take is killed below.
        started = {}

        def tests_of(item) -> bool:
            cfg, lab, lab_paths = item
            tested = test_lab(cfg, lab, lab_paths, hashes, progress, sanitize=options.sanitize,
                              sanitizer=sanitizer)
            if tested and benchmarked(cfg, lab, options.performance):
                started[lab.lab] = start_bench(cfg, lab, lab_paths, hashes)
            return tested

        def score(item) -> None:
            cfg, lab, lab_paths = item
            score_lab(cfg, lab, lab_paths, hashes, options.performance, progress, ceilings=ceilings,
                      started=started.pop(lab.lab, None))

        def hold_for_benchmarks(labs: list):
            """The GPU, exclusively, once for every benchmark of this grading (each lab's benchmark
            judge then runs inside it): one wait behind other graders' tests, not one per lab."""
            if options.performance and any(cfg.performance for cfg, _, _ in labs):
                return _gpu(result.stages)
            return contextlib.nullcontext()

        try:
            tests_then_benchmarks(built, tests_of, score, options.labs_at_once,
                                  hold_for_benchmarks)
        finally:
            for judge_started in started.values():
                if judge_started is not None:
                    judge_started.close()


def _with_profiler(built: list, progress, every: bool) -> list:
    """Each lab's config with the profiler (ncu) its bench judge runs one timed call under:
    of every benchmark with `every` (--profile), else of the benchmarks its profile-counter
    [[lesson]] entries read (none: no profiler). Where ncu is not found, each lab that would
    have been profiled says so and is graded without (its lessons then say they were not
    measured)."""
    def wanted(cfg) -> tuple | None:
        if every:
            return ()
        only = tuple(dict.fromkeys(e.benchmark for e in cfg.lessons if e.profiled))
        return only or None
    todo = [(cfg, wanted(cfg)) for cfg, _, _ in built if cfg.performance]
    if not any(only is not None for _, only in todo):
        return built
    ncu = judge.find_profiler()
    if ncu is None:
        why = ("no profile: Nsight Compute's ncu was not found (PATH, $CUDA_HOME/bin, "
               "/usr/local/cuda/bin)")
        progress(f"WARNING: {why}")
        for cfg, lab, _ in built:
            if cfg.performance and wanted(cfg) is not None:
                lab.warnings.append(why)
        return built
    out = []
    for cfg, lab, lab_paths in built:
        only = wanted(cfg) if cfg.performance else None
        if only is not None:
            cfg = dataclasses.replace(cfg, profiler=ncu, profile_only=only)
        out.append((cfg, lab, lab_paths))
    return out


def _draw_seeds(built: list) -> None:
    """Each lab about to be tested gets a base seed of its own, fresh from the system's entropy
    (grader/seeds.py). Drawn here, after every build and check and right before the judges run,
    and kept in this process's memory only (the lab's result, written at the end; the judges'
    standard input): nothing built or staged before can have known it."""
    for _, lab, _ in built:
        lab.seed = seeds.draw_seed()


def tests_then_benchmarks(labs: list, test, score, at_once: int | None = None,
                          hold=None) -> None:
    """test(lab) for every lab, up to `at_once` of them side by side (None: all): their
    correctness tests share the GPU (the shared GPU lock; each judge has its own inputs and
    worker); then score(lab), in order, for each lab whose test(lab) returned True: its
    benchmarks, alone on the GPU, all of them inside hold(those labs) when given (a context
    manager: the GPU lock held once for them all). A grading of several labs waits for its
    slowest lab's tests, not for the sum of them."""
    at_once = max(1, min(len(labs), at_once or len(labs)))
    if at_once > 1:
        with concurrent.futures.ThreadPoolExecutor(at_once) as pool:
            tested = list(pool.map(test, labs))
    else:
        tested = [test(lab) for lab in labs]
    passed = [lab for lab, ok in zip(labs, tested) if ok]
    with hold(passed) if hold is not None and passed else contextlib.nullcontext():
        for lab in passed:
            score(lab)


def measure_ceilings(build_dir: Path, gpu_info: Path, jobs: int | None, built=None) -> dict:
    """This GPU's ceilings (labkit_gpu_ceilings: FP32 peak and read GB/s, for the plausibility
    check; cuBLAS SGEMM GFLOP/s and copy GB/s, for the HTML report's roofline), measured while
    no student code runs (before a lab's benchmarks, every judge and worker of its tests gone).
    `built`: the program's build result when it was built already. Never raises: whatever goes
    wrong is {'error': why}; then no performance points are awarded
    (scoring.check_plausibility) and the chart says so."""
    try:
        if built is None:
            built = build.build_targets(build_dir, [CEILINGS], jobs)
        if not built.ok:
            return {"error": f"{CEILINGS} did not build: {built.log.strip()[-300:]}"}
        binary = gpu_info.parent / CEILINGS   # built beside labkit_gpu_info (common/)
        with gpulock.gpu_lock():
            with judge.private_dir() as cwd:
                proc = runner.run([str(binary)], 120, cwd=str(cwd),
                                  base_env=judge.scrubbed_env())
        if proc.timed_out:
            return {"error": f"{CEILINGS} did not finish within 120 s"}
        if proc.returncode != 0:
            return {"error": f"{CEILINGS} exited {proc.returncode}: {proc.output.strip()[-300:]}"}
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        out = {k: float(v) for k, v in data.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
        if not (out.get("sgemm_gflops", 0) > 0 and out.get("copy_gbps", 0) > 0):
            return {"error": f"{CEILINGS} printed no usable figures: {proc.stdout.strip()[-200:]}"}
        return out
    except Exception as e:   # a chart's input: never worth a failed grading
        return {"error": f"{CEILINGS}: {type(e).__name__}: {e}"}


def _record(hashes: judge.BinaryHashes, name: str, path: Path) -> str:
    try:
        return hashes.record(name, path)
    except OSError as e:
        raise GraderError(f"built, but {name} is not at {path} ({e.strerror}): the build and "
                          f"its {manifest.MANIFEST_NAME} disagree", EXIT_INTERNAL) from None


def _readable(b: BuildResult, stage_dir: Path, seconds: float | None = None) -> BuildResult:
    return BuildResult(ok=b.ok, seconds=b.seconds if seconds is None else seconds,
                       log=build.readable(b.log, stage_dir), hint=build.readable(b.hint, stage_dir))


def check_policy(cfg: LabConfig, lab_paths: manifest.LabPaths,
                 paths: manifest.Manifest, stage: str) -> tuple:
    """(PolicyReport, the policy's report text). `stage` "source": what the source pulls in
    (includes, incbin), checked BEFORE it is compiled, so that a compile error cannot print
    lines of a file it had no business including; "object": the compiled object."""
    policy = importlib.import_module("grader.policy")
    if stage == "source":
        found = policy.check_submission([], list(lab_paths.student_sources),
                                        list(lab_paths.interface_headers), paths.compile_commands,
                                        cfg.policy, sandbox=lab_paths.build_sandbox)
    else:
        found = policy.check_submission(list(lab_paths.student_objects), [],
                                        list(lab_paths.interface_headers), None, cfg.policy)
    violations = [{"rule": str(v.rule), "symbol": str(v.symbol), "message": str(v.message)}
                  for v in found.violations]
    kernels = None if found.kernels is None else [dict(k) for k in found.kernels]
    return (PolicyReport(ok=bool(found.ok), violations=violations,
                         seconds=round(float(found.seconds), 3), kernels=kernels),
            found.report())


@dataclasses.dataclass
class LabBuild:
    """One lab on its way through the build steps (build_lab)."""
    cfg: LabConfig
    lab: LabResult
    lab_paths: manifest.LabPaths
    source_seconds: float = 0.0
    student: BuildResult | None = None


def build_lab(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths,
              paths: manifest.Manifest, build_dir: Path, stage_dir: Path, jobs: int | None,
              hashes: judge.BinaryHashes, progress) -> bool:
    """The student object, the policy check on it, then the worker and the judges, hashed.
    True when the lab is ready to run; otherwise its status says why not."""
    item = LabBuild(cfg, lab, lab_paths)
    return all(step(item, paths, build_dir, stage_dir, jobs, hashes, progress)
               for step in BUILD_STEPS)


def build_labs(items: list, paths: manifest.Manifest, build_dir: Path, stage_dir: Path,
               jobs: int | None, hashes: judge.BinaryHashes, progress, stages: list,
               harness_targets: tuple = ()) -> list:
    """build_lab for several labs, step by step: before the steps that compile, every lab still
    in the running has its targets built in one build (build.build_together), so that the
    labs' objects, and then their workers and judges, compile side by side instead of one lab
    after another; each lab's own build then finds them up to date, or fails with its own log.
    Nothing of the student's is compiled before its source passed the policy, nor linked
    before its object did; the judges (no student code) compile beside the objects. Each step runs for the labs side by side too (the policy checks, the hashes),
    their builds one at a time (one build tool in a build folder at once). `harness_targets`
    (no student code: the ceilings program) join the first build. The labs (LabBuild) that are
    ready to run, in their order."""
    for step, targets_of, stage in ((_source_step, None, None),
                                    (_object_step, _object_targets, "build: objects, labs at once"),
                                    (_link_step, _link_targets, "build: workers and judges, labs at once")):
        # The judges hold no student code: they compile beside the objects (lab 11's benchmark,
        # the cuDNN frontend's headers, took 19 s of a cold grading's critical path after them).
        judges = [t for i in items for t in _judge_targets(i)] if step is _object_step else []
        if targets_of is not None and (len(items) > 1 or judges):
            if len(items) > 1:
                progress(f"building {', '.join(i.cfg.name for i in items)} side by side")
            extra = list(harness_targets) + judges if step is _object_step else []
            with timed(stages, stage if len(items) > 1 else "build: object and judges"):
                build.build_together(build_dir, [t for i in items for t in targets_of(i)] + extra,
                                     jobs)
        if len(items) > 1:
            with concurrent.futures.ThreadPoolExecutor(len(items)) as pool:
                ok = list(pool.map(lambda i: step(i, paths, build_dir, stage_dir, jobs, hashes,
                                                  progress), items))
        else:
            ok = [step(i, paths, build_dir, stage_dir, jobs, hashes, progress) for i in items]
        items = [i for i, passed in zip(items, ok) if passed]
    return items


# One build tool at a time in a build folder (the labs' steps run side by side: build_labs).
_BUILD_LOCK = threading.Lock()


def _build_lab_targets(lab: LabResult, stage: str, build_dir: Path, targets: list,
                       jobs: int | None) -> BuildResult:
    """build.build_targets under _BUILD_LOCK; the lab's stage times the build, not the wait."""
    with _BUILD_LOCK:
        with timed(lab.stages, stage):
            return build.build_targets(build_dir, targets, jobs)


def _object_targets(item: LabBuild) -> list:
    return [item.lab_paths.student_target]


def _judge_targets(item: LabBuild) -> list:
    """The lab's judges: they link the harness and the lab's tests and benchmarks, never the
    student's object, so they may be built before it passed the policy."""
    return [item.lab_paths.test.target, item.lab_paths.bench.target]


def _link_targets(item: LabBuild) -> list:
    """Every worker of the lab (two when some variants alone are given a helper library,
    manifest.LabPaths.helper_worker; each links the student's object, so each is checked) and
    its judges."""
    lp = item.lab_paths
    return [*(w.target for w in lp.workers), lp.test.target, lp.bench.target]


def _source_step(item: LabBuild, paths, build_dir, stage_dir, jobs, hashes, progress) -> bool:
    cfg, lab, lab_paths = item.cfg, item.lab, item.lab_paths
    progress(f"checking {cfg.name}'s source against its policy")
    with timed(lab.stages, "policy: source"):
        passed = _policy_stage(cfg, lab, lab_paths, paths, "source")
    item.source_seconds = lab.policy.seconds if passed else 0.0
    return passed


def _object_step(item: LabBuild, paths, build_dir, stage_dir, jobs, hashes, progress) -> bool:
    cfg, lab, lab_paths = item.cfg, item.lab, item.lab_paths
    progress(f"building {cfg.name}")
    student = _build_lab_targets(lab, "build: student object", build_dir,
                                 [lab_paths.student_target], jobs)
    item.student = student
    lab.build = _readable(student, stage_dir)
    if not student.ok:
        lab.status, lab.message = "build_failed", lab.build.hint
        return False

    progress(f"checking {cfg.name}'s object against its policy")
    with timed(lab.stages, "policy: object"):
        passed = _policy_stage(cfg, lab, lab_paths, paths, "object")
    if not passed:
        return False
    lab.policy.seconds = round(lab.policy.seconds + item.source_seconds, 3)
    return True


def _link_step(item: LabBuild, paths, build_dir, stage_dir, jobs, hashes, progress) -> bool:
    cfg, lab, lab_paths = item.cfg, item.lab, item.lab_paths
    student = item.student
    rest = _build_lab_targets(lab, "build: worker and judges", build_dir, _link_targets(item),
                              jobs)
    lab.build = _readable(rest, stage_dir, seconds=student.seconds + rest.seconds)
    if rest.refused:
        _refuse_linked_worker(lab, lab_paths, stage_dir, rest)
        return False
    if not rest.ok:
        lab.status, lab.message = "build_failed", lab.build.hint
        return False
    build.mark_built(stage_dir, cfg.name, lab.files)   # the same files next time: reused
    try:
        for target in (lab_paths.test, lab_paths.bench, *lab_paths.workers):
            lab.binaries[target.target] = _record(hashes, target.target, target.path)
    except GraderError as e:
        _lab_error(cfg, lab, e.message)
        return False
    lab.binaries[GPU_INFO] = hashes.digest(GPU_INFO)
    return True


BUILD_STEPS = (_source_step, _object_step, _link_step)


# The policy rule recorded when the linked worker is refused for its memory (grader/build.py,
# check_linked_workers; `linked_device_code` when its device code is not the object's): the
# object passed the object stage, the worker made from it did not.
LINKED_WORKER_RULE = "executable_memory"


def _refuse_linked_worker(lab: LabResult, lab_paths: manifest.LabPaths, stage_dir: Path,
                          rest: BuildResult) -> None:
    """The worker compiled and linked, but build.check_linked_workers refused it (an executable
    stack, a writable and executable segment) and deleted it: a refusal of the policy, like the
    object stage's, so status 'rejected' with the finding among the policy's violations and in
    the lab's message; the build itself succeeded."""
    why = build.readable(rest.hint, stage_dir)
    rule = build.linked_refusal_rule(rest.hint)
    lab.build = BuildResult(ok=True, seconds=lab.build.seconds)
    violation = {"rule": rule, "symbol": lab_paths.worker.target, "message": why}
    before = lab.policy or PolicyReport(ok=True)
    lab.policy = PolicyReport(ok=False, violations=[*before.violations, violation],
                              seconds=before.seconds)
    lab.status = "rejected"
    lab.message = (f"policy: 1 problem found in the linked worker: the submission was not run\n"
                   f"  - [{rule}] {why}")


def _policy_stage(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths,
                  paths: manifest.Manifest, stage: str) -> bool:
    """Runs one stage of the policy check; False (and the lab's status set) unless it passed."""
    try:
        lab.policy, report = check_policy(cfg, lab_paths, paths, stage)
    except GraderError as e:
        _lab_error(cfg, lab, f"the policy check could not run, so nothing was run: {e.message}")
        return False
    except Exception as e:   # never run code the check did not pass
        _lab_error(cfg, lab, f"the policy check failed ({type(e).__name__}: {e}), so nothing "
                             f"was run")
        return False
    if not lab.policy.ok:
        lab.status, lab.message = "rejected", report
        return False
    return True


def _lesson_groups(cfg: LabConfig, lab: LabResult, correct: bool, note: str = "",
                   ceilings=None) -> list:
    """The lab's [[lesson]] entries as groups (scoring.lesson_group), from the policy's kernel
    table and, for a speed gate, the GPU's `ceilings`; with `note`, unscored groups that say it
    (no GPU, an error)."""
    if note:
        return [GroupResult(config.lesson_group_name(e), e.counter, e.points, note=note)
                for e in cfg.lessons]
    if not cfg.lessons:
        return []
    from grader.policy.device import MAX_KERNELS  # more rows than this: the file has more kernels
    kernels = (lab.policy.kernels if lab.policy is not None else None) or []
    cut_short = len(kernels) > MAX_KERNELS
    perf = {p.benchmark: p for p in lab.performance}
    return [scoring.profile_lesson_group(e, perf.get(e.benchmark), correct) if e.profiled
            else scoring.lesson_group(e, kernels, correct, cut_short, gate=scoring.fp32_peak_gate(
                e, perf.get(e.faster_than_fp32_peak), ceilings)) for e in cfg.lessons]


def _lab_error(cfg: LabConfig, lab: LabResult, message: str) -> None:
    """The lab could not be graded: status error, 0 points, what was recorded kept."""
    lab.status, lab.message = "error", message
    if not lab.groups:
        lab.groups = [GroupResult(g.name, g.filter, g.points) for g in cfg.groups]
    named = {g.name for g in lab.groups}
    lab.groups += [g for g in _lesson_groups(cfg, lab, False, note="not checked")
                   if g.name not in named]
    for g in lab.groups:
        g.points = 0.0
    if not lab.performance:
        lab.performance = [_perf_result(p, message="not run") for p in cfg.performance]
    for p in lab.performance:
        p.points = 0.0
    lab.points = 0.0


def _perf_result(p, **changes) -> PerfResult:
    base = PerfResult(max_points=p.points, target=p.target, floor=p.floor,
                      label=p.metric_label or p.metric, name=p.name, benchmark=p.benchmark,
                      metric_name=p.metric, bands=p.bands, reference=p.reference,
                      bonus=p.bonus, lecture=p.lecture)
    return dataclasses.replace(base, **changes)


def grade_lab(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths,
              hashes: judge.BinaryHashes, run_performance: bool, progress,
              sanitize: bool = True, sanitizer: str | None = None,
              ceilings=None) -> None:
    """Runs the lab's tests (test_lab), then its benchmarks, and scores them (score_lab),
    the bench judge started as the tests end (start_bench), as grade() does."""
    if test_lab(cfg, lab, lab_paths, hashes, progress, sanitize=sanitize, sanitizer=sanitizer):
        started = (start_bench(cfg, lab, lab_paths, hashes)
                   if benchmarked(cfg, lab, run_performance) else None)
        score_lab(cfg, lab, lab_paths, hashes, run_performance, progress, ceilings=ceilings,
                  started=started)


def test_lab(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths,
             hashes: judge.BinaryHashes, progress, sanitize: bool = True,
             sanitizer: str | None = None) -> bool:
    """Runs the lab's correctness tests and fills lab.groups. False when the lab ended in an
    error (lab.status says why) and is not to be scored. Several labs' may run at once (one
    thread each): it touches only `lab`."""
    test = lab_paths.test
    workers = [w.target for w in lab_paths.workers]
    try:
        hashes.verify(test.target, *workers)
        cases: dict = {}
        with timed(lab.stages, "tests: list"):
            names = gtest.list_tests(test.path, cases=cases)
    except judge.TamperedError as e:
        _lab_error(cfg, lab, e.message)
        return False
    except RuntimeError as e:
        _lab_error(cfg, lab, str(e))
        return False
    selected = {g.name: [n for n in names if gtest.matches_filter(n, g.filter)]
                for g in cfg.groups}
    run_for, runs = {}, []
    if any(selected.values()):
        union = gtest.positive_union([g.filter for g in cfg.groups])
        count = sum(gtest.matches_filter(n, union) for n in names)
        if sanitizer is None:
            lab.warnings.append("compute-sanitizer was not found (PATH, $CUDA_HOME/bin, "
                                "/usr/local/cuda/bin): failing calls were not re-run under "
                                "memcheck, and race checks (if the lab has them) were skipped")
        progress(f"{cfg.name}: running {count} tests")
        try:
            hashes.verify(test.target, *workers)
        except judge.TamperedError as e:
            _lab_error(cfg, lab, e.message)
            return False
        # A lab of many tests splits them among several judges, side by side (each its own
        # worker; a test's inputs come from its name, so its verdict does not depend on which),
        # case by case: every version of a case in one judge, which draws what they share once.
        # Each judge is given its tests by name (names of letters, digits, '_', '/' and '.' are
        # patterns that match themselves only); other names: GoogleTest's sharding, test by test.
        shards = test_judges(count)
        shard_of, selections = judge_selections(names, cases, union, shards)

        def run_shard(index: int) -> gtest.JudgeRun:
            gtest_filter, shard = selections[index]
            return gtest.run_judge(test.path, gtest_filter,
                                   sum(1 for s in shard_of.values() if s == index),
                                   worker=lab_paths.worker.path, routes=lab_paths.worker_routes,
                                   seed=lab.seed, call_timeout_s=cfg.test_timeout_s,
                                   budget_s=cfg.test_budget_s,
                                   sanitizer=sanitizer, memcheck=sanitize,
                                   memory_lock=gpulock.memory_lock_path(),
                                   shard=shard, streaks=streaks / "streaks",
                                   no_shared_memory=gtest.no_shared_memory(cfg.policy))
        try:
            # The lab's judges count each variant's hangs and crashes together (gtest.judge_command).
            with judge.private_dir("labs-streaks-") as streaks, _gpu(lab.stages, shared=True):
                if shards == 1:
                    runs = [run_shard(0)]
                else:
                    with concurrent.futures.ThreadPoolExecutor(shards) as pool:
                        runs = list(pool.map(run_shard, range(shards)))
        except RuntimeError as e:
            _lab_error(cfg, lab, str(e))
            return False
        lab.sandbox = runs[0].sandbox
        for r in runs:
            lab.warnings += r.warnings
        # A test reported by any judge has that verdict; one reported by none is blamed on the
        # judge that was to run it (result_for says how that judge ended).
        run_for = {name: runs[shard] for name, shard in shard_of.items()}
        for r in runs:
            run_for.update({name: r for name in r.tests})
        # The lab's wall time is its slowest judge's: its stages.
        slowest = max(runs, key=lambda r: r.proc.seconds)
        for name, seconds in judge_stages(slowest, [(g.name, selected[g.name])
                                                    for g in cfg.groups]):
            add_stage(lab.stages, name, seconds)
    for g in cfg.groups:
        group = GroupResult(g.name, g.filter, g.points)
        if not selected[g.name]:
            group.note = "no tests in this build (hidden tests are not part of a student release)"
            group.max_points = 0.0
        group.tests = [gtest.result_for(run_for.get(n, runs[0]), n) for n in selected[g.name]]
        group.points = scoring.score_group(group)
        lab.groups.append(group)
    return True


# A test name that, as a GoogleTest filter, matches itself and nothing else.
_PLAIN_TEST_NAME = re.compile(r"[A-Za-z0-9_/.]+")


def judge_selections(names: list, cases: dict, union: str, shards: int) -> tuple:
    """How `shards` judges split the tests `union` selects from `names` (the binary's order;
    `cases`: each test's case, gtest.list_tests): (test -> its judge, gtest.shard_of; [(the
    filter, GoogleTest's (index, total) or None)] per judge). Case by case, each judge given its
    tests by name, where every name is a pattern that matches itself only; else GoogleTest's
    own sharding, test by test, on the whole filter. One judge: the whole filter."""
    by_name = all(_PLAIN_TEST_NAME.fullmatch(n) for n in names)
    shard_of = gtest.shard_of(names, union, shards, cases if by_name else None)
    if shards == 1:
        return shard_of, [(union, None)]
    if by_name:
        return shard_of, [(":".join(n for n, s in shard_of.items() if s == i), None)
                          for i in range(shards)]
    return shard_of, [(union, (i, shards)) for i in range(shards)]


# Tests per judge before a lab's tests are split among several judges, and the most judges per
# lab. Measured on an H100 (eight labs at once, 16 cores): lab 06's 114 tests took 27.5 s in one
# judge, lab 05's 216 tests 23.7 s; each judge costs about 2.5 s to start.
TESTS_PER_JUDGE = 64
MAX_JUDGES_PER_LAB = 3


def test_judges(count: int) -> int:
    """How many judges run a lab's `count` tests side by side."""
    return max(1, min(MAX_JUDGES_PER_LAB, -(-count // TESTS_PER_JUDGE)))


def benchmarked(cfg: LabConfig, lab: LabResult, run_performance: bool) -> bool:
    """Whether score_lab will benchmark the lab, once test_lab filled its groups: it has
    benchmarks, they are to run, no call computed on the CPU and every test passed."""
    return (bool(cfg.performance) and run_performance
            and not scoring.host_compute_tests(lab.groups) and scoring.all_correct(lab.groups))


def start_bench(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths,
                hashes: judge.BinaryHashes):
    """The lab's bench judge, started now (bench.start_benchmarks) and ready for its 'go', or
    None when it could not be (score_lab then starts it itself, and reports what fails). Started
    under the GPU's shared lock, like tests: its GPU context, its workers' start and its
    instances overlap other labs' tests, never a benchmark. Stage 'bench: start'."""
    workers = [w.target for w in lab_paths.workers]
    try:
        hashes.verify(lab_paths.bench.target, *workers)
    except judge.TamperedError:
        return None
    with timed(lab.stages, "bench: start"), _gpu(lab.stages, shared=True):
        try:
            started = bench.start_benchmarks(
                lab_paths.bench.path, benchmark_names(cfg), worker=lab_paths.worker.path,
                seed=lab.seed, options=bench_options(cfg, lab_paths))
        except bench.BenchError:
            return None
        started.wait_ready()
    return started


def bench_options(cfg: LabConfig, lab_paths: manifest.LabPaths) -> bench.Options:
    """How the lab's bench judge runs: its variants' workers, the lab's shared-memory rule, and
    this grading's profiler and race audit (set on `cfg` by grade())."""
    return bench.Options(routes=lab_paths.worker_routes,
                         no_shared_memory=gtest.no_shared_memory(cfg.policy),
                         profiler=cfg.profiler, profile_only=cfg.profile_only,
                         race_audit=cfg.race_audit)


def benchmark_names(cfg: LabConfig) -> list:
    """The benchmarks the lab's performance entries name, each once, in their order."""
    return list(dict.fromkeys(p.benchmark for p in cfg.performance))


def score_lab(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths,
              hashes: judge.BinaryHashes, run_performance: bool, progress,
              ceilings=None, started=None) -> None:
    """After test_lab: voids correctness for host compute, runs the benchmarks when every test
    passed, and scores the lab. `ceilings`: the GPU's figures from measure_ceilings (or
    {'error': why}), or a function that returns them, called once the lab is to be benchmarked
    and before its first benchmark; every measured benchmark is checked against them
    (scoring.check_plausibility). None skips that check (for callers that test the rest:
    grade() always passes them). `started`: the lab's bench judge from start_bench, used (or
    closed) here."""
    with started if started is not None else contextlib.nullcontext():
        _score_lab(cfg, lab, lab_paths, hashes, run_performance, progress, ceilings, started)


def _score_lab(cfg, lab, lab_paths, hashes, run_performance, progress, ceilings, started):
    workers = [w.target for w in lab_paths.workers]
    cpu_calls = scoring.host_compute_tests(lab.groups)
    if cpu_calls:
        reason = (f"no correctness points: {len(cpu_calls)} call(s) computed on the CPU "
                  f"(first: {cpu_calls[0].name}); the launcher must only put work on the GPU")
        scoring.void_correctness(lab.groups, reason)
        lab.message = (lab.message + "\n" if lab.message else "") + reason

    correct = scoring.all_correct(lab.groups)
    lab.performance = [_perf_result(p) for p in cfg.performance]
    if lab.performance:
        if not correct:
            for perf in lab.performance:
                perf.status = "gated"
                perf.message = "not measured: every correctness test must pass first"
        elif not run_performance:
            for perf in lab.performance:
                perf.status, perf.message = "not_run", "not measured (--no-performance)"
        else:
            try:
                hashes.verify(lab_paths.bench.target, *workers)
            except judge.TamperedError as e:
                _lab_error(cfg, lab, e.message)
                return
            if callable(ceilings):
                ceilings = ceilings()
            _benchmark(cfg, lab, lab_paths, progress, started)
            if ceilings is not None:
                scoring.check_plausibility(lab.performance, ceilings, cfg.flop_factor)
                lab.implausible = any(p.implausible for p in lab.performance)
        for perf in lab.performance:
            perf.points = scoring.score_performance(perf)
    # After the benchmarks: a profile counter's lesson reads its benchmark's profiled call.
    lab.groups += _lesson_groups(cfg, lab, correct,
                                 ceilings=None if callable(ceilings) else ceilings)

    lab.points = scoring.lab_points(lab.groups, lab.performance)
    # Without hidden tests (a student release) the maximum shrinks to what can be earned.
    lab.max_points = scoring.lab_max_points(lab.groups, lab.performance)


@contextlib.contextmanager
def _gpu(stages: list, shared: bool = False):
    """The GPU lock (gpulock.gpu_lock); a wait for another grader's benchmark is timed as the
    stage 'wait: GPU'."""
    t0 = time.monotonic()
    waited = []
    with gpulock.gpu_lock(shared=shared, on_wait=lambda: waited.append(True)):
        if waited:
            add_stage(stages, "wait: GPU", time.monotonic() - t0)
        yield


def _whole_grading(stages: list):
    """gpulock.whole_grading when the batch asks for it (LABS_GPU_LOCK_EXCLUSIVE=1), its wait
    timed as the stage 'wait: GPU'; otherwise nothing (each lab takes the lock itself)."""
    if not gpulock.whole_grading_requested():
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def hold():
        t0 = time.monotonic()
        waited = []
        with gpulock.whole_grading(on_wait=lambda: waited.append(True)):
            if waited:
                add_stage(stages, "wait: GPU", time.monotonic() - t0)
            yield
    return hold()


def judge_stages(run: gtest.JudgeRun, groups: list) -> list:
    """[(stage, seconds)] of one test-judge run, from when each line arrived on the grader's
    clock: 'tests: start' (the judge and its first worker starting: up to the 'worker' event),
    'tests: <group>' for each group of `groups` ([(name, its test names)]) that has tests (the
    time from the verdict before to each of its tests' verdicts: a test in several groups
    counts in the first), 'tests: exit' (after the last verdict). They add up to the run's
    wall time."""
    total = run.proc.seconds
    owner = {}
    for name, tests in groups:
        for t in tests:
            owner.setdefault(t, name)
    # In the pipe's order (lines that came in one read share their time)
    verdicts = [(at, name) for name, at in run.arrivals.items() if name in owner]
    start = run.worker_at if run.worker_at is not None else (verdicts[0][0] if verdicts
                                                             else total)
    spent = {name: 0.0 for name, tests in groups if tests}
    last = start
    for at, name in verdicts:
        if at >= last:
            spent[owner[name]] += at - last
            last = at
    return ([("tests: start", start)] + [(f"tests: {name}", s) for name, s in spent.items()]
            + [("tests: exit", max(0.0, total - last))])


# A benchmark's own wall time, measured by the bench judge around it (common/src/bench_suite.cpp).
WALL_COUNTER = "wall_s"


def _benchmark(cfg: LabConfig, lab: LabResult, lab_paths: manifest.LabPaths, progress,
               started=None) -> None:
    """Every performance entry of the lab, measured in one bench-judge run that holds the GPU
    exclusively (`started`: that judge, started ahead by start_bench). Stages: 'bench:
    <benchmark>' per benchmark that reported its wall time, and 'bench: other' for the rest of
    the judge's run from its 'go' on (its start, when not started ahead, and its exit, any
    benchmark that reported none)."""
    names = benchmark_names(cfg)
    timeout_s = sum(p.timeout_s for p in cfg.performance)
    if cfg.profiler:   # the judge's own limit per profiled call, and its start
        timeout_s += len(cfg.profile_only or names) * (bench.PROFILE_LIMIT_S + 10)
    if cfg.race_audit:  # and per audited call
        timeout_s += len(names) * (bench.RACE_AUDIT_LIMIT_S + 10)
    progress(f"{cfg.name}: benchmarking {', '.join(names)}")
    found = {}
    try:
        with _gpu(lab.stages):
            t0 = time.monotonic()
            try:
                found = bench.run_benchmarks(lab_paths.bench.path, names, timeout_s,
                                             worker=lab_paths.worker.path, seed=lab.seed,
                                             options=bench_options(cfg, lab_paths),
                                             started=started)
            finally:
                whole = time.monotonic() - t0
                reported = [(n, found[n].get(WALL_COUNTER)) for n in names
                            if isinstance(found.get(n), dict)]
                reported = [(n, float(s)) for n, s in reported
                            if isinstance(s, (int, float)) and not isinstance(s, bool)
                            and math.isfinite(s) and s >= 0]
                for n, s in reported:
                    add_stage(lab.stages, f"bench: {n}", s)
                add_stage(lab.stages, "bench: other", whole - sum(s for _, s in reported))
    except bench.BenchError as e:
        for perf in lab.performance:
            perf.status, perf.message = e.status, e.message
        return
    for perf in lab.performance:
        entry = found[perf.benchmark]
        if isinstance(entry, bench.BenchError):
            perf.status, perf.message = entry.status, entry.message
            continue
        # Finite numbers only: the results file stays strict JSON (no NaN, no Infinity).
        perf.counters = {k: v for k, v in entry.items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool)
                         and math.isfinite(v)}
        if perf.counters.get("race_audit") == bench.RACE_AUDIT_NO_VERDICT:
            lab.warnings.append(f"{perf.benchmark}: the race audit reached no verdict "
                                f"(racecheck did not finish within {bench.RACE_AUDIT_LIMIT_S:g} s, "
                                f"or compute-sanitizer could not run)")
        label = entry.get("label")
        perf.baseline = label[:200] if isinstance(label, str) else ""
        value = entry.get(perf.metric_name)
        if perf.metric_name not in perf.counters:
            perf.status = "failed"
            perf.message = (f"the benchmark reported no '{perf.metric_name}' counter"
                            if value is None else
                            f"the benchmark reported {perf.metric_name} = {value!r}, not a "
                            f"finite number")
            continue
        perf.metric = float(value)
        perf.status = "measured"
        lo = perf.counters.get(f"{perf.metric_name}_lo")
        hi = perf.counters.get(f"{perf.metric_name}_hi")
        if lo is not None and hi is not None:
            perf.metric_lo, perf.metric_hi = float(lo), float(hi)
        perf.band = scoring.perf_band(perf.metric, perf.target, perf.floor, perf.bands)
