#!/usr/bin/env python3
"""At configure time (add_cuda_lab, cmake/CudaLab.cmake): a lab's student files for CMake.

  python3 cmake/lab_config.py LAB_DIR OUT.cmake

Reads LAB_DIR/grading.toml with the grader's own reader (grader/config.py: the whole file is
checked, as a grading would check it) and writes OUT.cmake, which sets LAB_STUDENT_FILES to
the lab's student files. On a mistake in grading.toml it writes nothing and exits 1 with the
reader's message, which CMake shows as the configure error. Standard library only.
"""

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader.config import load_lab_config  # noqa: E402
from grader.errors import GraderError  # noqa: E402

# What CMake cannot take in a list of source files: a list separator or a control character.
_NOT_FOR_CMAKE = re.compile(r"[;\x00-\x1f\x7f]")


def cmake_quoted(text: str) -> str:
    """`text` as a quoted CMake argument: no variable reference or escape is expanded in it."""
    return '"' + re.sub(r'([\\"$])', r"\\\1", text) + '"'


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: lab_config.py LAB_DIR OUT.cmake", file=sys.stderr)
        return 2
    lab_dir, out = Path(argv[0]), Path(argv[1])
    try:
        cfg = load_lab_config(lab_dir.parent, lab_dir.name)
    except GraderError as e:
        print(e.message, file=sys.stderr)
        return 1
    bad = [f for f in cfg.student_files if _NOT_FOR_CMAKE.search(f)]
    if bad:
        print(f"{lab_dir / 'grading.toml'} [lab]: student_files: {bad[0]!r} cannot be a CMake "
              f"source file name (no ';' or control characters)", file=sys.stderr)
        return 1
    text = (f"# Written by cmake/lab_config.py from {lab_dir / 'grading.toml'} at configure "
            f"time: do not edit.\n"
            f"set(LAB_STUDENT_FILES {' '.join(cmake_quoted(f) for f in cfg.student_files)})\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
