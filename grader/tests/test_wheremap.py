"""The where maps (grader/wheremap.py) from the where data a test judge records: the objects
below are built as common/src/compare.cpp's CompareResult::where_json builds them (the cell
sizes, the characters, the keys), and the real judge's objects are read the same way in
common/tests/where_to_grader.py (CTest labkit:where_reaches_the_grader)."""

from __future__ import annotations

import copy
import random
import unittest

from grader import wheremap


def _char(wrong: int, unwritten: int, size: int) -> str:   # compare.cpp: strip / the matrix map
    return "?" if unwritten else "." if wrong == 0 else "X" if wrong == size else "x"


def grid(flags, cell_rows: int, cell_cols: int) -> list:
    """The map of a grid of flags (0 right, 1 wrong, 2 never written), one character per
    cell_rows x cell_cols cell, the last ones partial."""
    rows, cols = len(flags), len(flags[0])
    out = []
    for a in range(-(-rows // cell_rows)):
        line = ""
        for b in range(-(-cols // cell_cols)):
            cell = [flags[i][j] for i in range(a * cell_rows, min(rows, (a + 1) * cell_rows))
                    for j in range(b * cell_cols, min(cols, (b + 1) * cell_cols))]
            line += _char(sum(f > 0 for f in cell), sum(f == 2 for f in cell), len(cell))
        out.append(line)
    return out


def _grow(extent: int, cell: int, most: int) -> int:   # compare.cpp: the map's cell size
    cell = max(cell, 1)
    while -(-extent // cell) > most:
        cell *= 2
    return cell


def _ranges(indices) -> dict:
    out = []
    for i in sorted(set(indices)):
        if out and out[-1][1] + 1 >= i:
            out[-1][1] = i
        else:
            out.append([i, i])
    return {"ranges": out[:16], "ranges_total": len(out), "count": sum(b - a + 1 for a, b in out)}


def _common(kind: str, name: str, shape: list, flat: list) -> dict:
    wrong = [i for i, f in enumerate(flat) if f]
    return {"kind": kind, "name": name, "shape": shape, "exact": False, "checked": len(flat),
            "wrong": len(wrong), "never_written": sum(f == 2 for f in flat), "nonfinite": 0,
            "worst_ratio": 4.5,
            "first": [{"index": i, "at": [i], "got": 1.5, "expected": 2.25, "bound": 1e-4}
                      for i in wrong[:5]]}


def matrix_where(flags, tile: int = 32, name: str = "C") -> dict:
    """compare_matrix's where data: flags[i][j] is 0 right, 1 wrong, 2 never written."""
    rows, cols = len(flags), len(flags[0])
    cr, cc = _grow(rows, tile, 64), _grow(cols, tile, 64)
    d = _common("matrix", name, [rows, cols], [f for row in flags for f in row])
    for m in d["first"]:
        m["at"] = [m["index"] // cols, m["index"] % cols]
    d["map"] = {"cell": [cr, cc], "rows": grid(flags, cr, cc)}
    d["wrong_rows"] = dict(_ranges(i for i in range(rows) if any(flags[i])), of=rows)
    d["wrong_cols"] = dict(_ranges(j for j in range(cols) if any(r[j] for r in flags)), of=cols)
    return d


def vector_where(flags, segment: int, name: str = "y", group=None) -> dict:
    """compare_vector's where data: flags[i] 0 right, 1 wrong, 2 never written; `group`
    names element i's group."""
    n = len(flags)
    d = _common("vector", name, [n], flags)
    cell = _grow(n, segment, 64)
    d["map"] = {"cell": [1, cell], "rows": grid([flags], 1, cell)}
    d["segment"] = segment
    d["wrong_segments"] = dict(_ranges(i // segment for i in range(n) if flags[i]),
                               of=-(-n // segment))
    groups = {}
    for i in range(n if group else 0):
        g = groups.setdefault(group(i), {"name": group(i), "wrong": 0, "total": 0})
        g["total"] += 1
        g["wrong"] += flags[i] > 0
    d["groups"], d["groups_total"] = list(groups.values()), len(groups)
    return d


def nchw_where(plane, n: int = 2, c: int = 4, image: int = 0, channel: int = 0,
               stride: int = 1) -> dict:
    """compare_nchw's where data for a tensor whose only wrong plane is `plane` (h x w flags),
    at (image, channel)."""
    h, w = len(plane), len(plane[0])
    flat = [f for row in plane for f in row]
    d = _common("nchw", "y", [n, c, h, w], flat)
    for m in d["first"]:
        m["at"] = [image, channel, m["index"] // w, m["index"] % w]
    ch, cw = _grow(h, 1, 32), _grow(w, 1, 64)
    d["map"] = {"cell": [ch, cw], "rows": grid(plane, ch, cw), "image": image, "channel": channel}
    d["wrong_images"] = dict(_ranges([image]), of=n)
    d["wrong_channels"] = dict(_ranges([channel]), of=c)
    d["border"] = {"width": 1, "wrong": d["wrong"], "total": 2 * (h + w) * n * c}
    d["interior_wrong"] = 0
    d["stride"] = stride
    return d


class MatrixMaps(unittest.TestCase):
    def test_a_wrong_tile_and_an_unwritten_one(self):
        rows, cols = 100, 70   # not multiples of the tile: the last cells are partial
        flags = [[0] * cols for _ in range(rows)]
        for i in range(32):
            for j in range(32, 64):
                flags[i][j] = 1          # one whole tile wrong: 'X'
        flags[40][5] = 1                 # one element: 'x'
        flags[99][69] = 2                # never written, in the last partial cell: '?'
        m = wheremap.from_dict(matrix_where(flags))
        self.assertEqual((m.kind, m.title, m.rows, m.cols, m.cell_rows, m.cell_cols),
                         ("matrix", "the 100 x 70 output", 100, 70, 32, 32))
        self.assertEqual(m.cells, [".X.", "x..", "...", "..?"])
        self.assertEqual(m.counts(), {".": 9, "x": 1, "X": 1, "?": 1})
        self.assertEqual(wheremap.extent(m), (128, 96))
        self.assertEqual(wheremap.cell_codes(m)[0], [0, 2, 0])
        self.assertEqual(m.groups, [])

    def test_large_matrices_have_large_cells_and_a_map_within_64(self):
        rows, cols = 4096, 1000
        rng = random.Random(7)
        flags = [[0] * cols for _ in range(rows)]
        for _ in range(50):
            flags[rng.randrange(rows)][rng.randrange(cols)] = rng.choice((1, 2))
        where = matrix_where(flags)
        m = wheremap.from_dict(where)
        self.assertEqual((m.cell_rows, m.cell_cols), (64, 32))
        self.assertEqual((len(m.cells), len(m.cells[0])), (64, 32))
        self.assertEqual(m.cells, where["map"]["rows"])

    def test_a_map_that_is_not_as_the_judge_writes_it_is_none(self):
        good = matrix_where([[1] * 64 for _ in range(64)])
        self.assertIsNotNone(wheremap.from_dict(good))

        def bad(change):
            d = copy.deepcopy(good)
            change(d)
            return d

        cases = {
            "a row missing": bad(lambda d: d["map"]["rows"].pop()),
            "a row too many": bad(lambda d: d["map"]["rows"].append("XX")),
            "a row too wide": bad(lambda d: d["map"].update(rows=["XXX", "XX"])),
            "another character": bad(lambda d: d["map"].update(rows=["Xa", "XX"])),
            "an empty row": bad(lambda d: d["map"].update(rows=["", ""])),
            "no rows": bad(lambda d: d["map"].update(rows=[])),
            "rows as one string": bad(lambda d: d["map"].update(rows="XX\nXX")),
            "a cell of 0": bad(lambda d: d["map"].update(cell=[0, 32])),
            "a cell of true": bad(lambda d: d["map"].update(cell=[True, 32])),
            "a shape of three": bad(lambda d: d.update(shape=[64, 64, 1])),
            "a shape of 0": bad(lambda d: d.update(shape=[0, 64])),
            "a negative shape": bad(lambda d: d.update(shape=[-64, 64])),
            "a shape as text": bad(lambda d: d.update(shape=["64", 64])),
            "no map": bad(lambda d: d.pop("map")),
            "an unknown kind": bad(lambda d: d.update(kind="tensor")),
            "too many cells": bad(lambda d: d.update(shape=[64 * 300, 64])),
        }
        for why, where in cases.items():
            with self.subTest(why=why):
                self.assertIsNone(wheremap.from_dict(where))
        for where in (None, [], "map of the 64 x 64 output", 3, {}):
            with self.subTest(where=where):
                self.assertIsNone(wheremap.from_dict(where))


class VectorMaps(unittest.TestCase):
    def test_segments_and_groups(self):
        n = 1000
        flags = [0] * n
        for i in range(256, 512):
            flags[i] = 1
        flags[999] = 2
        where = vector_where(flags, 256, group=lambda i: "rows of length 1-32" if i < 600
                             else "rows of length 33-64")
        m = wheremap.from_dict(where)
        self.assertEqual((m.kind, m.title, m.rows, m.cols, m.cell_rows, m.cell_cols),
                         ("vector", "y[0..1000)", 1, 1000, 1, 256))
        self.assertEqual(m.cells, [".X.?"])
        self.assertEqual(m.groups, [("rows of length 1-32", 256, 600),
                                    ("rows of length 33-64", 1, 400)])

    def test_long_vectors_and_a_one_element_output(self):
        flags = [0] * 100000
        flags[5] = 1
        m = wheremap.from_dict(vector_where(flags, 256))
        self.assertEqual((m.cell_cols, len(m.cells[0])), (2048, 49))
        self.assertEqual(m.cells[0][:2], "x.")
        # Lab 05's reduction: one output element, VectorLayout{1, 1, {}, "out"}
        m = wheremap.from_dict(vector_where([1], 1, name="out"))
        self.assertEqual((m.title, m.cells), ("out[0..1)", ["X"]))

    def test_groups_that_are_not_as_written_are_left_out_not_the_map(self):
        where = vector_where([0, 1, 1, 0], 2, name="y[row][0]", group=lambda i: "g")
        self.assertEqual(wheremap.from_dict(where).title, "y[row][0][0..4)")
        for groups in ([{"name": "g", "wrong": 5, "total": 4}], [{"name": 1, "wrong": 0,
                                                                  "total": 4}],
                       [{"name": "g", "wrong": True, "total": 4}], "g: 2 of 4 wrong",
                       [{"name": "g", "wrong": 0, "total": 1}] * 65):
            with self.subTest(groups=groups):
                m = wheremap.from_dict(dict(where, groups=groups))
                self.assertEqual((m.groups, m.cells), ([], ["xx"]))


class NchwMaps(unittest.TestCase):
    def test_a_small_plane_one_pixel_per_character(self):
        h, w = 6, 9
        plane = [[0] * w for _ in range(h)]
        plane[0][0] = plane[5][8] = 1
        plane[2][4] = 2
        m = wheremap.from_dict(nchw_where(plane, image=1, channel=3, stride=2))
        self.assertEqual((m.kind, m.rows, m.cols, m.cell_rows, m.cell_cols), ("nchw", 6, 9, 1, 1))
        self.assertEqual(m.title, "image 1, channel 3 (6 x 9)")
        self.assertEqual(m.cells[0], "X........")   # one pixel a cell: all of it wrong
        self.assertEqual(m.cells[2], "....?....")

    def test_a_large_plane(self):
        h, w = 100, 200
        plane = [[1 if y < 4 else 0 for x in range(w)] for y in range(h)]
        m = wheremap.from_dict(nchw_where(plane))
        self.assertEqual((m.cell_rows, m.cell_cols), (4, 4))
        self.assertEqual((len(m.cells), len(m.cells[0])), (25, 50))
        self.assertEqual(m.cells[0], "X" * 50)
        self.assertEqual(m.cells[1], "." * 50)

    def test_a_plane_that_disagrees_with_the_shape_or_is_not_in_it_is_none(self):
        where = nchw_where([[1] * 4 for _ in range(4)], n=2, c=4, image=1, channel=3)
        self.assertIsNotNone(wheremap.from_dict(where))
        self.assertIsNone(wheremap.from_dict(dict(where, shape=[2, 4, 8, 8])))
        for key, value in (("image", 2), ("channel", 4), ("image", -1), ("channel", None)):
            with self.subTest(key=key, value=value):
                grid_ = dict(where["map"], **{key: value})
                self.assertIsNone(wheremap.from_dict(dict(where, map=grid_)))


if __name__ == "__main__":
    unittest.main()
