#include "labkit/compare.hpp"
#include "labkit/half.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "labkit/json.hpp"
#include "labkit/parallel.hpp"

namespace labkit {
namespace {

// Grows a sorted list of [first, last] ranges with index i (called in increasing order).
void add_to_ranges(Ranges& ranges, size_t i) {
  if (!ranges.empty() && ranges.back().second + 1 >= i) {
    ranges.back().second = std::max(ranges.back().second, i);
  } else {
    ranges.emplace_back(i, i);
  }
}

size_t ranges_count(const Ranges& ranges) {
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

const char* const kLegend = "('.' right, 'x' some wrong, 'X' all wrong, '?' some never written)";

// The map's rows as text, each indented 4 spaces.
std::string map_text(const std::vector<std::string>& map) {
  std::string out;
  for (const std::string& row : map) out += "    " + row + "\n";
  return out;
}

// ---- the where data as JSON: lists are capped, whatever the output's size.
constexpr size_t kJsonFirst = 10;
constexpr size_t kJsonRanges = 16;
constexpr size_t kJsonGroups = 32;

std::string json_size_list(const std::vector<size_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

// {"ranges": [[first, last], ...] (the first 16), "ranges_total", "count": elements in them,
//  "of": how many there are}
std::string json_ranges(const Ranges& ranges, size_t of) {
  std::string out = "{\"ranges\":[";
  for (size_t i = 0; i < ranges.size() && i < kJsonRanges; ++i) {
    out += (i ? ",[" : "[") + std::to_string(ranges[i].first) + "," +
           std::to_string(ranges[i].second) + "]";
  }
  return out + "],\"ranges_total\":" + std::to_string(ranges.size()) +
         ",\"count\":" + std::to_string(ranges_count(ranges)) + ",\"of\":" + std::to_string(of) +
         "}";
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

bool all_within(const std::vector<float>& got, const std::vector<double>& ref,
                const std::vector<double>& bound) {
  std::atomic<bool> ok{true};
  parallel_for(got.size(), size_t{1} << 16, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi && ok.load(std::memory_order_relaxed); ++i) {
      const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
      if (!(err <= bound[i])) ok.store(false, std::memory_order_relaxed);
    }
  });
  return ok.load();
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
        r.first.push_back(Mismatch{idx, i, j, g, ref[idx], bound[idx], poison});
      }
    }
    if (row_has_wrong) add_to_ranges(r.wrong_rows, i);
  }
  for (size_t j = 0; j < cols; ++j) {
    if (col_wrong[j]) add_to_ranges(r.wrong_cols, j);
  }
  if (r.wrong == 0) return r;

  for (size_t mi = 0; mi < map_rows; ++mi) {
    std::string line;
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
      line += c;
    }
    r.map.push_back(line);
  }
  return r;
}

size_t CompareResult::total() const {
  if (shape == Shape::kMatrix) return rows * cols;
  size_t n = 1;
  for (size_t d : dims) n *= d;
  return n;
}

std::string CompareResult::report() const {
  std::ostringstream os;
  if (ok()) {
    os << "all " << total() << " elements " << (exact ? "exact" : "within bounds");
    if (!exact) os << " (worst error " << worst_ratio << " of the bound)";
    os << "\n";
    return os.str();
  }
  os << wrong << " of " << total() << " elements wrong";
  if (never_written > 0) {
    // An integer output holds the same bits, read as an integer (2143346349): not a NaN.
    os << "; " << never_written << " never written (still the "
       << (exact ? "poison pattern 0x7FC0DEAD" : "NaN poison")
       << " the harness fills the output with before each launch)";
  }
  if (nonfinite > 0) os << "; " << nonfinite << " NaN/Inf";
  os << "\n";
  if (shape != Shape::kMatrix) return os.str() + report_nd();
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
     << map_cell_rows << " x " << map_cell_cols << " tile " << kLegend << ":\n"
     << map_text(map);
  return os.str();
}

// ---------------------------------------------------------------- any element type

