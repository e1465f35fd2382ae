"""The "where" maps of failed comparisons, drawn from the data the test judge records.

common/src/compare.cpp tells each failed comparison twice, from the same fields: as text in the
test's message (what a student reads) and as one JSON object (CompareResult::where_json), which
labkit::check records on the test and the judge's results stream carries beside the message
into TestResult.where (grader/gtest.py). This module turns that object into a WhereMap for the
HTML report (grader/html_report.py) to draw. It never reads the message. Standard library only.

The keys it uses (docs/reports.md lists them all):

  kind     'matrix' | 'vector' | 'nchw'
  name     the output's name ('C', 'y')
  shape    [rows, cols] | [n] | [n, c, h, w]
  map      {"cell": [down, across], "rows": [...]}: the coarse map, one string per row of
           cells, one character per cell ('.' right, 'x' some wrong, 'X' all wrong, '?' some
           never written): a matrix's tiles, a vector's runs of elements (one row), one NCHW
           plane's blocks of pixels ("image", "channel": which plane)
  groups   vector: [{"name", "wrong", "total"}], e.g. rows of the same length class

An object that is not what the judge writes (a results file edited by hand, another version's
judge) draws nothing: from_dict returns None, and the message is shown alone.
"""

from __future__ import annotations

import dataclasses

MAP_CHARS = ".xX?"
# What each character means, as compare.cpp's legend says it.
MEANING = {".": "right", "x": "some wrong", "X": "all wrong", "?": "some never written"}

MAX_CELLS = 256   # per side; compare.cpp keeps its maps within 64, this only bounds bad input
MAX_GROUPS = 64
_DIMS = {"matrix": 2, "vector": 1, "nchw": 4}


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


def _count(value) -> bool:
    """A whole number >= 0 (JSON's true and false are not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _groups(value) -> list:
    """A vector's groups as (name, wrong, total); [] when they are not a list of such."""
    if not isinstance(value, list) or len(value) > MAX_GROUPS:
        return []
    out = []
    for g in value:
        if not (isinstance(g, dict) and isinstance(g.get("name"), str)
                and _count(g.get("wrong")) and _count(g.get("total"))
                and g["wrong"] <= g["total"]):
            return []
        out.append((g["name"], g["wrong"], g["total"]))
    return out


def from_dict(where) -> WhereMap | None:
    """The map of a test's where data (TestResult.where), or None when there is none or it is
    not as the judge writes it: a map whose rows are missing, of other lengths than its shape
    and cell size give, or of other characters is no map."""
    if not isinstance(where, dict) or where.get("kind") not in _DIMS:
        return None
    kind = where["kind"]
    shape, grid = where.get("shape"), where.get("map")
    if not (isinstance(shape, list) and len(shape) == _DIMS[kind]
            and all(_count(d) and d > 0 for d in shape) and isinstance(grid, dict)):
        return None
    cell, cells = grid.get("cell"), grid.get("rows")
    if not (isinstance(cell, list) and len(cell) == 2 and all(_count(c) and c > 0 for c in cell)
            and isinstance(cells, list) and cells
            and all(isinstance(r, str) and r and set(r) <= set(MAP_CHARS) for r in cells)):
        return None
    name = where.get("name") if isinstance(where.get("name"), str) else "y"
    if kind == "matrix":
        rows, cols = shape
        title = f"the {rows} x {cols} output"
    elif kind == "vector":
        rows, cols = 1, shape[0]
        title = f"{name}[0..{cols})"
    else:
        rows, cols = shape[2], shape[3]
        image, channel = grid.get("image"), grid.get("channel")
        if not (_count(image) and _count(channel) and image < shape[0] and channel < shape[1]):
            return None
        title = f"image {image}, channel {channel} ({rows} x {cols})"
    want = (_ceil_div(rows, cell[0]), _ceil_div(cols, cell[1]))
    if (want[0] > MAX_CELLS or want[1] > MAX_CELLS or len(cells) != want[0]
            or any(len(r) != want[1] for r in cells)):
        return None
    groups = _groups(where.get("groups")) if kind == "vector" else []
    return WhereMap(kind, title, list(cells), rows, cols, cell[0], cell[1], groups)


def cell_codes(where: WhereMap) -> list:
    """The map as rows of numbers 0..3 ('.', 'x', 'X', '?'), for drawing."""
    return [[MAP_CHARS.index(c) for c in row] for row in where.cells]


def extent(where: WhereMap) -> tuple:
    """(rows, cols) the cells cover in elements: a multiple of the cell, >= the real extent."""
    return (len(where.cells) * where.cell_rows,
            max(len(r) for r in where.cells) * where.cell_cols)


__all__ = ["WhereMap", "from_dict", "cell_codes", "extent", "MAP_CHARS", "MEANING"]
