"""Batch grading: every submission of a folder, graded on one machine, resumable.

    python3 -m grader batch SUBMISSIONS -o OUT [--labs ...] [--gpus 0,1] [--jobs N]
                                              [--shard I/N] [--seed N] [--timeout S]
    python3 -m grader batch-merge OUT [--submissions SUBMISSIONS]

SUBMISSIONS holds one folder per student: a cloned student repository (<sub>/labs/<lab>/...)
or a folder shaped like labs/ (<sub>/<lab>/...). Each is graded by its own
`python3 -m grader grade` process, started in a process group of its own, so that a submission
that breaks the build, hangs or crashes the grader costs that submission only (its command line
comes from grader/grade_args.py, typed, as the grader parses it).

How the machine is shared:
  - up to --jobs grader processes run at once, each with a build directory of its own that is
    kept and reused (build/batch/slot-K, claimed with a file lock, so two batches on one
    machine never share one; a slot goes to the next grader only once the one before has
    ended, and each grader also holds its build directory for its whole grading:
    gpulock.build_lock): builds run in parallel on the CPUs and only the student files
    recompile from one submission to the next;
  - each process is given one GPU (CUDA_VISIBLE_DEVICES) and that GPU's lock file, named
    after the GPU's UUID where nvidia-smi gives it (gpu_lock_path) (LABS_GPU_LOCK, with LABS_GPU_LOCK_EXCLUSIVE=1): the grader holds the lock once, from its
    first test to its last benchmark (gpulock.whole_grading; its own labs' tests run side by
    side inside it), so the GPU part of the gradings runs one submission at a time per GPU
    while the others build, and several GPUs are separate workers.

What is written under OUT:
  results/<name>.json   the grader's results (moved into place once complete)
  logs/<name>.log       the grader's console output
  state/<name>.json     the outcome, keyed by the submission's content hash: the sha256 of the
                        files the grader takes (each lab's student_files) and of the options
                        that change a grade. Written atomically, after the results. A re-run
                        skips every submission whose state has the same key and a final
                        outcome, so an interrupted batch resumes where it stopped and a changed
                        submission is graded again.
  gradebook.csv         the CSV gradebook (grader/reports.py), one row per submission
  class.html            the class page (the HTML reports: needs matplotlib; without it, none)
  summary.json          counts, failures, wall time, submissions per hour

Final outcomes (not graded again): graded, build_failed, rejected, bad_files. A submission
that was built and checked on a machine without a GPU (outcome no_gpu) is listed as not graded
on a GPU, and graded by the next run (on a GPU); the batch then exits 3 unless something
failed. A submission folder that is a symbolic link, or whose labs/ is one, is not graded
(outcome refused: a link could point at someone else's work or at the solutions): listed as
REFUSED with a 0 row, checked again by every run; the batch then exits 2 unless something
failed. Anything else (the grader crashed or was killed, timed out, or an error of the harness)
is listed as failed (exit 1) and tried again by the next run.

Seeds: each grader process draws its labs' seeds afresh (grader/seeds.py), so a resumed batch
keeps what it graded (a correct submission passes every draw) and each results file records
its seeds; --seed N forces them all, and is part of every submission's key.
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import hashlib
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader import __version__, grade_args
from grader.errors import GraderError
from grader.report_text import terminal_text

REPO = Path(__file__).resolve().parent.parent

FINAL = ("graded", "build_failed", "rejected", "bad_files")
# The submission folder, or its labs/ folder, is a symbolic link: not graded (a link could point
# at someone else's work or at the solutions), 0 points, the batch exits 2. Checked again by
# every run, never taken as done: a fixed submission is graded by the next run.
REFUSED = "refused"
LINK_REFUSED = ("is a symbolic link: refused (a link could point at someone else's work or at "
                "the solutions, so links are not followed); put the folder itself there")
NO_GPU = "no_gpu"   # built and checked, not graded: no GPU here; graded again by the next run
NOT_ON_A_GPU = "built and checked, NOT GRADED ON A GPU"
# 2: seeds drawn afresh for every grading (no longer derived from the files and a secret):
# a batch resumed across that change grades every submission again rather than mix them.
STATE_VERSION = 2
# A test hook: a command run instead of `python3 -m grader grade` (shlex-split; it gets the
# same arguments). The batch's own tests and the Slurm recipe's test use a fake grader here.
GRADER_ENV = "LABS_BATCH_GRADER"
LOCK_DIR_ENV = "LABS_BATCH_LOCK_DIR"
DEFAULT_TIMEOUT_S = 3600.0
TERM_GRACE_S = 5.0
_NAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}")
PR_SET_PDEATHSIG = 1


# ------------------------------------------------------------------------------- submissions
@dataclasses.dataclass
class Submission:
    name: str        # the folder's name; names the files under OUT
    root: Path       # the folder
    labs_dir: Path   # what `grade --submission` gets: <root>/labs, or <root> itself
    refused: str = ""   # why it is not graded (REFUSED: a link), else ""

    @property
    def label(self) -> str:
        return self.name


def discover(folder: Path) -> list:
    """Every submission folder of `folder`, sorted by name. Hidden entries (.git, .DS_Store)
    and plain files are skipped. A symbolic link to a folder in `folder`, or a submission whose
    labs/ is a link, is a submission refused (`refused` says why; REFUSED): never followed, as
    it could point at another student's work or at the solutions, nor skipped silently. (Its lab
    folders and files are the grader's to refuse: grader/build.py.) A name that cannot name a
    file safely is an error, as it would be in the CSV."""
    folder = Path(folder)
    if not folder.is_dir():
        raise GraderError(f"the submissions folder {folder} does not exist or is not a folder")
    subs, bad = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        link = entry.is_symlink()
        if not entry.is_dir():       # a file, or a link to one or to nothing: not a submission
            continue
        if not _NAME_OK.fullmatch(entry.name):
            bad.append(entry.name)
            continue
        root = Path(entry.path)
        labs = root / "labs"
        if link:
            subs.append(Submission(entry.name, root, root,
                                   refused=f"the submission folder {root} {LINK_REFUSED}"))
        elif labs.is_symlink():
            subs.append(Submission(entry.name, root, labs,
                                   refused=f"its labs folder {labs} {LINK_REFUSED}"))
        else:
            subs.append(Submission(entry.name, root, labs if labs.is_dir() else root))
    if bad:
        raise GraderError(f"submission folder names must be letters, digits and ._@+- "
                          f"(starting with a letter or digit), at most 128 characters; "
                          f"rename: {', '.join(repr(b) for b in bad[:10])}"
                          + (f" and {len(bad) - 10} more" if len(bad) > 10 else ""))
    return subs


def refuse_slips(folder: Path, subs: list, lab_names: list) -> None:
    """Stops (GraderError, exit 2) on a SUBMISSIONS folder that is not one: one student's
    labs/ folder (its entries are lab folders), the course repository (labs/, grader/, ...:
    its folders would be built as students), or a folder with no submission at all."""
    folder = Path(folder)
    names = [s.name for s in subs]
    labs_here = [s.name for s in subs
                 if s.name in lab_names or (s.root / "grading.toml").is_file()]
    if labs_here:
        shown = ", ".join(labs_here[:3]) + (", ..." if len(labs_here) > 3 else "")
        raise GraderError(
            f"{folder} looks like one student's labs/ folder (it holds the lab folders "
            f"{shown}), not a folder of submissions: to grade it, use "
            f"`python3 -m grader grade --submission {folder}`; batch wants a folder with one "
            f"folder per student, each holding labs/ or the lab folders")
    repo_marks = [m for m in ("grader", "solutions", "common", "cmake") if m in names]
    if "labs" in names and ((folder / "grader" / "__main__.py").is_file()
                            or (folder / "CMakeLists.txt").is_file() or repo_marks):
        raise GraderError(
            f"{folder} looks like the course repository (it holds labs/"
            + "".join(f", {m}/" for m in repo_marks)
            + f"), not a folder of submissions: batch would grade each of its folders as a "
              f"student. To grade one repository's work: `python3 -m grader grade "
              f"--submission {folder / 'labs'}`; batch wants a folder with one folder per "
              f"student")
    if not subs:
        raise GraderError(
            f"no submissions found in {folder}: batch wants a folder with one folder per "
            f"student, each holding labs/ or the lab folders (hidden entries, plain files and "
            f"symbolic links are not submissions)")


def refuse_output(out: Path, submissions: Path, repo: Path) -> None:
    """Stops (GraderError, exit 2) on an output folder that would mix with what is graded: the
    submissions folder or a folder inside it (a later batch would grade its results/, logs/ and
    state/ as students, or they would land in a student's folder), or the course repository
    outside its build/ folder (untracked files among the course's own). `out` and
    `submissions` as given (compared resolved)."""
    out_r, subs_r, repo_r = (Path(p).resolve() for p in (out, submissions, repo))
    beside = subs_r.parent / f"{subs_r.name}-graded"
    if out_r == subs_r or subs_r in out_r.parents:
        raise GraderError(
            f"-o: {out} is {'the submissions folder' if out_r == subs_r else 'inside the submissions folder'} "
            f"{submissions}: a later batch would grade its results/, logs/ and state/ as "
            f"students (or they would land in a student's folder); write them beside it, e.g. "
            f"-o {beside}")
    if out_r in (subs_r / d for d in ("results", "logs", "state")):
        raise GraderError(f"-o: {out} holds the submissions folder {submissions} where batch "
                          f"writes its {subs_r.name}/: write the output elsewhere, e.g. "
                          f"-o {beside}")
    if (out_r == repo_r or repo_r in out_r.parents) and not (
            out_r == repo_r / "build" or (repo_r / "build") in out_r.parents):
        raise GraderError(f"-o: {out} is inside the course repository {repo_r}: its gradebook, "
                          f"logs and results would mix with the course's files; write them "
                          f"outside it (or under its build/ folder)")


def parse_shard(text: str) -> tuple:
    """'I/N' -> (I, N), 0 <= I < N (Slurm's array task id and count)."""
    m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text or "")
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise ValueError(f"a shard is I/N with 0 <= I < N (e.g. 0/4 ... 3/4), got {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard(subs: list, index: int, count: int) -> list:
    """The submissions of shard `index` of `count`: every count-th one of the list sorted by
    name, starting at `index`. Every submission is in exactly one shard, provided that every
    shard lists the same folder; the shards' sizes differ by at most one."""
    ordered = sorted(subs, key=lambda s: s.name)
    return ordered[index::count]


def content_key(sub: Submission, configs: list, options: dict) -> str:
    """sha256 of what decides the grade: each graded file of each lab (its bytes, or that it is
    missing or not a plain file), the grading options and the grader's version. Other files of
    the submission do not count: the grader never reads them."""
    h = hashlib.sha256()
    h.update(json.dumps({"v": STATE_VERSION, "grader": __version__, "options": options},
                        sort_keys=True).encode())
    for cfg in sorted(configs, key=lambda c: c.name):
        for name in cfg.student_files:
            path = sub.labs_dir / cfg.name / name
            h.update(f"\0{cfg.name}/{name}\0".encode())
            try:
                if path.parent.is_symlink():     # never read through it (the grader refuses it)
                    h.update(b"in a linked folder")
                    continue
                if path.is_symlink() or not path.is_file():
                    h.update(b"not a plain file" if path.exists() or path.is_symlink()
                             else b"missing")
                    continue
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
            except OSError as e:
                h.update(f"unreadable: {e.errno}".encode())
    return h.hexdigest()


# ------------------------------------------------------------------------------- files
def atomic_write(path: Path, text: str, mode: int | None = None) -> None:
    """Written beside its name, flushed to disk, then renamed over it: a reader, or a run that
    resumes after a kill, sees the old file or the whole new one, never half of one. `mode`:
    its permissions, less the umask (default: readable by its owner only)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        if mode is not None:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, mode & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Layout:
    def __init__(self, out: Path):
        self.out = Path(out)
        self.results = self.out / "results"
        self.logs = self.out / "logs"
        self.state = self.out / "state"

    def make(self) -> None:
        for d in (self.out, self.results, self.logs, self.state):
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise GraderError(f"-o: cannot create {d}: {e.strerror}") from None

    def result(self, name: str) -> Path:
        return self.results / f"{name}.json"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def state_file(self, name: str) -> Path:
        return self.state / f"{name}.json"

    def read_state(self, name: str) -> dict | None:
        try:
            data = json.loads(self.state_file(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def all_states(self) -> dict:
        found = {}
        if self.state.is_dir():
            for p in sorted(self.state.glob("*.json")):
                data = self.read_state(p.stem)
                if data is not None:
                    found[p.stem] = data
        return found

    def is_done(self, name: str, key: str) -> bool:
        st = self.read_state(name)
        return (st is not None and st.get("key") == key and st.get("outcome") in FINAL
                and self.result(name).is_file())


# ------------------------------------------------------------------------------- machine
def detect_gpus(environ=None) -> list:
    """The GPUs to use, as CUDA_VISIBLE_DEVICES values: those already in CUDA_VISIBLE_DEVICES
    (Slurm sets it to the task's GPUs), else every GPU nvidia-smi lists, else [None]: one
    worker without a GPU setting (the grader then says there is no GPU)."""
    environ = os.environ if environ is None else environ
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        return ids or [None]
    try:
        proc = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return [None]
    ids = [line.strip() for line in proc.stdout.splitlines() if line.strip().isdigit()]
    return ids if proc.returncode == 0 and ids else [None]


def parse_gpus(text: str) -> list:
    ids = [v.strip() for v in text.split(",") if v.strip()]
    if not ids or not all(re.fullmatch(r"[A-Za-z0-9:._-]+", v) for v in ids):
        raise ValueError(f"--gpus takes CUDA device ids separated by commas (e.g. 0,1), "
                         f"got {text!r}")
    if len(set(ids)) != len(ids):
        raise ValueError(f"--gpus names a GPU twice: {text!r}")
    return ids


def absent_gpus(ids: list) -> list:
    """Those of `ids` (--gpus) that nvidia-smi says this machine does not have (its answer 6,
    'No devices were found', to `-i ID`); none where nvidia-smi is missing or cannot answer
    (no driver): the grading then says what the GPU's absence means."""
    absent = []
    for gpu in ids:
        try:
            proc = subprocess.run(["nvidia-smi", "-i", gpu, "--query-gpu=uuid",
                                   "--format=csv,noheader"], capture_output=True, text=True,
                                  timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return []
        if proc.returncode == 6:
            absent.append(gpu)
    return absent


def default_jobs(gpus: list, cpus: int | None = None) -> int:
    """Grader processes at once: three per GPU (one on the GPU, two building), at most one per
    CPU, at least two."""
    cpus = cpus or os.cpu_count() or 1
    return max(1, min(cpus, max(2, 3 * len(gpus))))


@functools.lru_cache(maxsize=None)
def gpu_identity(gpu: str | None) -> str | None:
    """What names the GPU `gpu` (a CUDA_VISIBLE_DEVICES entry) on this node, for its lock
    file: its UUID (nvidia-smi). The number alone names no GPU where Slurm confines each task
    to its GPUs with cgroups: every task then sees its own GPU as 0, and tasks on one node
    would share one lock. A UUID (GPU-..., MIG-...) is its own name. None when nvidia-smi
    cannot say (not installed, no such GPU): the lock is then named after `gpu`."""
    if gpu is None:
        return None
    if gpu.startswith(("GPU-", "MIG-")):
        return gpu
    try:
        proc = subprocess.run(["nvidia-smi", "-i", gpu, "--query-gpu=uuid",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode == 0 and len(lines) == 1 and lines[0].startswith("GPU-"):
        return lines[0]
    return None


def gpu_lock_path(gpu: str | None, lock_dir: Path) -> Path:
    """The lock file of GPU `gpu` in lock_dir (per node): named after the GPU's UUID where
    nvidia-smi gives it (gpu_identity), else after `gpu`."""
    name = gpu_identity(gpu) or gpu
    tag = "any" if name is None else re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return lock_dir / f"cuda-labs-gpu-{tag}.lock"


class BuildSlots:
    """Build directories build/batch/slot-K, each claimed with an exclusive file lock for as
    long as this batch runs, so that concurrent batches (two Slurm tasks on one node) never
    build in one directory. Kept afterwards: the next batch reuses the configured trees."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.free, self.held = [], []

    def claim(self, count: int) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        k = 0
        while len(self.held) < count:
            d = self.root / f"slot-{k}"
            d.mkdir(exist_ok=True)
            f = open(self.root / f"slot-{k}.lock", "a+")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
            else:
                self.held.append(f)
                self.free.append(d)
            k += 1

    def take(self) -> Path:
        return self.free.pop(0)

    def give(self, d: Path) -> None:
        self.free.append(d)

    def release(self) -> None:
        for f in self.held:
            f.close()
        self.held = []


# ------------------------------------------------------------------------------- processes
def _child_setup(batch_pid: int) -> None:
    """In the grader process, before exec: die with the batch (should the batch be killed with
    SIGKILL, its graders do not grade on unseen). A batch killed between the fork and the prctl
    sends no signal, so a child that finds itself orphaned already leaves at once."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass
    if os.getppid() != batch_pid:
        os._exit(1)


def _descendants(pid: int) -> set:
    """Every process below `pid` (children in other process groups and sessions included, as
    the grader's judges are), from /proc."""
    children = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def kill_tree(proc: subprocess.Popen, grace_s: float = TERM_GRACE_S) -> None:
    """Stops a grader and everything it started: SIGTERM to its process group and to the group
    of every descendant (the judges run in sessions of their own), then SIGKILL to whatever
    is left after `grace_s`."""
    if proc.poll() is not None and not _descendants(proc.pid):
        return
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        pids = {proc.pid} | _descendants(proc.pid)
        groups = set()
        for p in pids:
            try:
                groups.add(os.getpgid(p))
            except OSError:
                pass
        groups.discard(os.getpgrp())
        for g in groups:
            try:
                os.killpg(g, sig)
            except OSError:
                pass
        for p in pids:
            try:
                os.kill(p, sig)
            except OSError:
                pass
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _descendants(proc.pid):
                break
            time.sleep(0.05)
        else:
            continue
        break
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def grader_command() -> list:
    hook = os.environ.get(GRADER_ENV)
    if hook:
        return shlex.split(hook)
    return [sys.executable, "-m", "grader", "grade"]


# ------------------------------------------------------------------------------- progress
def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class Progress:
    """done / running / failed and an ETA. On a terminal: one line per finished submission and
    a status line redrawn below them; otherwise (a log, Slurm's output file) one plain line
    per event, each carrying the counts."""

    def __init__(self, total: int, skipped: int, stream=None, tty: bool | None = None,
                 clock=time.monotonic):
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty() if tty is None else tty
        self.total, self.skipped = total, skipped
        self.clock = clock
        self.t0 = clock()
        self.done = self.failed = self.no_gpu = 0
        self.running = {}
        self._status_shown = False

    @property
    def finished_here(self) -> int:
        return self.done + self.failed + self.no_gpu

    def eta(self) -> float | None:
        left = self.total - self.skipped - self.finished_here
        if self.finished_here == 0 or left <= 0:
            return 0.0 if left <= 0 else None
        return (self.clock() - self.t0) / self.finished_here * left

    def counts(self) -> str:
        no_gpu = f"{self.no_gpu} not graded on a GPU, " if self.no_gpu else ""
        return (f"{self.skipped + self.done}/{self.total} done, {self.failed} failed, "
                f"{no_gpu}{len(self.running)} running, ETA {_duration(self.eta())}")

    def _line(self, text: str) -> None:
        if self.tty and self._status_shown:
            self.stream.write("\r\033[K")
        self.stream.write(terminal_text(text) + "\n")   # a submission's name is the student's
        self._status_shown = False
        if self.tty:
            self._status()
        self.stream.flush()

    def _status(self) -> None:
        names = ", ".join(list(self.running)[:3]) + (", ..." if len(self.running) > 3 else "")
        text = f"[{self.counts()}]" + (f" grading: {names}" if names else "")
        self.stream.write("\r\033[K" + terminal_text(text)[:200])
        self._status_shown = True

    def refresh(self) -> None:
        if self.tty:
            self._status()
            self.stream.flush()

    def note(self, text: str) -> None:
        self._line(f"batch: {text}")

    def started(self, name: str, where: str) -> None:
        self.running[name] = self.clock()
        if self.tty:
            self.refresh()
        else:
            self._line(f"batch: start  {name} ({where}) [{self.counts()}]")

    def finished(self, name: str, ok: bool, text: str, no_gpu: bool = False) -> None:
        """One line for a finished submission: done, FAILED, or (no_gpu) built and checked
        without a GPU."""
        self.running.pop(name, None)
        if no_gpu:
            self.no_gpu += 1
        elif ok:
            self.done += 1
        else:
            self.failed += 1
        label = "no GPU" if no_gpu else "done  " if ok else "FAILED"
        self._line(f"batch: {label} {name}: {text} [{self.counts()}]")

    def close(self) -> None:
        if self.tty and self._status_shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._status_shown = False


# ------------------------------------------------------------------------------- the batch
@dataclasses.dataclass
class Options:
    labs: list                       # lab folder names
    configs: list                    # their LabConfig
    jobs: int
    gpus: list
    build_jobs: int
    seed: int | None = None          # every grading's seeds forced (a replay); None: drawn
    no_performance: bool = False
    no_sanitize: bool = False
    # The share of submissions graded with --race-audit, each drawn at random from the system's
    # entropy when its grading starts: a spot check no student can predict (0: none).
    race_audit_fraction: float = 0.0
    timeout_s: float = DEFAULT_TIMEOUT_S
    build_root: Path = REPO / "build" / "batch"
    lock_dir: Path = Path(os.environ.get(LOCK_DIR_ENV, tempfile.gettempdir()))

    def key_options(self) -> dict:
        """The options that change a grade, for the content key. `seed`: the forced seed, or
        None: every grading draws its own (grader/seeds.py), so a resumed batch keeps the
        results of submissions graded with drawn seeds (a correct submission passes every
        draw) and grades the rest the same way; a batch with --seed N, or another N, grades
        every submission again."""
        key = {"labs": sorted(self.labs), "seed": self.seed,
               "no_performance": self.no_performance, "no_sanitize": self.no_sanitize}
        if self.race_audit_fraction:
            key["race_audit_fraction"] = self.race_audit_fraction
        return key


@dataclasses.dataclass
class Running:
    sub: Submission
    key: str
    proc: subprocess.Popen
    slot: Path
    gpu: str | None
    tmp_result: Path
    log: object
    started: float


class Interrupted(Exception):
    pass


def _raise_interrupt(signum, _frame):
    raise Interrupted(signal.Signals(signum).name)


# A lab that did not get as far as the others, in a grading without a GPU.
_LAB_WORDS = {"build_failed": "did not build", "rejected": "was rejected by the policy check",
              "bad_files": "had its files refused", "error": "could not be graded (error)"}


def outcome_of(rc: int | None, result: dict | None, timed_out: bool) -> tuple:
    """(outcome, one-line reason) of one grader run. Final outcomes are the lab statuses that
    a re-grading would give again; everything else is a failure, tried again next run."""
    if timed_out:
        return "timeout", "the grader ran past the batch's --timeout and was stopped"
    if result is None:
        if rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            return "crashed", f"the grader was killed by {name} and wrote no results"
        return "crashed", f"the grader exited {rc} without writing results"
    status = result.get("status")
    if status == NO_GPU:
        # The grader's message already says "no CUDA GPU: <why>" (grade.py).
        why = (result.get("message") or "").strip()[:200] or "no CUDA GPU"
        if not why.startswith("no CUDA GPU"):
            why = f"no CUDA GPU: {why}"
        others = [f"{lab.get('lab')} {_LAB_WORDS.get(lab.get('status'), lab.get('status'))}"
                  for lab in result.get("labs") or []
                  if isinstance(lab, dict) and lab.get("status") not in (NO_GPU, "graded")]
        return NO_GPU, f"{NOT_ON_A_GPU} ({why})" + "".join(f"; {o}" for o in others)
    if status in FINAL:
        labs = result.get("labs") or []
        if status != "graded" and not labs:
            return "error", (result.get("message") or status)[:300]
        return status, ""
    return "error", ((result.get("message") or f"status {status!r}").splitlines() or [""])[0][:300]


def _points(result: dict | None) -> str:
    if not result:
        return ""
    return f"{result.get('points', 0):g}/{result.get('max_points', 0):g}"


def run_batch(subs: list, layout: Layout, opts: Options, progress: Progress | None = None,
              total_in_folder: int | None = None) -> dict:
    """Grades every submission of `subs` not already done; returns the summary (also written
    to summary.json by the callers). Raises Interrupted after stopping every grader cleanly on
    SIGINT or SIGTERM (what was finished is kept). A submission refused by discover (a link)
    is not graded: its state says why (outcome REFUSED), and the summary lists it."""
    layout.make()
    refused = [refuse(s, layout) for s in subs if s.refused]
    subs = [s for s in subs if not s.refused]
    keys = {s.name: content_key(s, opts.configs, opts.key_options()) for s in subs}
    todo = [s for s in subs if not layout.is_done(s.name, keys[s.name])]
    skipped = len(subs) - len(todo)
    progress = progress or Progress(len(subs), skipped)
    for row in refused:
        progress.note(f"REFUSED {row['name']}: {row['reason']}")
    if skipped:
        progress.note(f"{skipped} of {len(subs)} submissions already graded (unchanged): "
                      f"skipped")
    slots = BuildSlots(opts.build_root)
    slots.claim(min(opts.jobs, max(1, len(todo))))
    opts.lock_dir.mkdir(parents=True, exist_ok=True)
    running: list = []
    per_gpu = {g: 0 for g in opts.gpus}
    finished, failed, no_gpu = [], [], []
    t0 = time.monotonic()
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        queue = list(todo)
        while queue or running:
            while queue and slots.free:
                sub = queue.pop(0)
                gpu = min(opts.gpus, key=lambda g: per_gpu[g])
                per_gpu[gpu] += 1
                running.append(_start(sub, keys[sub.name], slots.take(), gpu, layout, opts))
                progress.started(sub.name, f"GPU {gpu}" if gpu is not None else "GPU: any")
            time.sleep(0.1)
            progress.refresh()
            for r in list(running):
                timed_out = time.monotonic() - r.started > opts.timeout_s
                if r.proc.poll() is None and not timed_out:
                    continue
                if timed_out:
                    kill_tree(r.proc)
                else:
                    kill_tree(r.proc, grace_s=1.0)   # leave nothing behind it
                running.remove(r)
                per_gpu[r.gpu] -= 1
                slots.give(r.slot)
                row = _finish(r, layout, timed_out)
                (finished if row["outcome"] in FINAL else
                 no_gpu if row["outcome"] == NO_GPU else failed).append(row)
                progress.finished(r.sub.name, row["outcome"] in FINAL,
                                  _describe(row), no_gpu=row["outcome"] == NO_GPU)
    except (Interrupted, KeyboardInterrupt) as e:
        progress.close()
        for r in running:
            kill_tree(r.proc)
            r.log.close()
            try:
                r.tmp_result.unlink()
            except OSError:
                pass
        raise Interrupted(str(e) or "SIGINT") from None
    finally:
        for r in running:    # a bug above must not leave graders behind either
            if r.proc.poll() is None:
                kill_tree(r.proc)
        for s, h in old.items():
            signal.signal(s, h)
        slots.release()
        progress.close()
    wall = time.monotonic() - t0
    graded_here = len(finished) + len(failed) + len(no_gpu)
    return {"submissions": len(subs) + len(refused), "skipped": skipped,
            "graded": len(finished),
            # not graded, 0 points: a link (the batch exits 2)
            "refused": [{"name": f["name"], "reason": f["reason"]} for f in refused],
            "failed": [{"name": f["name"], "outcome": f["outcome"], "reason": f["reason"],
                        "log": f["log"]} for f in failed],
            # built and checked without a GPU: graded by the next run on a GPU machine
            "no_gpu": [{"name": f["name"], "reason": f["reason"], "log": f["log"]}
                       for f in sorted(no_gpu, key=lambda f: f["name"])],
            "wall_s": round(wall, 1),
            "per_hour": round(graded_here / wall * 3600, 1) if graded_here and wall > 0 else None,
            "gpus": [g for g in opts.gpus], "jobs": opts.jobs,
            "total_in_folder": total_in_folder}


def refuse(sub: Submission, layout: Layout) -> dict:
    """The state of a submission that is not graded (sub.refused says why): outcome REFUSED,
    and no results file, an earlier grading's included (it is not this submission's)."""
    row = {"name": sub.name, "key": "", "outcome": REFUSED, "reason": sub.refused, "rc": None,
           "points": "", "seconds": 0.0, "gpu": None, "submission": str(sub.root),
           "log": None, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    try:
        layout.result(sub.name).unlink()
    except FileNotFoundError:
        pass
    atomic_write(layout.state_file(sub.name), json.dumps(row, indent=2) + "\n")
    return row


def _describe(row: dict) -> str:
    if row["outcome"] == NO_GPU:
        return f"{row['reason']} in {_duration(row['seconds'])}"
    text = f"{row['outcome']}"
    if row.get("points"):
        text += f" {row['points']}"
    text += f" in {_duration(row['seconds'])}"
    if row.get("reason"):
        text += f": {row['reason']} (log: {row['log']})"
    return text


def _start(sub: Submission, key: str, slot: Path, gpu: str | None, layout: Layout,
           opts: Options) -> Running:
    tmp = layout.results / f".{sub.name}.json.part"
    try:
        tmp.unlink()
    except OSError:
        pass
    audit = (not opts.no_performance and opts.race_audit_fraction > 0
             and secrets.SystemRandom().random() < opts.race_audit_fraction)
    cmd = grader_command() + grade_args.argv(grade_args.GradeArgs(
        labs=tuple(opts.labs), submission=sub.labs_dir, output=tmp, build_dir=slot,
        jobs=opts.build_jobs, seed=opts.seed,
        performance=not opts.no_performance, sanitize=not opts.no_sanitize, quiet=True,
        race_audit=audit))
    env = dict(os.environ)
    env["LABS_GPU_LOCK"] = str(gpu_lock_path(gpu, opts.lock_dir))
    env["LABS_GPU_LOCK_EXCLUSIVE"] = "1"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    log = open(layout.log(sub.name), "w", encoding="utf-8")
    log.write(f"# {shlex.join(cmd)}\n# GPU {gpu if gpu is not None else '(any)'}, build "
              f"{slot}\n")
    log.flush()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, start_new_session=True,
                            preexec_fn=functools.partial(_child_setup, os.getpid()))
    return Running(sub, key, proc, slot, gpu, tmp, log, time.monotonic())


def _finish(r: Running, layout: Layout, timed_out: bool) -> dict:
    r.log.close()
    seconds = round(time.monotonic() - r.started, 1)
    result = None
    if r.tmp_result.is_file() and not timed_out:
        try:
            result = json.loads(r.tmp_result.read_text(encoding="utf-8"))
            if not isinstance(result, dict) or "labs" not in result:
                result = None
        except (OSError, ValueError):
            result = None
    outcome, reason = outcome_of(None if timed_out else r.proc.returncode, result, timed_out)
    if result is not None:
        os.replace(r.tmp_result, layout.result(r.sub.name))
        # The grader's last line named the file it wrote, which batch has just renamed.
        try:
            with open(layout.log(r.sub.name), "a", encoding="utf-8") as log:
                log.write(f"# batch: the results are in {layout.result(r.sub.name)}\n")
        except OSError:
            pass
    else:
        try:
            r.tmp_result.unlink()
        except OSError:
            pass
    row = {"name": r.sub.name, "key": r.key, "outcome": outcome, "reason": reason,
           "rc": r.proc.returncode, "points": _points(result), "seconds": seconds,
           "gpu": r.gpu, "submission": str(r.sub.root),
           "log": os.path.relpath(layout.log(r.sub.name), layout.out),
           "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if result is None and layout.result(r.sub.name).exists():
        # an old results file of an earlier grading no longer matches this submission
        layout.result(r.sub.name).unlink()
    atomic_write(layout.state_file(r.sub.name), json.dumps(row, indent=2) + "\n")
    return row


# ------------------------------------------------------------------------------- merging
def failed_result(name: str, state: dict | None) -> "object":
    """A results object for a submission without results (crashed, timed out, never graded):
    0 points and the reason, so that it still has its row in the gradebook."""
    from grader.results import GradeResult
    reason = "not graded" if state is None else f"{state.get('outcome')}: {state.get('reason')}"
    return GradeResult(submission=name, seed=None, grader_version=__version__,
                       status="not_graded" if state is None else str(state.get("outcome")),
                       message=reason)


def merge(layout: Layout, names: list | None = None, csv_path: Path | None = None,
          class_page: Path | None = None, stream=None, command: str = "batch") -> dict:
    """The gradebook (and the class page, where matplotlib is) over every submission of
    `names` (default: every state file under OUT), in name order. Returns {'rows', 'missing',
    'failed', 'refused', 'class_page'}: a refused submission (REFUSED: a link) has a 0 row and
    the reason."""
    from grader import reports
    stream = stream or sys.stdout
    states = layout.all_states()
    names = sorted(states) if names is None else sorted(names)
    named, graded, missing, failed, refused = [], [], [], [], []
    for name in names:
        st = states.get(name)
        path = layout.result(name)
        result = None
        if st is not None and st.get("outcome") == REFUSED:
            refused.append(name)
        elif st is not None and path.is_file():
            try:
                result = reports.load_results(path)
            except GraderError as e:
                st = dict(st, outcome="error", reason=e.message)
        if st is None:
            missing.append(name)
        elif st.get("outcome") not in (*FINAL, REFUSED):
            failed.append(name)
        if result is None:
            result = failed_result(name, st)
        else:
            graded.append((name, result))   # the class page: submissions with results only
        named.append((name, result))
    csv_path = csv_path or layout.out / "gradebook.csv"
    atomic_write(csv_path, reports.gradebook(named))
    page = None
    if graded:
        page = class_page or layout.out / "class.html"
        try:   # the HTML reports need matplotlib: without it, no page (the batch works on)
            atomic_write(page, reports.render("class_page", graded), mode=0o666)
        except Exception as e:
            why = e.message if isinstance(e, GraderError) else f"{type(e).__name__}: {e}"
            print(f"{command}: the class page was not written: {why[-500:]}", file=stream)
            page = None
    return {"rows": len(named), "csv": str(csv_path), "class_page": str(page) if page else None,
            "missing": missing, "failed": failed, "refused": refused}
