// Correctness checks against a CPU reference, and the mismatch report a student reads.
//
// One rule everywhere: an element passes when |got - ref| <= bound, where the bound is
//   atol + rtol * |ref|                      (uniform_bounds), or
//   c * sqrt(K) * 2^-24 * (sqrt(sum_k (a b)^2) + |ref|)_ij   (matmul_walk_bounds: K roundings
//                                              adding up like a random walk)
// or, for integers, got == ref exactly. NaN and Inf never pass. Elements that still hold the
// poison pattern are "never written". Each shape has its own "where" map: rows, columns and
// tiles of a matrix; segments (and optional groups, e.g. row lengths) of a vector; images,
// channels, borders and stride phases of an NCHW tensor. A failure is told twice from the same
// fields: as text a student reads (report) and as data the grader draws (where_json).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "labkit/device_buffer.hpp"
#include "labkit/dtype.hpp"

namespace labkit {

struct Mismatch {
  size_t index = 0;  // flat index
  size_t row = 0;
  size_t col = 0;
  double got = 0.0;
  double ref = 0.0;
  double bound = 0.0;
  bool never_written = false;
  int64_t got_int = 0, ref_int = 0;  // exact comparisons: the integers themselves
};

// [first, last] index ranges, sorted: the wrong rows of a matrix, the wrong segments of a
// vector, the wrong images of an NCHW tensor.
using Ranges = std::vector<std::pair<size_t, size_t>>;

struct CompareResult {
  enum class Shape { kMatrix, kVector, kNchw };
  Shape shape = Shape::kMatrix;
  bool exact = false;         // integers: no tolerance
  std::string name = "C";     // the output's name in messages
  std::vector<size_t> dims;   // kVector: {n}; kNchw: {n, c, h, w}
  size_t rows = 0, cols = 0;  // kMatrix: the output seen as a rows x cols row-major matrix
  size_t wrong = 0;           // elements that fail the rule (never_written and nonfinite included)
  size_t never_written = 0;   // elements still holding the poison pattern
  size_t nonfinite = 0;       // NaN or Inf other than the poison pattern
  double worst_ratio = 0.0;   // max |got - ref| / bound over finite elements (1.0 = at the bound)
  std::vector<Mismatch> first;  // the first few failing elements, in row-major order

  // Where the failures are (filled only when something is wrong). The map is a coarse
  // picture, one string per row of cells, one character per cell ('.' right, 'x' some wrong,
  // 'X' all wrong, '?' some never written): a matrix's tiles, a vector's runs of elements,
  // one NCHW plane's blocks of pixels (the first plane with a wrong element).
  std::vector<std::string> map;
  size_t map_cell_rows = 0, map_cell_cols = 0;  // elements (pixels) per cell, down and across
  Ranges wrong_rows, wrong_cols;                // kMatrix
  size_t segment = 0;                           // kVector: the layout's segment ...
  Ranges wrong_segments;                        // ... and the wrong ones
  struct Group {
    std::string name;
    size_t wrong = 0, total = 0;
  };
  std::vector<Group> groups;                    // kVector with a group function, in order seen
  Ranges wrong_images, wrong_channels;          // kNchw
  size_t border = 0, border_wrong = 0, border_total = 0, interior_wrong = 0;
  size_t stride = 1;
  std::vector<size_t> phase_wrong;              // stride x stride, by (h % stride, w % stride)
  size_t map_image = 0, map_channel = 0;        // the plane the map shows

  bool ok() const { return wrong == 0; }
  size_t total() const;
  // The full report a student reads: summary line, first positions, the shape's "where" map.
  std::string report() const;
  // The same failure as one compact JSON object, for the grader's pictures (docs/reports.md):
  // {"kind", "name", "shape", "exact", "checked", "wrong", "never_written", "nonfinite",
  //  "worst_ratio", "first": [{"index", "at", "got", "expected", "bound", ...}], "map": {"cell",
  //  "rows"}, and the shape's own keys}. Small whatever the output's size: lists are capped (10
  // elements, 16 ranges, 32 groups), the map is at most 64 x 64. "" when nothing is wrong.
  std::string where_json() const;

 private:
  std::vector<size_t> coordinates(const Mismatch& m) const;  // (row, col), (i), (n, c, h, w)
  std::string report_nd() const;
  std::string vector_text() const;
  std::string nchw_text() const;
};

// What a check's verify found wrong with one call's outputs: nothing (ok), or the report a
// student reads and, for a comparison, the same failure as data (CompareResult::where_json).
struct Verdict {
  std::string message;  // "" when the outputs are right
  std::string where;    // "" when there is no comparison to show
  bool ok() const { return message.empty(); }
};

// The verdict of a comparison: `lead` (what was compared, e.g. "y is wrong for <shape>: ")
// then the report, with its where data. The one way a comparison becomes a failure.
Verdict verdict(const CompareResult& r, const std::string& lead = "");

// Compares `got` (rows x cols, row-major) against `ref` with per-element `bound`s.
// `tile` is the map's cell size (shrunk or grown so the map stays readable).
CompareResult compare_matrix(const std::vector<float>& got, const std::vector<double>& ref,
                             const std::vector<double>& bound, size_t rows, size_t cols,
                             size_t tile = 32, size_t max_listed = 5);

// ---- any element type (labkit/dtype.hpp): raw output bytes decoded, poison detected.
struct Observed {
  std::vector<double> values;      // floats
  std::vector<int64_t> ints;       // integers
  std::vector<uint8_t> unwritten;  // 1 where the poison pattern is still there
  size_t size() const { return unwritten.size(); }
};
Observed observe(const std::vector<uint8_t>& bytes, DType dtype);

// ---- 1D: a vector seen in segments of `segment` elements (a reduction's blocks, a row
// range); `group`, when set, names each element's group (e.g. "rows of length 33-64") and the
// report counts wrong elements per group.
struct VectorLayout {
  size_t n = 0;
  size_t segment = 256;
  std::function<std::string(size_t)> group;
  std::string name = "y";
};
CompareResult compare_vector(const Observed& got, const std::vector<double>& ref,
                             const std::vector<double>& bound, const VectorLayout& layout,
                             size_t max_listed = 5);
CompareResult compare_vector_exact(const Observed& got, const std::vector<int64_t>& ref,
                                   const VectorLayout& layout, size_t max_listed = 5);

// ---- NCHW: which images and channels are wrong, and where in the image: borders (within
// `border` of an edge: padding), interior, and the stride phase (h % stride, w % stride).
struct NchwLayout {
  size_t n = 1, c = 1, h = 1, w = 1;
  size_t border = 1;
  size_t stride = 1;
  std::string name = "y";
};
CompareResult compare_nchw(const Observed& got, const std::vector<double>& ref,
                           const std::vector<double>& bound, const NchwLayout& layout,
                           size_t max_listed = 5);

// |got_i - ref_i| <= bound_i for every i (NaN never passes), over the CPU's cores: the quick
// pass over a large output (a benchmark checks every timed call), the full report only when it
// fails.
bool all_within(const std::vector<float>& got, const std::vector<double>& ref,
                const std::vector<double>& bound);

// bound_i = atol + rtol * |ref_i|
std::vector<double> uniform_bounds(const std::vector<double>& ref, double atol, double rtol);

// "0-31, 96-126" from sorted ranges; at most `limit` ranges, then "...".
std::string format_ranges(const Ranges& ranges, size_t limit = 4);

}  // namespace labkit
