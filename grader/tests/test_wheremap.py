"""The "where" map parser (grader/wheremap.py) on messages printed exactly as
common/src/compare.cpp prints them: the builders below follow its code line for line (the cell
sizes, the characters, the indents, the legend), so a change of format there must be made here
too, and these tests then say what the HTML report would no longer draw."""

from __future__ import annotations

import random
import unittest

from grader import wheremap

LEGEND = "('.' right, 'x' some wrong, 'X' all wrong, '?' some never written)"


def _cell_size(extent: int, tile: int) -> int:   # compare.cpp: cell_size
    cell = max(tile, 1)
    while -(-extent // cell) > 64:
        cell *= 2
    return cell


def _char(wrong: int, unwritten: int, size: int) -> str:   # compare.cpp: strip / the matrix map
    return "?" if unwritten else "." if wrong == 0 else "X" if wrong == size else "x"


def matrix_message(flags, rows: int, cols: int, tile: int = 32) -> tuple:
    """CompareResult::report() of a failing compare_matrix: flags[i][j] is 0 right, 1 wrong,
    2 never written. Returns (message, expected map lines)."""
    cr, cc = _cell_size(rows, tile), _cell_size(cols, tile)
    mr, mc = -(-rows // cr), -(-cols // cc)
    lines = []
    for a in range(mr):
        line = ""
        for b in range(mc):
            cell = [flags[i][j] for i in range(a * cr, min(rows, (a + 1) * cr))
                    for j in range(b * cc, min(cols, (b + 1) * cc))]
            line += _char(sum(f > 0 for f in cell), sum(f == 2 for f in cell), len(cell))
        lines.append(line)
    wrong = sum(f > 0 for row in flags for f in row)
    text = (f"{wrong} of {rows * cols} elements wrong\n"
            f"  first wrong elements (row, col): got / expected, allowed error\n"
            f"    (0, 0): 1.5 / 2.25, |error| <= 0.0001 (error 0.75)\n"
            f"  wrong rows: 0-3 (4 of {rows})\n"
            f"  wrong cols: 0-3 (4 of {cols})\n"
            f"  map of the {rows} x {cols} output, one character per {cr} x {cc} tile {LEGEND}:\n"
            + "".join(f"    {line}\n" for line in lines))
    return text, lines


def vector_where(flags, segment: int, name: str = "y", group=None) -> tuple:
    """compare.cpp's vector_where: flags[i] 0 right, 1 wrong, 2 never written."""
    n = len(flags)
    seg = max(segment, 1)
    segs = sorted({i // seg for i in range(n) if flags[i]})
    cell = seg
    while -(-n // cell) > 64:
        cell *= 2
    cells = -(-n // cell)
    line = "".join(_char(sum(f > 0 for f in flags[c * cell:(c + 1) * cell]),
                         sum(f == 2 for f in flags[c * cell:(c + 1) * cell]),
                         len(flags[c * cell:(c + 1) * cell])) for c in range(cells))
    text = (f"  wrong {segment}-element segments: {segs[0]}-{segs[-1]} ({len(segs)} of "
            f"{-(-n // seg)})\n"
            f"  map of {name}[0..{n}), one character per {cell} elements {LEGEND}:\n    {line}\n")
    groups = []
    if group is not None:
        order = []
        counts = {}
        for i in range(n):
            g = group(i)
            if g not in counts:
                order.append(g)
                counts[g] = [0, 0]
            counts[g][1] += 1
            counts[g][0] += flags[i] > 0
        text += "  by group:\n" + "".join(f"    {g}: {counts[g][0]} of {counts[g][1]} wrong\n"
                                          for g in order)
        groups = [(g, counts[g][0], counts[g][1]) for g in order]
    return text, line, groups


def nchw_where(plane, h: int, w: int, img: int = 0, ch: int = 0, stride: int = 1) -> tuple:
    """compare.cpp's compare_nchw 'where' text for a first wrong plane `plane` (h x w flags)."""
    cell_h = cell_w = 1
    while -(-h // cell_h) > 32:
        cell_h *= 2
    while -(-w // cell_w) > 64:
        cell_w *= 2
    mh, mw = -(-h // cell_h), -(-w // cell_w)
    lines = []
    for my in range(mh):
        wrong, unw, size = [0] * mw, [0] * mw, [0] * mw
        for y in range(my * cell_h, min(h, (my + 1) * cell_h)):
            for x in range(w):
                size[x // cell_w] += 1
                wrong[x // cell_w] += plane[y][x] > 0
                unw[x // cell_w] += plane[y][x] == 2
        lines.append("".join(_char(a, b, c) for a, b, c in zip(wrong, unw, size)))
    text = (f"  wrong images (n): {img} (1 of 2)\n  wrong channels (c): {ch} (1 of 4)\n"
            f"  where in the {h} x {w} image: 3 wrong within 1 of an edge (448 such elements), "
            f"0 in the interior\n")
    if stride > 1:
        text += f"  by stride phase (h % {stride}, w % {stride}): (0,0) 3 (0,1) 0 (1,0) 0 (1,1) 0\n"
    text += (f"  map of image {img}, channel {ch}, one character per {cell_h} x {cell_w} pixels "
             f"{LEGEND}:\n" + "".join(f"    {line}\n" for line in lines))
    return text, lines


def nd_report(name: str, n: int, where: str) -> str:
    """CompareResult::report_nd: the summary, the first elements, then the 'where' text."""
    return (f"3 of {n} elements wrong; 1 never written (still the NaN poison the harness fills "
            f"the output with before each launch)\n  first wrong elements: got / expected, "
            f"allowed error\n    {name}[7]: 1.25 / 1.5, |error| <= 1e-05\n" + where)


class MatrixMaps(unittest.TestCase):
    def test_a_wrong_tile_and_an_unwritten_one(self):
        rows, cols = 100, 70   # not multiples of the tile: the last cells are partial
        flags = [[0] * cols for _ in range(rows)]
        for i in range(32):
            for j in range(32, 64):
                flags[i][j] = 1          # one whole tile wrong: 'X'
        flags[40][5] = 1                 # one element: 'x'
        flags[99][69] = 2                # never written, in the last partial cell: '?'
        text, lines = matrix_message(flags, rows, cols)
        prefix = "MatmulHidden.Odd failed: the output of call 1 is wrong: "
        (m,) = wheremap.maps(prefix + text)
        self.assertEqual((m.kind, m.rows, m.cols, m.cell_rows, m.cell_cols),
                         ("matrix", 100, 70, 32, 32))
        self.assertEqual(m.cells, lines)
        self.assertEqual(m.cells, [".X.", "x..", "...", "..?"])
        self.assertEqual(m.counts(), {".": 9, "x": 1, "X": 1, "?": 1})
        self.assertEqual(wheremap.extent(m), (128, 96))
        self.assertEqual(wheremap.cell_codes(m)[0], [0, 2, 0])

    def test_large_matrices_grow_the_cell_so_the_map_stays_within_64(self):
        rows, cols = 4096, 1000
        rng = random.Random(7)
        flags = [[0] * cols for _ in range(rows)]
        for _ in range(50):
            flags[rng.randrange(rows)][rng.randrange(cols)] = rng.choice((1, 2))
        text, lines = matrix_message(flags, rows, cols)
        (m,) = wheremap.maps(text)
        self.assertEqual((m.cell_rows, m.cell_cols), (64, 32))
        self.assertEqual((len(m.cells), len(m.cells[0])), (64, 32))
        self.assertEqual(m.cells, lines)

    def test_the_text_around_the_map_is_kept_and_the_map_lines_are_not(self):
        flags = [[1] * 8 for _ in range(8)]
        text, _ = matrix_message(flags, 8, 8, tile=4)
        pieces = wheremap.parse("before\n" + text + "after the map")
        self.assertEqual([k for k, _ in pieces], ["text", "map", "text"])
        self.assertTrue(pieces[0][1].startswith("before\n64 of 64 elements wrong"))
        self.assertIn("map of the 8 x 8 output", pieces[0][1])   # the header stays
        self.assertNotIn("XX", pieces[0][1] + pieces[2][1])      # the map lines do not
        self.assertEqual(pieces[2][1].strip(), "after the map")

    def test_a_map_cut_short_is_text(self):
        flags = [[1] * 96 for _ in range(96)]
        text, _ = matrix_message(flags, 96, 96)
        cut = text.rstrip("\n").rsplit("\n", 1)[0] + "\n[... 120 characters cut]"
        self.assertEqual(wheremap.maps(cut), [])
        self.assertEqual(wheremap.parse(cut), [("text", cut)])

    def test_rows_of_the_wrong_width_or_count_are_not_a_map(self):
        head = f"  map of the 64 x 64 output, one character per 32 x 32 tile {LEGEND}:\n"
        for body in ("    ..\n    .\n", "    ...\n    ...\n", "    ..\n", "    ..\n    ..\n    ..\n",
                     "    .a\n    ..\n"):
            with self.subTest(body=body):
                self.assertEqual(wheremap.maps(head + body), [])


class VectorMaps(unittest.TestCase):
    def test_segments_and_groups(self):
        n = 1000
        flags = [0] * n
        for i in range(256, 512):
            flags[i] = 1
        flags[999] = 2
        text, line, groups = vector_where(
            flags, 256, name="y", group=lambda i: "rows of length 1-32" if i < 600
            else "rows of length 33-64")
        (m,) = wheremap.maps(nd_report("y", n, text))
        self.assertEqual((m.kind, m.title, m.rows, m.cols, m.cell_cols), ("vector", "y[0..1000)",
                                                                          1, 1000, 256))
        self.assertEqual(m.cells, [line])
        self.assertEqual(m.cells, [".X.?"])
        self.assertEqual(m.groups, groups)
        self.assertEqual(m.groups, [("rows of length 1-32", 256, 600),
                                    ("rows of length 33-64", 1, 400)])

    def test_long_vectors_and_a_one_element_output(self):
        flags = [0] * 100000
        flags[5] = 1
        text, line, _ = vector_where(flags, 256)
        (m,) = wheremap.maps(text)
        self.assertEqual(len(m.cells[0]), len(line))
        self.assertLessEqual(len(line), 64)
        self.assertEqual(m.cells[0][0], "x")
        # Lab 05's reduction: one output element, VectorLayout{1, 1, {}, "out"}
        text, line, _ = vector_where([1], 1, name="out")
        msg = "the sum of 4097 floats is wrong: " + nd_report("out", 1, text)
        (m,) = wheremap.maps(msg)
        self.assertEqual((m.title, m.cells), ("out[0..1)", ["X"]))

    def test_a_name_with_brackets(self):
        text, _, _ = vector_where([0, 1, 1, 0], 2, name="y[row][0]")
        (m,) = wheremap.maps(text)
        self.assertEqual(m.title, "y[row][0][0..4)")
        self.assertEqual(m.cells, ["xx"])


class NchwMaps(unittest.TestCase):
    def test_a_small_plane_one_pixel_per_character(self):
        h, w = 6, 9
        plane = [[0] * w for _ in range(h)]
        plane[0][0] = plane[5][8] = 1
        plane[2][4] = 2
        text, lines = nchw_where(plane, h, w, img=1, ch=3, stride=2)
        (m,) = wheremap.maps(nd_report("y", 2 * 4 * h * w, text))
        self.assertEqual((m.kind, m.rows, m.cols, m.cell_rows, m.cell_cols), ("nchw", 6, 9, 1, 1))
        self.assertEqual(m.title, "image 1, channel 3 (6 x 9)")
        self.assertEqual(m.cells, lines)
        self.assertEqual(m.cells[2], "....?....")

    def test_a_large_plane(self):
        h, w = 100, 200
        plane = [[1 if y < 4 else 0 for x in range(w)] for y in range(h)]
        text, lines = nchw_where(plane, h, w)
        (m,) = wheremap.maps(text)
        self.assertEqual((m.cell_rows, m.cell_cols), (4, 4))
        self.assertEqual((len(m.cells), len(m.cells[0])), (25, 50))
        self.assertEqual(m.cells[0], "X" * 50)
        self.assertEqual(m.cells, lines)

    def test_a_plane_whose_size_disagrees_with_the_map_is_text(self):
        text, _ = nchw_where([[1] * 4 for _ in range(4)], 4, 4)
        self.assertEqual(wheremap.maps(text.replace("4 x 4 image", "8 x 8 image")), [])


class NoMap(unittest.TestCase):
    def test_messages_without_a_map(self):
        for text in ("", "expected 3, got 4", "the kernel crashed: illegal address\nmap of",
                     "map of the world, one character per country\n    ..\n",
                     "<script>alert(1)</script>"):
            with self.subTest(text=text):
                self.assertEqual(wheremap.parse(text), [("text", text)])

    def test_two_maps_in_one_message(self):
        a, _ = matrix_message([[1] * 4 for _ in range(4)], 4, 4, tile=2)
        b, _, _ = vector_where([0, 2], 1)
        ms = wheremap.maps("output C: " + a + "output y: " + b)
        self.assertEqual([m.kind for m in ms], ["matrix", "vector"])


if __name__ == "__main__":
    unittest.main()
