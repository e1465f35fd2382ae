// Correctness checks against a CPU reference, and the mismatch report a student reads.
//
// One rule everywhere: an element passes when |got - ref| <= bound, where the bound is
//   atol + rtol * |ref|                      (uniform_bounds), or
//   c * sqrt(K) * 2^-24 * (|A||B|)_ij        (matmul_bounds: scaled with the accumulation length)
// NaN and Inf never pass. Elements that still hold the poison pattern are "never written".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "labkit/device_buffer.hpp"

namespace labkit {

struct Mismatch {
  size_t row = 0;
  size_t col = 0;
  float got = 0.0f;
  double ref = 0.0;
  double bound = 0.0;
  bool never_written = false;
};

struct CompareResult {
  size_t rows = 0, cols = 0;  // the output seen as a rows x cols row-major matrix
  size_t wrong = 0;           // elements that fail the rule (never_written and nonfinite included)
  size_t never_written = 0;   // elements still holding the poison pattern
  size_t nonfinite = 0;       // NaN or Inf other than the poison pattern
  double worst_ratio = 0.0;   // max |got - ref| / bound over finite elements (1.0 = at the bound)
  std::vector<Mismatch> first;  // the first few failing elements, in row-major order
  std::string map;              // a coarse picture of where the failures are
  size_t map_cell_rows = 0, map_cell_cols = 0;
  std::vector<std::pair<size_t, size_t>> wrong_rows, wrong_cols;  // ranges [first, last]

  bool ok() const { return wrong == 0; }
  // The full report: summary line, first positions, rows/cols, map.
  std::string report() const;
};

// Compares `got` (rows x cols, row-major) against `ref` with per-element `bound`s.
// `tile` is the map's cell size (shrunk or grown so the map stays readable).
CompareResult compare_matrix(const std::vector<float>& got, const std::vector<double>& ref,
                             const std::vector<double>& bound, size_t rows, size_t cols,
                             size_t tile = 32, size_t max_listed = 5);

// bound_i = atol + rtol * |ref_i|
std::vector<double> uniform_bounds(const std::vector<double>& ref, double atol, double rtol);

// Describes a canary report for an output named `name` seen as rows x cols; "" if intact.
std::string describe_guards(const GuardReport& guards, const std::string& name, size_t rows,
                            size_t cols);

// "0-31, 96-126" from sorted ranges; at most `limit` ranges, then "...".
std::string format_ranges(const std::vector<std::pair<size_t, size_t>>& ranges, size_t limit = 4);

}  // namespace labkit
