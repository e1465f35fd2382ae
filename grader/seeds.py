"""The base seed of a lab's hidden inputs, derived from what is graded.

The same submission graded twice gets the same inputs (so a re-grading gives the same
verdicts), and the seed is bound to the graded files' content: a submission that embeds
answers for the inputs of one seed changes its own content, and so its seed.

With an instructor's secret (--secret-file, or LABS_GRADER_SECRET) mixed in, a student cannot
compute their seed in advance at all. Without one the seed is still content-bound, but anyone
can compute it: instructors should set a secret.
"""

from __future__ import annotations

import hashlib
import os

DOMAIN = b"cuda-labs-seed/1\0"
MAX_SEED = 2**63 - 1
SECRET_ENV = "LABS_GRADER_SECRET"


def derive_seed(secret: bytes, lab: str, file_digests) -> int:
    """A seed in [0, 2**63-1] from the secret, the lab's name and its files' sha256 digests.

    `file_digests`: the raw 32-byte digests (or their hex), in any order: they are sorted, so
    the seed does not depend on the order of student_files."""
    raw = sorted(bytes.fromhex(d) if isinstance(d, str) else bytes(d) for d in file_digests)
    h = hashlib.sha256(DOMAIN + secret + b"\0" + lab.encode() + b"\0" + b"".join(raw))
    return int.from_bytes(h.digest()[:8], "big") & MAX_SEED


def secret_from_env(environ=None) -> bytes:
    value = (os.environ if environ is None else environ).get(SECRET_ENV)
    return value.encode("utf-8", "surrogateescape") if value else b""
