"""The "where" maps inside failing-test messages, parsed back out of the text.

common/src/compare.cpp prints, under a failing comparison, a coarse map of where the wrong
elements are: one character per tile of a matrix, per run of elements of a vector, per block of
pixels of one NCHW image plane ('.' right, 'x' some wrong, 'X' all wrong, '?' some never
written). The HTML report (grader/html_report.py) draws these maps as pictures; this module only
finds them, so it needs nothing beyond the standard library.

The formats are compare.cpp's, line for line:

  matrix   "  map of the 512 x 384 output, one character per 32 x 32 tile ('.' right, ...):"
           then ceil(rows / 32) lines of ceil(cols / 32) characters, each indented 4 spaces
  vector   "  map of y[0..1000), one character per 256 elements ('.' right, ...):"
           then one line; before it "  wrong 256-element segments: ...", after it optionally
           "  by group:" and lines "    <group>: <wrong> of <total> wrong"
  nchw     "  where in the 28 x 28 image: ..." then
           "  map of image 0, channel 3, one character per 1 x 1 pixels ('.' right, ...):"
           then ceil(h / cell_h) lines of ceil(w / cell_w) characters

A map whose lines are missing or do not have the sizes its header announces (a message cut
short, text that only looks like a map) is not a map: the message is then shown as text.
"""

from __future__ import annotations

import dataclasses
import re

MAP_CHARS = ".xX?"
# What each character means, as compare.cpp's legend says it.
MEANING = {".": "right", "x": "some wrong", "X": "all wrong", "?": "some never written"}

_ROW = re.compile(r"^ *([.xX?]+) *$")
_MATRIX = re.compile(r"map of the (\d+) x (\d+) output, one character per (\d+) x (\d+) tile\b")
_VECTOR = re.compile(r"map of (.*)\[0\.\.(\d+)\), one character per (\d+) elements\b")
_NCHW = re.compile(r"map of image (\d+), channel (\d+), one character per (\d+) x (\d+) pixels\b")
_IMAGE = re.compile(r"where in the (\d+) x (\d+) image:")
_GROUP = re.compile(r"^ {4}(.+): (\d+) of (\d+) wrong$")

MAX_CELLS = 256   # per side; compare.cpp keeps its maps within 64, this only bounds bad input


@dataclasses.dataclass
class WhereMap:
    kind: str              # 'matrix' | 'vector' | 'nchw'
    title: str             # what the map covers, e.g. 'the 512 x 384 output', 'y[0..1000)'
    cells: list            # the map's lines, one string of MAP_CHARS per row of cells
    rows: int              # the extent mapped, in elements: matrix rows x cols; a vector is
    cols: int              # 1 x n; an NCHW plane h x w
    cell_rows: int         # elements (pixels) per cell, down and across
    cell_cols: int
    groups: list = dataclasses.field(default_factory=list)   # vector: (group, wrong, total)

    def counts(self) -> dict:
        """How many cells show each character."""
        text = "".join(self.cells)
        return {c: text.count(c) for c in MAP_CHARS}


def _cells_after(lines: list, start: int, want_rows: int | None, want_cols: int) -> list | None:
    """The map lines from lines[start]: exactly want_rows lines (all of them when None) of
    want_cols map characters, or None when they are not there."""
    cells = []
    i = start
    while i < len(lines) and (want_rows is None or len(cells) < want_rows):
        m = _ROW.match(lines[i])
        if not m or len(m.group(1)) != want_cols:
            break
        cells.append(m.group(1))
        i += 1
    if not cells or (want_rows is not None and len(cells) != want_rows):
        return None
    if i < len(lines) and _ROW.match(lines[i]):   # more map lines than announced
        return None
    return cells


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _sane(*sizes) -> bool:
    return all(0 < s for s in sizes)


