#!/usr/bin/env python3
"""A CTest check of a lab whose hidden tests are in the build (an instructor's checkout, not a
student release): no GPU needed.

  python3 cmake/check_groups.py LAB_DIR TEST_BINARY

Every correctness group of LAB_DIR/grading.toml must select at least one test of TEST_BINARY
(the lab's test judge, listed with --gtest_list_tests: no worker, no GPU). A group whose filter
selects nothing would be worth 0 points without a word (a typo in a filter, a renamed suite);
in a student release the hidden groups legitimately select nothing, so CMake registers this
check only where the hidden tests exist. Exits 0 when every group selects tests, 1 naming each
group that selects none, 2 when the lab or the binary cannot be read.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader import config, gtest  # noqa: E402
from grader.errors import GraderError  # noqa: E402


def empty_groups(cfg: config.LabConfig, names: list) -> list:
    """The groups of `cfg` whose filter selects none of `names`."""
    return [g for g in cfg.groups if not any(gtest.matches_filter(n, g.filter) for n in names)]


def main(argv: list) -> int:
    if len(argv) != 3:
        print("usage: check_groups.py LAB_DIR TEST_BINARY", file=sys.stderr)
        return 2
    lab_dir, binary = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    try:
        cfg = config.load_lab_config(lab_dir.parent, lab_dir.name)
        names = gtest.list_tests(binary)
    except (GraderError, RuntimeError) as e:
        print(f"check_groups: {getattr(e, 'message', e)}", file=sys.stderr)
        return 2
    empty = empty_groups(cfg, names)
    for g in empty:
        print(f"{cfg.name}: the correctness group '{g.name}' (filter '{g.filter}', {g.points:g} "
              f"points) selects none of the {len(names)} tests of {binary.name}: it would be "
              f"worth 0 points (a typo in the filter, or a renamed suite?)")
    if not empty:
        print(f"{cfg.name}: every correctness group selects tests: "
              + ", ".join(f"{g.name} {sum(gtest.matches_filter(n, g.filter) for n in names)}"
                          for g in cfg.groups))
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
