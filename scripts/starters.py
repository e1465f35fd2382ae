#!/usr/bin/env python3
"""One source per student file: the starter is generated from the reference solution.

Each student file of a lab (grading.toml's student_files) has one source, the reference
solution in solutions/<lab>/<file>. It carries the starter's own lines as marked comments, so
it compiles as it is; the starter, labs/<lab>/<file>, is generated from it and checked in (the
student release has no solutions/, and students build the starter: generating it at configure
time would need the solution there). The two cannot drift: `--check` (run by the tests) fails
when a checked-in starter is not what its solution generates.

Markers, each alone on its line (leading whitespace allowed), in this order:

    //@ starter      the starter's own lines follow, each written `//| text` (the starter gets
                     `text`; a bare `//|` is an empty line), up to
    //@ solution     the solution's own lines follow (the starter drops them), up to
    //@ end

Either part may be empty. Every other line is in both. A starter line keeps its indentation
after `//| `: `    //|     return;` gives `    return;`.

    python3 scripts/starters.py --check [LAB ...]   exit 1 naming each starter that differs
    python3 scripts/starters.py --write [LAB ...]   rewrite the starters from the solutions
    python3 scripts/starters.py --adopt [LAB ...]   mark up an unmarked solution from the pair
                                                    (solution, starter) as they are now
"""

import argparse
import difflib
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from grader import config  # noqa: E402  (the one reader of lab files)
from grader.errors import GraderError  # noqa: E402

MARKER = re.compile(r"^\s*//@ (starter|solution|end)\s*$")
STARTER_LINE = re.compile(r"^\s*//\|(?: (.*))?$")


class MarkerError(ValueError):
    """A solution file whose markers do not parse; the message names the line."""


def split(text: str, where: str = "<text>") -> tuple:
    """(starter, solution view) of a marked solution file: the starter as generated, and the
    solution without its markers and starter lines (what it computes, for comparing with an
    unmarked solution). MarkerError on a marker out of order or a malformed starter line."""
    starter, solution = [], []
    state = "both"            # both -> starter -> solution -> both
    opened = 0
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        m = MARKER.match(body)
        if m:
            word = m.group(1)
            expected = {"both": "starter", "starter": "solution", "solution": "end"}[state]
            if word != expected:
                raise MarkerError(f"{where}:{number}: '//@ {word}' where '//@ {expected}' was "
                                  f"expected (a block is //@ starter, //@ solution, //@ end)")
            state = {"starter": "starter", "solution": "solution", "end": "both"}[word]
            opened = number if word == "starter" else opened
            continue
        if state == "starter":
            s = STARTER_LINE.match(body)
            if not s:
                raise MarkerError(f"{where}:{number}: a starter line must be written "
                                  f"'//| text' (between //@ starter and //@ solution)")
            starter.append((s.group(1) or "") + ending)
        elif state == "solution":
            solution.append(line)
        else:
            starter.append(line)
            solution.append(line)
    if state != "both":
        raise MarkerError(f"{where}:{opened}: the block opened here has no '//@ end'")
    return "".join(starter), "".join(solution)


def _indent(lines: list) -> str:
    for line in lines:
        if line.strip():
            return line[:len(line) - len(line.lstrip())]
    return ""


def merge(starter: str, solution: str, join_up_to: int = 2) -> str:
    """A marked solution file whose split() is (starter, solution): the lines they share stay
    plain, each stretch where they differ becomes a //@ block. Stretches separated by at most
    `join_up_to` shared lines (a blank line, a brace) become one block, for legibility."""
    a = starter.splitlines(keepends=True)
    b = solution.splitlines(keepends=True)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    # [("same", a_lines) or ("diff", a_lines, b_lines)], short shared runs between two
    # differing stretches folded into them
    parts = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            parts.append(["same", a[i1:i2], None])
        else:
            parts.append(["diff", a[i1:i2], b[j1:j2]])
    folded = []
    for k, p in enumerate(parts):
        between = 0 < k < len(parts) - 1
        if (p[0] == "same" and between and len(p[1]) <= join_up_to and folded
                and folded[-1][0] == "diff"):
            folded[-1][1] += p[1]
            folded[-1][2] += p[1]
            continue
        if p[0] == "diff" and folded and folded[-1][0] == "diff":
            folded[-1][1] += p[1]
            folded[-1][2] += p[2]
            continue
        folded.append(p)
    out = []
    for kind, a_part, b_part in folded:
        if kind == "same":
            out += a_part
            continue
        pad = _indent(b_part) or _indent(a_part)
        out.append(f"{pad}//@ starter\n")
        for line in a_part:
            text = line.rstrip("\r\n")
            out.append(f"{pad}//| {text}\n" if text else f"{pad}//|\n")
        out.append(f"{pad}//@ solution\n")
        out += b_part
        out.append(f"{pad}//@ end\n")
    return "".join(out)


def pairs(labs_dir: Path, solutions_dir: Path, names: list) -> list:
    """[(solution, starter)] paths of the student files of the labs `names` (all: [])."""
    out = []
    for lab in config.resolve_labs(labs_dir, names) if names else config.discover_labs(labs_dir):
        for f in config.load_student_files(labs_dir, lab):
            out.append((solutions_dir / lab / f, labs_dir / lab / f))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail if a starter differs")
    mode.add_argument("--write", action="store_true", help="rewrite the starters")
    mode.add_argument("--adopt", action="store_true",
                      help="mark up each unmarked solution from its current starter")
    ap.add_argument("labs", nargs="*", metavar="LAB", help="labs (default: all)")
    args = ap.parse_args(argv)
    try:
        todo = pairs(REPO / "labs", REPO / "solutions", args.labs)
    except GraderError as e:
        print(f"starters: {e.message}", file=sys.stderr)
        return 2
    bad = 0
    for solution, starter in todo:
        if not solution.is_file():
            print(f"starters: {solution.relative_to(REPO)}: no such file (a student release "
                  f"has no solutions/)", file=sys.stderr)
            return 2
        if args.adopt:
            text = solution.read_text()
            if MARKER.search(text) is None and not any(MARKER.match(l) for l in text.splitlines()):
                merged = merge(starter.read_text(), text)
                assert split(merged) == (starter.read_text(), text), solution
                solution.write_text(merged)
                print(f"marked up {solution.relative_to(REPO)}")
            continue
        try:
            generated, _ = split(solution.read_text(), str(solution.relative_to(REPO)))
        except MarkerError as e:
            print(f"starters: {e}", file=sys.stderr)
            return 1
        current = starter.read_text() if starter.is_file() else ""
        if generated == current:
            continue
        if args.write:
            starter.write_text(generated)
            print(f"wrote {starter.relative_to(REPO)}")
            continue
        bad += 1
        diff = difflib.unified_diff(current.splitlines(keepends=True),
                                    generated.splitlines(keepends=True),
                                    str(starter.relative_to(REPO)),
                                    f"generated from {solution.relative_to(REPO)}", n=1)
        print("".join(list(diff)[:60]), end="")
        print(f"starters: {starter.relative_to(REPO)} is not what "
              f"{solution.relative_to(REPO)} generates: edit the solution (its //@ blocks), "
              f"then `python3 scripts/starters.py --write`", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
