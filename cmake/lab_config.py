#!/usr/bin/env python3
"""At configure time (add_cuda_lab, cmake/CudaLab.cmake): a lab's student files for CMake, and
its tests as data for its test program.

  python3 cmake/lab_config.py LAB_DIR OUT.cmake
  python3 cmake/lab_config.py --cases LAB_DIR OUT.cpp

Reads LAB_DIR/grading.toml with the grader's own reader (grader/config.py: the whole file is
checked, as a grading would check it) and writes OUT.cmake, which sets LAB_STUDENT_FILES to
the lab's student files. On a mistake in grading.toml it writes nothing and exits 1 with the
reader's message, which CMake shows as the configure error. With --cases it reads the lab's
cases files (tests/cases.toml, hidden/cases.toml where present) with grader/cases.py and writes
OUT.cpp, which defines labkit::cases::lab_suites(); OUT.cpp is rewritten only when it changes.
Standard library only.
"""

import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader.cases import cpp_source, lab_case_files, load_lab_cases  # noqa: E402
from grader.config import load_lab_config  # noqa: E402
from grader.errors import GraderError  # noqa: E402

# What CMake cannot take in a list of source files: a list separator or a control character.
_NOT_FOR_CMAKE = re.compile(r"[;\x00-\x1f\x7f]")


def cmake_quoted(text: str) -> str:
    """`text` as a quoted CMake argument: no variable reference or escape is expanded in it."""
    return '"' + re.sub(r'([\\"$])', r"\\\1", text) + '"'


def write_if_changed(out: Path, text: str) -> None:
    if out.is_file() and out.read_text(encoding="utf-8") == text:
        return   # unchanged: nothing recompiles
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)


def cases_main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: lab_config.py --cases LAB_DIR OUT.cpp", file=sys.stderr)
        return 2
    lab_dir, out = Path(argv[0]), Path(argv[1])
    if not lab_case_files(lab_dir):
        print(f"{lab_dir}: no tests/cases.toml (add_cuda_lab(CASES) needs it)", file=sys.stderr)
        return 1
    try:
        suites = load_lab_cases(lab_dir)
    except GraderError as e:
        print(e.message, file=sys.stderr)
        return 1
    write_if_changed(out, cpp_source(suites))
    return 0


def main(argv: list) -> int:
    if argv[:1] == ["--cases"]:
        return cases_main(argv[1:])
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
    write_if_changed(out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
