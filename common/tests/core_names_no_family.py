#!/usr/bin/env python3
"""The core names no op family: labkit:core_names_no_family.

The core is common/include/labkit/*.{hpp,cuh} and common/src/*.{cpp,cu}; an op family is
whatever common/include/labkit/ops/ has a signature for (<family>_signature.hpp) or
common/src/ops/ a source for (<family>_source.cu). In the core's code (comments aside: an
example may name a lab), no identifier or string may have a family's name as one of its words
(kConvX, fill_reduce_f32, "spmv x"). What a family brings lives beside it, in ops/, and reaches
the core through a table (labkit/source.hpp, labkit/helper.hpp).

usage: core_names_no_family.py COMMON_DIR     (exit 1 naming file:line:word on a hit)
"""
import re
import sys
from pathlib import Path


def families(common: Path) -> set:
    names = {p.name[:-len("_signature.hpp")]
             for p in (common / "include/labkit/ops").glob("*_signature.hpp")}
    names |= {p.name[:-len("_source.cu")] for p in (common / "src/ops").glob("*_source.cu")}
    return names


def core_files(common: Path) -> list:
    inc = common / "include/labkit"
    src = common / "src"
    return sorted([*inc.glob("*.hpp"), *inc.glob("*.cuh"), *src.glob("*.cpp"), *src.glob("*.cu")])


def strip_comments(text: str) -> str:
    """Comments become spaces (newlines kept, so lines still count); strings stay."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] in "\"'":
            q, j = text[i], i + 1
            while j < n and text[j] != q and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def words(token: str) -> list:
    """The words of an identifier or a string: split at non-letters and at camelCase humps."""
    parts = re.split(r"[^A-Za-z]+", token)
    return [w.lower() for p in parts for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+", p)]


def hits(common: Path) -> list:
    fams = families(common)
    found = []
    for path in core_files(common):
        code = strip_comments(path.read_text(encoding="utf-8", errors="replace"))
        for lineno, line in enumerate(code.splitlines(), 1):
            for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\"[^\"]*\"", line):
                for w in words(token):
                    if w in fams:
                        found.append(f"{path.relative_to(common)}:{lineno}: {w} ({token})")
    return found


def main(argv: list) -> int:
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    common = Path(argv[1])
    fams = families(common)
    if len(fams) < 5:
        print(f"core_names_no_family: found only {sorted(fams)} as families under {common}")
        return 2
    found = hits(common)
    for h in found:
        print(h)
    if found:
        print(f"core_names_no_family: the core names an op family {len(found)} times "
              f"(families: {', '.join(sorted(fams))}); move it to ops/ and reach it through a table "
              "(labkit/source.hpp, labkit/helper.hpp)")
        return 1
    print(f"core_names_no_family: {len(core_files(common))} core files name none of "
          f"{', '.join(sorted(fams))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
