#!/usr/bin/env python3
"""A CTest check of a lab whose hidden tests are in the build (an instructor's checkout, not a
student release): no GPU needed.

  python3 cmake/check_groups.py LAB_DIR TEST_BINARY

Every correctness group of LAB_DIR/grading.toml must select at least one test of TEST_BINARY
(the lab's test judge, listed with --gtest_list_tests: no worker, no GPU), and every test must
be in some group (a test in none would run and count for nothing). A group whose filter
selects nothing would be worth 0 points without a word (a typo in a filter, a renamed suite);
in a student release the hidden groups legitimately select nothing, so CMake registers this
check only where the hidden tests exist.

It also checks the grader's split of a lab's tests among several judges (grade.test_judges,
grade.judge_selections): the binary is run once per judge with that judge's filter (or
GoogleTest's sharding variables) and no GPU visible (every test skips at once), and the tests
each judge ran must be the ones gtest.shard_of gives it, all of them, each once, every version
of a case in one judge.

Exits 0 when all of this holds, 1 naming each group that selects none, each test in no group or
each test run by another shard than expected, 2 when the lab or the binary cannot be read or run.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader import config, grade, gtest  # noqa: E402
from grader.errors import GraderError  # noqa: E402


def shard_runs(binary: Path, selections: list) -> list:
    """[the names judge i ran] for each (filter, GoogleTest shard or None) of `selections`
    (grade.judge_selections), from GoogleTest's JSON output."""
    ran = []
    shards = len(selections)
    with tempfile.TemporaryDirectory() as tmp:
        for index, (gtest_filter, shard) in enumerate(selections):
            out = Path(tmp) / f"shard{index}.json"
            env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1")
            if shard is not None:
                env.update(GTEST_TOTAL_SHARDS=str(shard[1]), GTEST_SHARD_INDEX=str(shard[0]))
            proc = subprocess.run([str(binary), f"--gtest_filter={gtest_filter}",
                                   f"--gtest_output=json:{out}"], env=env, cwd=tmp,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
            if proc.returncode != 0 or not out.is_file():
                raise RuntimeError(f"shard {index} of {shards} of {binary.name} exited "
                                   f"{proc.returncode}: {proc.stdout.decode(errors='replace')[-1500:]}")
            data = json.loads(out.read_text(encoding="utf-8"))
            ran.append(gtest.json_test_names(data, status="RUN"))
    return ran


def shard_mismatches(expected: dict, ran: list, cases: dict | None = None) -> list:
    """What differs between the shards as run (`ran`) and as the grader expects them
    (`expected`: test -> shard); with `cases`, also each case whose versions were split."""
    problems = []
    seen = {}
    for index, tests in enumerate(ran):
        for name in tests:
            if name in seen:
                problems.append(f"{name} ran in shards {seen[name]} and {index}")
            seen[name] = index
            if expected.get(name) != index:
                problems.append(f"{name} ran in shard {index}, the grader expects shard "
                                f"{expected.get(name)}")
    problems += [f"{name} ran in no shard (the grader expects shard {i})"
                 for name, i in expected.items() if name not in seen]
    where: dict = {}
    for name, index in seen.items():
        where.setdefault((cases or {}).get(name, name), set()).add(index)
    problems += [f"the versions of {case} ran in shards {sorted(s)}: one judge should run them"
                 for case, s in where.items() if len(s) > 1]
    return problems


def empty_groups(cfg: config.LabConfig, names: list) -> list:
    """The groups of `cfg` whose filter selects none of `names`."""
    return [g for g in cfg.groups if not any(gtest.matches_filter(n, g.filter) for n in names)]


def ungraded_tests(cfg: config.LabConfig, names: list) -> list:
    """The tests among `names` that no group of `cfg` selects (a disabled one aside): they would
    run and count for nothing (a suite the groups' filters forgot)."""
    return [n for n in names if not any(p.startswith("DISABLED_") for p in n.split("."))
            and not any(gtest.matches_filter(n, g.filter) for g in cfg.groups)]


def main(argv: list) -> int:
    if len(argv) != 3:
        print("usage: check_groups.py LAB_DIR TEST_BINARY", file=sys.stderr)
        return 2
    lab_dir, binary = Path(argv[1]).resolve(), Path(argv[2]).resolve()
    try:
        cfg = config.load_lab_config(lab_dir.parent, lab_dir.name)
        cases: dict = {}
        names = gtest.list_tests(binary, cases=cases)
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

    ungraded = ungraded_tests(cfg, names)
    for n in ungraded[:20]:
        print(f"{cfg.name}: the test {n} is in no correctness group: it would run and count for "
              f"nothing (add its suite to a group's filter)")
    if len(ungraded) > 20:
        print(f"{cfg.name}: ... and {len(ungraded) - 20} more tests in no group")
    if not ungraded:
        print(f"{cfg.name}: every one of the {len(names)} tests is in a correctness group")

    union = gtest.positive_union([g.filter for g in cfg.groups])
    count = sum(gtest.matches_filter(n, union) for n in names)
    shards = max(2, grade.test_judges(count))   # at least 2: the split is checked on every lab
    expected, selections = grade.judge_selections(names, cases, union, shards)
    try:
        ran = shard_runs(binary, selections)
    except (OSError, RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        print(f"check_groups: {e}", file=sys.stderr)
        return 2
    mismatches = shard_mismatches(expected, ran, cases)
    for m in mismatches[:20]:
        print(f"{cfg.name}: {m}")
    if not mismatches:
        print(f"{cfg.name}: {count} tests split among {shards} judges as the grader expects: "
              + ", ".join(str(len(r)) for r in ran))
    return 1 if empty or ungraded or mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