Observed observe(const std::vector<uint8_t>& bytes, DType dtype) {
  Observed o;
  const size_t size = elem_size(dtype);
  const size_t n = bytes.size() / size;
  o.unwritten.assign(n, 0);
  if (dtype == DType::kF32 || dtype == DType::kF64) o.values.resize(n);
  if (dtype == DType::kI32 || dtype == DType::kI64) o.ints.resize(n);
  if (dtype == DType::kF16 || dtype == DType::kBF16) {
    // 16-bit outputs (lab 11): the poison's 32-bit word covers two elements, its low half first
    // (little-endian); an element still holding its half of the word was never written.
    const bool bf16 = dtype == DType::kBF16;
    o.values.resize(n);
    parallel_for(n, size_t{1} << 18, [&](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) {
        uint16_t bits;
        std::memcpy(&bits, bytes.data() + 2 * i, 2);
        const auto poison = static_cast<uint16_t>(i % 2 == 0 ? kPoisonBits : kPoisonBits >> 16);
        o.unwritten[i] = bits == poison;
        o.values[i] = from_16_bits(bits, bf16);
      }
    });
    return o;
  }
  if (size < 4) {  // bytes are inputs, never poisoned outputs
    throw std::invalid_argument("labkit::observe: outputs are 2, 4 or 8 bytes per element");
  }
  parallel_for(n, size_t{1} << 18, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      const uint8_t* at = bytes.data() + i * size;
      uint32_t low = 0;
      std::memcpy(&low, at, 4);
      uint32_t high = 0;
      if (size == 8) std::memcpy(&high, at + 4, 4);
      o.unwritten[i] = low == kPoisonBits && (size == 4 || high == kPoisonBits);
      switch (dtype) {
        case DType::kF32: {
          float f;
          std::memcpy(&f, at, 4);
          o.values[i] = f;
          break;
        }
        case DType::kF64: std::memcpy(&o.values[i], at, 8); break;
        case DType::kI32: {
          int32_t v;
          std::memcpy(&v, at, 4);
          o.ints[i] = v;
          break;
        }
        case DType::kI64: std::memcpy(&o.ints[i], at, 8); break;
        case DType::kU8:
        case DType::kF16:
        case DType::kBF16: break;
      }
    }
  });
  return o;
}

