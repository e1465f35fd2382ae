#include "labkit/compare.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace labkit {
namespace {

// Grows a sorted list of [first, last] ranges with index i (called in increasing order).
void add_to_ranges(std::vector<std::pair<size_t, size_t>>& ranges, size_t i) {
  if (!ranges.empty() && ranges.back().second + 1 >= i) {
    ranges.back().second = std::max(ranges.back().second, i);
  } else {
    ranges.emplace_back(i, i);
  }
}

size_t ranges_count(const std::vector<std::pair<size_t, size_t>>& ranges) {
  size_t n = 0;
  for (const auto& r : ranges) n += r.second - r.first + 1;
  return n;
}

// The map must fit in about 64 x 64 characters.
size_t cell_size(size_t extent, size_t tile) {
  size_t cell = std::max<size_t>(tile, 1);
  while ((extent + cell - 1) / cell > 64) cell *= 2;
  return cell;
}

std::string format_float(double v) {
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

}  // namespace

std::string format_ranges(const std::vector<std::pair<size_t, size_t>>& ranges, size_t limit) {
  std::ostringstream os;
  for (size_t i = 0; i < ranges.size() && i < limit; ++i) {
    if (i > 0) os << ", ";
    os << ranges[i].first;
    if (ranges[i].second != ranges[i].first) os << "-" << ranges[i].second;
  }
  if (ranges.size() > limit) os << ", ... (" << ranges.size() << " ranges)";
  return os.str();
}

std::vector<double> uniform_bounds(const std::vector<double>& ref, double atol, double rtol) {
  std::vector<double> bound(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) bound[i] = atol + rtol * std::fabs(ref[i]);
  return bound;
}

CompareResult compare_matrix(const std::vector<float>& got, const std::vector<double>& ref,
                             const std::vector<double>& bound, size_t rows, size_t cols,
                             size_t tile, size_t max_listed) {
  if (got.size() != rows * cols || ref.size() != rows * cols || bound.size() != rows * cols) {
    throw std::invalid_argument("compare_matrix: sizes do not match rows x cols");
  }
  CompareResult r;
  r.rows = rows;
  r.cols = cols;
  r.map_cell_rows = cell_size(rows, tile);
  r.map_cell_cols = cell_size(cols, tile);
  const size_t map_rows = (rows + r.map_cell_rows - 1) / r.map_cell_rows;
  const size_t map_cols = (cols + r.map_cell_cols - 1) / r.map_cell_cols;
  std::vector<size_t> cell_wrong(map_rows * map_cols, 0), cell_unwritten(map_rows * map_cols, 0);
  std::vector<char> col_wrong(cols, 0);

  for (size_t i = 0; i < rows; ++i) {
    bool row_has_wrong = false;
    for (size_t j = 0; j < cols; ++j) {
      const size_t idx = i * cols + j;
      const float g = got[idx];
      const bool poison = bits_of(g) == kPoisonBits;
      bool bad;
      if (poison) {
        ++r.never_written;
        bad = true;
      } else if (!std::isfinite(g)) {
        ++r.nonfinite;
        bad = true;
      } else {
        const double err = std::fabs(static_cast<double>(g) - ref[idx]);
        const double ratio = bound[idx] > 0 ? err / bound[idx] : (err > 0 ? INFINITY : 0.0);
        r.worst_ratio = std::max(r.worst_ratio, ratio);
        bad = !(err <= bound[idx]);
      }
      if (!bad) continue;
      ++r.wrong;
      row_has_wrong = true;
      col_wrong[j] = 1;
      const size_t cell = (i / r.map_cell_rows) * map_cols + j / r.map_cell_cols;
      ++cell_wrong[cell];
      if (poison) ++cell_unwritten[cell];
      if (r.first.size() < max_listed) {
        r.first.push_back(Mismatch{i, j, g, ref[idx], bound[idx], poison});
      }
    }
    if (row_has_wrong) add_to_ranges(r.wrong_rows, i);
  }
  for (size_t j = 0; j < cols; ++j) {
    if (col_wrong[j]) add_to_ranges(r.wrong_cols, j);
  }
  if (r.wrong == 0) return r;

  std::ostringstream map;
  for (size_t mi = 0; mi < map_rows; ++mi) {
    map << "    ";
    for (size_t mj = 0; mj < map_cols; ++mj) {
      const size_t cell = mi * map_cols + mj;
      const size_t h = std::min(r.map_cell_rows, rows - mi * r.map_cell_rows);
      const size_t w = std::min(r.map_cell_cols, cols - mj * r.map_cell_cols);
      char c = '.';
      if (cell_unwritten[cell] > 0) {
        c = '?';
      } else if (cell_wrong[cell] == h * w) {
        c = 'X';
      } else if (cell_wrong[cell] > 0) {
        c = 'x';
      }
      map << c;
    }
    map << "\n";
  }
  r.map = map.str();
  return r;
}

std::string CompareResult::report() const {
  std::ostringstream os;
  if (ok()) {
    os << "all " << rows * cols << " elements within bounds (worst error " << worst_ratio
       << " of the bound)\n";
    return os.str();
  }
  os << wrong << " of " << rows * cols << " elements wrong";
  if (never_written > 0) {
    os << "; " << never_written << " never written (still the NaN poison the harness fills the "
       << "output with before each launch)";
  }
  if (nonfinite > 0) os << "; " << nonfinite << " NaN/Inf";
  os << "\n";
  os << "  first wrong elements (row, col): got / expected, allowed error\n";
  for (const Mismatch& m : first) {
    os << "    (" << m.row << ", " << m.col << "): ";
    if (m.never_written) {
      os << "never written";
    } else {
      os << format_float(m.got);
    }
    os << " / " << format_float(m.ref) << ", |error| <= " << format_float(m.bound);
    if (!m.never_written && std::isfinite(m.got)) {
      os << " (error " << format_float(std::fabs(m.got - m.ref)) << ")";
    }
    os << "\n";
  }
  os << "  wrong rows: " << format_ranges(wrong_rows) << " (" << ranges_count(wrong_rows) << " of "
     << rows << ")\n";
  os << "  wrong cols: " << format_ranges(wrong_cols) << " (" << ranges_count(wrong_cols) << " of "
     << cols << ")\n";
  os << "  map of the " << rows << " x " << cols << " output, one character per "
     << map_cell_rows << " x " << map_cell_cols
     << " tile ('.' right, 'x' some wrong, 'X' all wrong, '?' some never written):\n"
     << map;
  return os.str();
}

std::string describe_guards(const GuardReport& guards, const std::string& name, size_t rows,
                            size_t cols) {
  if (guards.intact()) return "";
  std::ostringstream os;
  if (guards.after > 0) {
    const size_t offset = guards.first_after;
    os << "the kernel wrote " << guards.after << " element(s) past the end of " << name << " ("
       << rows << " x " << cols << "): the first at " << name << "[" << rows * cols + offset
       << "], which would be row " << rows + offset / std::max<size_t>(cols, 1) << ", col "
       << offset % std::max<size_t>(cols, 1)
       << " of a larger matrix - a thread outside the matrix wrote (missing bounds guard?)\n";
  }
  if (guards.before > 0) {
    os << "the kernel wrote " << guards.before << " element(s) before the start of " << name
       << ", the nearest at " << name << "[-" << guards.nearest_before
       << "] (negative index?)\n";
  }
  return os.str();
}

}  // namespace labkit