def _parse_at(lines: list, i: int, image: tuple | None):
    """(WhereMap, number of lines it takes after the header) for a header at lines[i], or None."""
    line = lines[i]
    m = _MATRIX.search(line)
    if m:
        rows, cols, ch, cw = map(int, m.groups())
        if not _sane(rows, cols, ch, cw):
            return None
        nr, nc = _ceil_div(rows, ch), _ceil_div(cols, cw)
        if nr > MAX_CELLS or nc > MAX_CELLS:
            return None
        cells = _cells_after(lines, i + 1, nr, nc)
        if cells is None:
            return None
        return WhereMap("matrix", f"the {rows} x {cols} output", cells, rows, cols, ch, cw), nr
    m = _VECTOR.search(line)
    if m:
        name, n, cell = m.group(1).strip(), int(m.group(2)), int(m.group(3))
        if not _sane(n, cell) or _ceil_div(n, cell) > MAX_CELLS:
            return None
        cells = _cells_after(lines, i + 1, 1, _ceil_div(n, cell))
        if cells is None:
            return None
        taken = 1
        groups = []
        if i + 2 < len(lines) and lines[i + 2].strip() == "by group:":
            taken += 1
            for g_line in lines[i + 3:]:
                g = _GROUP.match(g_line)
                if not g:
                    break
                groups.append((g.group(1), int(g.group(2)), int(g.group(3))))
                taken += 1
        return WhereMap("vector", f"{name}[0..{n})", cells, 1, n, 1, cell, groups), taken
    m = _NCHW.search(line)
    if m:
        img, ch, cell_h, cell_w = map(int, m.groups())
        if not _sane(cell_h, cell_w):
            return None
        # The plane's size is on the "where in the H x W image" line above; without it the map's
        # own size (a multiple of the cell) stands in.
        cells = _cells_after(lines, i + 1, None, len(_ROW.match(lines[i + 1]).group(1))
                             if i + 1 < len(lines) and _ROW.match(lines[i + 1]) else 0)
        if cells is None or len(cells) > MAX_CELLS or len(cells[0]) > MAX_CELLS:
            return None
        h, w = image if image else (len(cells) * cell_h, len(cells[0]) * cell_w)
        if (len(cells), len(cells[0])) != (_ceil_div(h, cell_h), _ceil_div(w, cell_w)):
            return None
        return (WhereMap("nchw", f"image {img}, channel {ch} ({h} x {w})", cells, h, w,
                         cell_h, cell_w), len(cells))
    return None


def parse(text: str) -> list:
    """The message cut into pieces, in order: ('text', str) and ('map', WhereMap). The header
    line that announces a map stays in the text before it; the map's lines (and a vector's
    'by group' lines) become the map. A message without a map is one ('text', message)."""
    lines = str(text).split("\n")
    pieces, buf = [], []
    image = None
    i = 0
    while i < len(lines):
        line = lines[i]
        im = _IMAGE.search(line)
        if im:
            image = (int(im.group(1)), int(im.group(2)))
        found = _parse_at(lines, i, image) if "map of " in line else None
        if found is None:
            buf.append(line)
            i += 1
            continue
        where, taken = found
        buf.append(line)
        pieces.append(("text", "\n".join(buf)))
        pieces.append(("map", where))
        buf = []
        image = None
        i += 1 + taken
    if buf:
        rest = "\n".join(buf)
        if rest.strip() or not pieces:
            pieces.append(("text", rest))
    return pieces


def maps(text: str) -> list:
    """Only the maps of a message."""
    return [p for kind, p in parse(text) if kind == "map"]


def cell_codes(where: WhereMap) -> list:
    """The map as rows of numbers 0..3 ('.', 'x', 'X', '?'), for drawing."""
    return [[MAP_CHARS.index(c) for c in row] for row in where.cells]


def extent(where: WhereMap) -> tuple:
    """(rows, cols) the cells cover in elements: a multiple of the cell, >= the real extent."""
    return (len(where.cells) * where.cell_rows,
            max(len(r) for r in where.cells) * where.cell_cols)


__all__ = ["WhereMap", "parse", "maps", "cell_codes", "extent", "MAP_CHARS", "MEANING"]