namespace {

// The element-wise rule shared by the 1D and NCHW comparisons; calls mark(i, poison) for each
// failing element and fills the counters and the first mismatches.
template <typename Mark>
void compare_flat(const Observed& got, const std::vector<double>* ref,
                  const std::vector<double>* bound, const std::vector<int64_t>* iref,
                  CompareResult& r, size_t max_listed, Mark mark) {
  const size_t n = got.size();
  if ((ref && (ref->size() != n || !bound || bound->size() != n)) || (iref && iref->size() != n)) {
    throw std::invalid_argument("compare: sizes do not match");
  }
  // The common case first, over the CPU's cores: nothing wrong, only the worst ratio to find.
  // Anything wrong is then listed in order by the serial pass below.
  {
    std::vector<double> worst;
    std::mutex mu;
    std::atomic<bool> any_bad{false};
    parallel_for(n, size_t{1} << 18, [&](size_t lo, size_t hi) {
      double w = 0;
      for (size_t i = lo; i < hi; ++i) {
        if (got.unwritten[i] != 0) {
          any_bad = true;
          return;
        }
        if (iref != nullptr) {
          if (got.ints[i] != (*iref)[i]) {
            any_bad = true;
            return;
          }
          continue;
        }
        const double g = got.values[i], b = (*bound)[i];
        const double err = std::fabs(g - (*ref)[i]);
        if (!std::isfinite(g) || !(err <= b)) {
          any_bad = true;
          return;
        }
        w = std::max(w, b > 0 ? err / b : 0.0);
      }
      std::lock_guard<std::mutex> lock(mu);
      worst.push_back(w);
    });
    if (!any_bad) {
      for (double w : worst) r.worst_ratio = std::max(r.worst_ratio, w);
      return;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const bool poison = got.unwritten[i] != 0;
    bool bad = poison;
    double g = 0, want = 0, b = 0;
    if (iref != nullptr) {
      g = static_cast<double>(got.ints[i]);
      want = static_cast<double>((*iref)[i]);
      if (!poison) bad = got.ints[i] != (*iref)[i];
    } else {
      g = got.values[i];
      want = (*ref)[i];
      b = (*bound)[i];
      if (!poison) {
        if (!std::isfinite(g)) {
          ++r.nonfinite;
          bad = true;
        } else {
          const double err = std::fabs(g - want);
          r.worst_ratio = std::max(r.worst_ratio, b > 0 ? err / b : (err > 0 ? INFINITY : 0.0));
          bad = !(err <= b);
        }
      }
    }
    if (!bad) continue;
    ++r.wrong;
    if (poison) ++r.never_written;
    if (r.first.size() < max_listed) {
      Mismatch m{i, 0, i, g, want, b, poison};
      if (iref != nullptr) {
        m.got_int = got.ints[i];
        m.ref_int = (*iref)[i];
      }
      r.first.push_back(m);
    }
    mark(i, poison);
  }
}

// One line of `cells` characters over [0, n): '.' right, 'x' some wrong, 'X' all, '?' unwritten.
std::string strip(const std::vector<size_t>& wrong, const std::vector<size_t>& unwritten,
                  const std::vector<size_t>& size) {
  std::string line;
  for (size_t c = 0; c < wrong.size(); ++c) {
    line += unwritten[c] > 0 ? '?' : wrong[c] == 0 ? '.' : wrong[c] == size[c] ? 'X' : 'x';
  }
  return line;
}

void vector_where(CompareResult& r, const VectorLayout& layout, const std::vector<uint8_t>& flags) {
  const size_t n = layout.n;
  const size_t seg = std::max<size_t>(layout.segment, 1);
  r.segment = layout.segment;
  for (size_t i = 0; i < n; ++i) {
    if (flags[i]) add_to_ranges(r.wrong_segments, i / seg);
  }
  size_t cell = seg;
  while ((n + cell - 1) / cell > 64) cell *= 2;
  const size_t cells = (n + cell - 1) / cell;
  std::vector<size_t> wrong(cells), unwritten(cells), size(cells);
  for (size_t i = 0; i < n; ++i) {
    ++size[i / cell];
    if (flags[i]) ++wrong[i / cell];
    if (flags[i] == 2) ++unwritten[i / cell];
  }
  r.map = {strip(wrong, unwritten, size)};
  r.map_cell_rows = 1;
  r.map_cell_cols = cell;
  if (layout.group) {
    for (size_t i = 0; i < n; ++i) {
      const std::string g = layout.group(i);
      auto it = std::find_if(r.groups.begin(), r.groups.end(),
                             [&](const CompareResult::Group& x) { return x.name == g; });
      if (it == r.groups.end()) it = r.groups.insert(r.groups.end(), {g, 0, 0});
      ++it->total;
      if (flags[i]) ++it->wrong;
    }
  }
}

}  // namespace

CompareResult compare_vector(const Observed& got, const std::vector<double>& ref,
                             const std::vector<double>& bound, const VectorLayout& layout,
                             size_t max_listed) {
  CompareResult r;
  r.shape = CompareResult::Shape::kVector;
  r.name = layout.name;
  r.dims = {layout.n};
  if (got.size() != layout.n) throw std::invalid_argument("compare_vector: size is not n");
  std::vector<uint8_t> flags(layout.n, 0);
  compare_flat(got, &ref, &bound, nullptr, r, max_listed,
               [&](size_t i, bool poison) { flags[i] = poison ? 2 : 1; });
  if (!r.ok()) vector_where(r, layout, flags);
  return r;
}

CompareResult compare_vector_exact(const Observed& got, const std::vector<int64_t>& ref,
                                   const VectorLayout& layout, size_t max_listed) {
  CompareResult r;
  r.shape = CompareResult::Shape::kVector;
  r.exact = true;
  r.name = layout.name;
  r.dims = {layout.n};
  if (got.size() != layout.n) throw std::invalid_argument("compare_vector_exact: size is not n");
  std::vector<uint8_t> flags(layout.n, 0);
  compare_flat(got, nullptr, nullptr, &ref, r, max_listed,
               [&](size_t i, bool poison) { flags[i] = poison ? 2 : 1; });
  if (!r.ok()) vector_where(r, layout, flags);
  return r;
}

CompareResult compare_nchw(const Observed& got, const std::vector<double>& ref,
                           const std::vector<double>& bound, const NchwLayout& L,
                           size_t max_listed) {
  CompareResult r;
  r.shape = CompareResult::Shape::kNchw;
  r.name = L.name;
  r.dims = {L.n, L.c, L.h, L.w};
  const size_t plane = L.h * L.w;
  if (got.size() != L.n * L.c * plane) throw std::invalid_argument("compare_nchw: size is not n*c*h*w");
  std::vector<char> image_bad(L.n, 0), channel_bad(L.c, 0);
  size_t border_wrong = 0, interior_wrong = 0;
  const size_t s = std::max<size_t>(L.stride, 1);
  std::vector<size_t> phase_wrong(s * s, 0);
  std::vector<uint8_t> first_plane_flags;
  size_t first_plane = SIZE_MAX;
  compare_flat(got, &ref, &bound, nullptr, r, max_listed, [&](size_t i, bool poison) {
    const size_t img = i / (L.c * plane), ch = (i / plane) % L.c, y = (i % plane) / L.w,
                 x = i % L.w;
    image_bad[img] = channel_bad[ch] = 1;
    const bool border = y < L.border || x < L.border || y + L.border >= L.h || x + L.border >= L.w;
    (border ? border_wrong : interior_wrong)++;
    ++phase_wrong[(y % s) * s + x % s];
    if (first_plane == SIZE_MAX) {
      first_plane = i / plane;
      first_plane_flags.assign(plane, 0);
    }
    if (i / plane == first_plane) first_plane_flags[i % plane] = poison ? 2 : 1;
  });
  if (r.ok()) return r;
  size_t border_plane = 0;
  for (size_t y = 0; y < L.h; ++y) {
    for (size_t x = 0; x < L.w; ++x) {
      border_plane += y < L.border || x < L.border || y + L.border >= L.h || x + L.border >= L.w;
    }
  }
  for (size_t i = 0; i < L.n; ++i) if (image_bad[i]) add_to_ranges(r.wrong_images, i);
  for (size_t i = 0; i < L.c; ++i) if (channel_bad[i]) add_to_ranges(r.wrong_channels, i);
  r.border = L.border;
  r.border_wrong = border_wrong;
  r.border_total = border_plane * L.n * L.c;
  r.interior_wrong = interior_wrong;
  r.stride = s;
  r.phase_wrong = phase_wrong;
  r.map_channel = first_plane % L.c;
  r.map_image = first_plane / L.c;
  size_t cell_h = 1, cell_w = 1;
  while ((L.h + cell_h - 1) / cell_h > 32) cell_h *= 2;
  while ((L.w + cell_w - 1) / cell_w > 64) cell_w *= 2;
  r.map_cell_rows = cell_h;
  r.map_cell_cols = cell_w;
  const size_t mh = (L.h + cell_h - 1) / cell_h, mw = (L.w + cell_w - 1) / cell_w;
  for (size_t my = 0; my < mh; ++my) {
    std::vector<size_t> wrong(mw), unwritten(mw), size(mw);
    for (size_t y = my * cell_h; y < std::min(L.h, (my + 1) * cell_h); ++y) {
      for (size_t x = 0; x < L.w; ++x) {
        const uint8_t f = first_plane_flags[y * L.w + x];
        ++size[x / cell_w];
        if (f) ++wrong[x / cell_w];
        if (f == 2) ++unwritten[x / cell_w];
      }
    }
    r.map.push_back(strip(wrong, unwritten, size));
  }
  return r;
}

std::vector<size_t> CompareResult::coordinates(const Mismatch& m) const {
  if (shape == Shape::kMatrix) return {m.row, m.col};
  if (shape == Shape::kVector) return {m.index};
  const size_t c = dims[1], h = dims[2], w = dims[3];
  return {m.index / (c * h * w), (m.index / (h * w)) % c, (m.index % (h * w)) / w, m.index % w};
}

std::string CompareResult::report_nd() const {
  std::ostringstream os;
  os << "  first wrong elements: got / expected" << (exact ? "" : ", allowed error") << "\n";
  for (const Mismatch& m : first) {
    os << "    " << name;
    for (size_t x : coordinates(m)) os << "[" << x << "]";
    os << ": ";
    if (m.never_written) {
      os << "never written";
    } else if (exact) {
      os << m.got_int;
    } else {
      os << format_float(m.got);
    }
    os << " / " << (exact ? std::to_string(m.ref_int) : format_float(m.ref));
    if (!exact) os << ", |error| <= " << format_float(m.bound);
    os << "\n";
  }
  os << (shape == Shape::kVector ? vector_text() : nchw_text());
  return os.str();
}

std::string CompareResult::vector_text() const {
  std::ostringstream os;
  const size_t n = dims[0], seg = std::max<size_t>(segment, 1);
  os << "  wrong " << segment << "-element segments: " << format_ranges(wrong_segments) << " ("
     << ranges_count(wrong_segments) << " of " << (n + seg - 1) / seg << ")\n";
  os << "  map of " << name << "[0.." << n << "), one character per " << map_cell_cols
     << " elements " << kLegend << ":\n"
     << map_text(map);
  if (!groups.empty()) {
    os << "  by group:\n";
    for (const Group& g : groups) {
      os << "    " << g.name << ": " << g.wrong << " of " << g.total << " wrong\n";
    }
  }
  return os.str();
}

std::string CompareResult::nchw_text() const {
  std::ostringstream os;
  const size_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
  os << "  wrong images (n): " << format_ranges(wrong_images) << " ("
     << ranges_count(wrong_images) << " of " << n << ")\n";
  os << "  wrong channels (c): " << format_ranges(wrong_channels) << " ("
     << ranges_count(wrong_channels) << " of " << c << ")\n";
  os << "  where in the " << h << " x " << w << " image: " << border_wrong << " wrong within "
     << border << " of an edge (" << border_total << " such elements), " << interior_wrong
     << " in the interior\n";
  if (stride > 1) {
    os << "  by stride phase (h % " << stride << ", w % " << stride << "):";
    for (size_t py = 0; py < stride; ++py) {
      for (size_t px = 0; px < stride; ++px) {
        os << " (" << py << "," << px << ") " << phase_wrong[py * stride + px];
      }
    }
    os << "\n";
  }
  os << "  map of image " << map_image << ", channel " << map_channel << ", one character per "
     << map_cell_rows << " x " << map_cell_cols << " pixels " << kLegend << ":\n"
     << map_text(map);
  return os.str();
}

std::string CompareResult::where_json() const {
  if (ok()) return "";
  static const char* const kKinds[] = {"matrix", "vector", "nchw"};
  std::ostringstream os;
  os << "{\"kind\":\"" << kKinds[static_cast<int>(shape)] << "\",\"name\":" << json_quote(name)
     << ",\"shape\":"
     << json_size_list(shape == Shape::kMatrix ? std::vector<size_t>{rows, cols} : dims)
     << ",\"exact\":" << (exact ? "true" : "false") << ",\"checked\":" << total()
     << ",\"wrong\":" << wrong << ",\"never_written\":" << never_written
     << ",\"nonfinite\":" << nonfinite << ",\"worst_ratio\":" << json_number(worst_ratio)
     << ",\"first\":[";
  for (size_t i = 0; i < first.size() && i < kJsonFirst; ++i) {
    const Mismatch& m = first[i];
    os << (i ? "," : "") << "{\"index\":" << m.index
       << ",\"at\":" << json_size_list(coordinates(m));
    if (m.never_written) {
      os << ",\"never_written\":true";
    } else {
      os << ",\"got\":" << (exact ? std::to_string(m.got_int) : json_number(m.got));
    }
    os << ",\"expected\":" << (exact ? std::to_string(m.ref_int) : json_number(m.ref));
    if (!exact) os << ",\"bound\":" << json_number(m.bound);
    os << "}";
  }
  os << "],\"map\":{\"cell\":[" << map_cell_rows << "," << map_cell_cols << "],\"rows\":[";
  for (size_t i = 0; i < map.size(); ++i) os << (i ? "," : "") << json_quote(map[i]);
  os << "]";
  if (shape == Shape::kNchw) os << ",\"image\":" << map_image << ",\"channel\":" << map_channel;
  os << "}";
  if (shape == Shape::kMatrix) {
    os << ",\"wrong_rows\":" << json_ranges(wrong_rows, rows)
       << ",\"wrong_cols\":" << json_ranges(wrong_cols, cols);
  } else if (shape == Shape::kVector) {
    const size_t seg = std::max<size_t>(segment, 1);
    os << ",\"segment\":" << segment
       << ",\"wrong_segments\":" << json_ranges(wrong_segments, (dims[0] + seg - 1) / seg)
       << ",\"groups\":[";
    for (size_t i = 0; i < groups.size() && i < kJsonGroups; ++i) {
      os << (i ? "," : "") << "{\"name\":" << json_quote(groups[i].name)
         << ",\"wrong\":" << groups[i].wrong << ",\"total\":" << groups[i].total << "}";
    }
    os << "],\"groups_total\":" << groups.size();
  } else {
    os << ",\"wrong_images\":" << json_ranges(wrong_images, dims[0])
       << ",\"wrong_channels\":" << json_ranges(wrong_channels, dims[1])
       << ",\"border\":{\"width\":" << border << ",\"wrong\":" << border_wrong
       << ",\"total\":" << border_total << "},\"interior_wrong\":" << interior_wrong
       << ",\"stride\":" << stride;
    if (stride > 1 && stride <= 8) os << ",\"phase_wrong\":" << json_size_list(phase_wrong);
  }
  os << "}";
  return os.str();
}

Verdict verdict(const CompareResult& r, const std::string& lead) {
  if (r.ok()) return {};
  return {lead + r.report(), r.where_json()};
}

}  // namespace labkit
