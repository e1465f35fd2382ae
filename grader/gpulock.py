"""One timed run on a GPU at a time: an advisory file lock shared by graders on one machine.

Correctness tests hold it shared (they may run side by side); a benchmark holds it
exclusively, so no other grader's test or benchmark runs on the GPU while it is timed."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

DEFAULT_LOCK = Path(os.environ.get("LABS_GPU_LOCK", "/tmp/cuda-labs-gpu.lock"))


@contextlib.contextmanager
def gpu_lock(shared: bool = False, path: Path | None = None):
    path = path or DEFAULT_LOCK
    if os.environ.get("LABS_GPU_LOCK_EXCLUSIVE") == "1":
        shared = False
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
