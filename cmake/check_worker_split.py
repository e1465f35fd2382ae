#!/usr/bin/env python3
"""A CTest check of a lab whose helper library is given to some variants only (add_cuda_lab's
HELPER_VARIANTS): no GPU needed.

  python3 cmake/check_worker_split.py PLAIN_WORKER HELPER_WORKER

PLAIN_WORKER runs the variants that are not given the helper: it must neither need the helper's
libraries nor name any of the functions the helper worker imports from them (grader/elf.py,
helper_split_problems, the same check the grader makes after every build). Exits 0 when the
split holds, 1 with the findings otherwise. Standard library only.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader import elf  # noqa: E402


def main(argv: list) -> int:
    if len(argv) != 3:
        print("usage: check_worker_split.py PLAIN_WORKER HELPER_WORKER", file=sys.stderr)
        return 2
    plain, helper = Path(argv[1]), Path(argv[2])
    try:
        problems = elf.helper_split_problems(plain, helper)
    except elf.ElfError as e:
        problems = [str(e)]
    if problems:
        for p in problems:
            print(f"check_worker_split: {p}", file=sys.stderr)
        return 1
    extra = [lib for lib in elf.read(helper).needed_libraries()
             if lib not in elf.read(plain).needed_libraries()]
    print(f"{plain.name}: none of {helper.name}'s own libraries ({', '.join(extra)}) nor any "
          f"function it imports from them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
