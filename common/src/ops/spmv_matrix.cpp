#include "labkit/ops/spmv_matrix.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::spmv {
namespace {

// A counter-based stream of random numbers (labkit::hash64): the same on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : seed_(seed) {}
  uint64_t next() { return hash64(seed_, i_++); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int32_t below(int64_t n) { return static_cast<int32_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t seed_, i_ = 0;
};

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("spmv generator: " + what);
}

// `len` distinct columns of [0, cols), sorted, written to out[0..len).
void distinct_sorted(int32_t cols, int32_t len, Rng& rng, int32_t* out) {
  if (len == 0) return;
  if (static_cast<int64_t>(len) * 2 > cols) {
    // Selection sampling (Knuth's algorithm S): one pass over the columns, exactly len picks.
    int32_t picked = 0;
    for (int32_t c = 0; c < cols && picked < len; ++c) {
      const double need = len - picked, left = cols - c;
      if (rng.unit() * left < need) out[picked++] = c;
    }
    return;
  }
  std::vector<int32_t> v;
  v.reserve(len);
  while (static_cast<int32_t>(v.size()) < len) {
    while (static_cast<int32_t>(v.size()) < len) v.push_back(rng.below(cols));
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  std::copy(v.begin(), v.end(), out);
}

// Builds a CSR matrix from row lengths; fill(r, rng, out) writes row r's sorted columns.
// Rows are filled in parallel over the CPU's cores (the benchmark's matrices have 10^8 entries);
// each row draws from its own stream, so the result does not depend on the thread count.
template <typename Fill>
Csr build(int32_t rows, int32_t cols, const std::vector<int32_t>& lengths, uint64_t seed, Fill fill) {
  Csr m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  int64_t total = 0;
  for (int32_t r = 0; r < rows; ++r) {
    total += lengths[r];
    require(total <= kMaxNnz, "more than 2^31 - 1 entries: 32-bit indices cannot hold them");
    m.row_ptr[r + 1] = static_cast<int32_t>(total);
  }
  m.col_idx.resize(static_cast<size_t>(total));
  m.values.assign(static_cast<size_t>(total), 1.0f);
  // Row by row from the row's own seed, over the CPU's cores (small matrices on one).
  parallel_for(static_cast<size_t>(rows), total < (int64_t{1} << 20) ? SIZE_MAX : 2,
               [&](size_t lo, size_t hi) {
                 for (size_t r = lo; r < hi; ++r) {
                   Rng rng(mix_seed(seed, static_cast<uint64_t>(r)));
                   fill(static_cast<int32_t>(r), rng, m.col_idx.data() + m.row_ptr[r]);
                 }
               });
  return m;
}

void check_shape(int32_t rows, int32_t cols) {
  require(rows >= 1 && cols >= 1, "rows and cols must be >= 1");
}

void check_lengths(int32_t cols, int32_t min_len, int32_t max_len) {
  require(min_len >= 0 && min_len <= max_len, "need 0 <= min_len <= max_len");
  require(max_len <= cols, "a row cannot hold more distinct columns than cols");
}

Csr uniform_impl(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len, double empty,
                 uint64_t seed) {
  check_shape(rows, cols);
  check_lengths(cols, min_len, max_len);
  Rng rng(seed);
  std::vector<int32_t> lengths(rows);
  for (int32_t r = 0; r < rows; ++r) {
    lengths[r] = min_len + rng.below(int64_t{max_len} - min_len + 1);
    if (empty > 0 && rng.unit() < empty) lengths[r] = 0;
  }
  if (empty > 0) lengths.front() = lengths.back() = 0;
  return build(rows, cols, lengths, seed ^ 0xC01u,
               [&](int32_t r, Rng& g, int32_t* out) { distinct_sorted(cols, lengths[r], g, out); });
}

// ---- Matrix Market parsing.
std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

std::vector<std::string> split(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  std::string t;
  while (is >> t) out.push_back(t);
  return out;
}

bool blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char ch) { return std::isspace(ch); });
}

bool parse_int(const std::string& t, int64_t* v) {
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || end != t.c_str() + t.size()) return false;
  *v = x;
  return true;
}

bool parse_real(const std::string& t, double* v) {
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(t.c_str(), &end);
  if (errno == ERANGE || end != t.c_str() + t.size() || !std::isfinite(x)) return false;
  *v = x;
  return true;
}

}  // namespace

std::string validate(const Csr& m) {
  std::ostringstream os;
  if (m.rows < 1 || m.cols < 1) {
    os << "rows = " << m.rows << ", cols = " << m.cols << ": both must be >= 1";
    return os.str();
  }
  if (m.row_ptr.size() != static_cast<size_t>(m.rows) + 1) return "row_ptr does not have rows + 1 entries";
  if (m.values.size() != m.col_idx.size()) return "values and col_idx differ in length";
  if (m.row_ptr[0] != 0) return "row_ptr[0] is not 0";
  for (int32_t r = 0; r < m.rows; ++r) {
    if (m.row_ptr[r + 1] < m.row_ptr[r]) {
      os << "row_ptr decreases at row " << r;
      return os.str();
    }
  }
  if (m.row_ptr[m.rows] != m.nnz()) {
    os << "row_ptr[rows] = " << m.row_ptr[m.rows] << " but nnz = " << m.nnz();
    return os.str();
  }
  for (size_t e = 0; e < m.col_idx.size(); ++e) {
    if (m.col_idx[e] < 0 || m.col_idx[e] >= m.cols) {
      os << "col_idx[" << e << "] = " << m.col_idx[e] << " is outside [0, " << m.cols << ")";
      return os.str();
    }
  }
  return "";
}

Csr laplacian_2d(int32_t nx, int32_t ny) {
  require(nx >= 1 && ny >= 1 && int64_t{nx} * ny <= kMaxNnz / 5, "grid must be >= 1 x 1 and fit");
  const int32_t n = nx * ny;
  Csr m;
  m.rows = m.cols = n;
  m.row_ptr.assign(static_cast<size_t>(n) + 1, 0);
  m.col_idx.reserve(static_cast<size_t>(n) * 5);
  m.values.reserve(static_cast<size_t>(n) * 5);
  auto add = [&](int32_t c, float v) {
    m.col_idx.push_back(c);
    m.values.push_back(v);
  };
  for (int32_t y = 0; y < ny; ++y) {
    for (int32_t x = 0; x < nx; ++x) {
      const int32_t r = y * nx + x;
      if (y > 0) add(r - nx, -1.0f);
      if (x > 0) add(r - 1, -1.0f);
      add(r, 4.0f);
      if (x + 1 < nx) add(r + 1, -1.0f);
      if (y + 1 < ny) add(r + nx, -1.0f);
      m.row_ptr[r + 1] = static_cast<int32_t>(m.col_idx.size());
    }
  }
  return m;
}

Csr uniform_random(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len, uint64_t seed) {
  return uniform_impl(rows, cols, min_len, max_len, 0.0, seed);
}

Csr power_law(int32_t rows, int32_t cols, double alpha, int32_t min_len, int32_t max_len,
              uint64_t seed) {
  check_shape(rows, cols);
  check_lengths(cols, min_len, max_len);
  require(min_len >= 1 && alpha > 1.0 && alpha <= 4.0, "need min_len >= 1 and alpha in (1, 4]");
  Rng rng(seed);
  std::vector<int32_t> lengths(rows);
  for (int32_t r = 0; r < rows; ++r) {
    const double u = 1.0 - rng.unit();  // (0, 1]
    const double len = min_len * std::pow(u, -1.0 / (alpha - 1.0));
    lengths[r] = len >= max_len ? max_len : static_cast<int32_t>(len);
  }
  return build(rows, cols, lengths, seed ^ 0xB0Bu,
               [&](int32_t r, Rng& g, int32_t* out) { distinct_sorted(cols, lengths[r], g, out); });
}

Csr with_empty_rows(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len,
                    double empty_fraction, uint64_t seed) {
  require(empty_fraction > 0 && empty_fraction < 1, "empty_fraction must be in (0, 1)");
  return uniform_impl(rows, cols, min_len, max_len, empty_fraction, seed);
}

Csr one_dense_row(int32_t rows, int32_t cols, int32_t min_len, int32_t max_len, int32_t dense_row,
                  int32_t dense_len, uint64_t seed) {
  check_shape(rows, cols);
  check_lengths(cols, min_len, max_len);
  require(dense_row >= 0 && dense_row < rows, "dense_row must be a row");
  require(dense_len >= 1 && dense_len <= cols, "dense_len must be in [1, cols]");
  Rng rng(seed);
  std::vector<int32_t> lengths(rows);
  for (int32_t r = 0; r < rows; ++r) lengths[r] = min_len + rng.below(int64_t{max_len} - min_len + 1);
  lengths[dense_row] = dense_len;
  return build(rows, cols, lengths, seed ^ 0xDE5u,
               [&](int32_t r, Rng& g, int32_t* out) { distinct_sorted(cols, lengths[r], g, out); });
}

Csr single_row(int32_t cols, int32_t len, uint64_t seed) {
  check_shape(1, cols);
  check_lengths(cols, len, len);
  return uniform_random(1, cols, len, len, seed);
}

Csr no_entries(int32_t rows, int32_t cols) {
  check_shape(rows, cols);
  Csr m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  return m;
}

Csr shuffled_within_rows(const Csr& m, uint64_t seed) {
  Csr out = m;
  Rng rng(seed);
  for (int32_t r = 0; r < m.rows; ++r) {
    const int32_t lo = m.row_ptr[r], len = m.row_length(r);
    for (int32_t i = len - 1; i > 0; --i) {  // Fisher-Yates
      const int32_t j = rng.below(i + 1);
      std::swap(out.col_idx[lo + i], out.col_idx[lo + j]);
      std::swap(out.values[lo + i], out.values[lo + j]);
    }
  }
  return out;
}

Csr with_duplicates(const Csr& m, double fraction, uint64_t seed) {
  require(fraction > 0 && fraction <= 1, "fraction must be in (0, 1]");
  Rng rng(seed);
  Csr out;
  out.rows = m.rows;
  out.cols = m.cols;
  out.row_ptr.assign(static_cast<size_t>(m.rows) + 1, 0);
  bool any = false;
  for (int32_t r = 0; r < m.rows; ++r) {
    std::vector<std::pair<int32_t, float>> row;
    for (int32_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e) {
      row.emplace_back(m.col_idx[e], m.values[e]);
    }
    const size_t original = row.size();
    for (size_t e = 0; e < original; ++e) {
      if (rng.unit() < fraction || (!any && e == 0)) {  // at least one duplicate in the matrix
        any = true;
        row.push_back(row[e]);
        std::swap(row.back(), row[rng.below(static_cast<int64_t>(row.size()))]);
      }
    }
    require(static_cast<int64_t>(out.col_idx.size()) + static_cast<int64_t>(row.size()) <= kMaxNnz,
            "more than 2^31 - 1 entries");
    for (const auto& [c, v] : row) {
      out.col_idx.push_back(c);
      out.values.push_back(v);
    }
    out.row_ptr[r + 1] = static_cast<int32_t>(out.col_idx.size());
  }
  return out;
}

Csr read_matrix_market(std::istream& in, const std::string& source) {
  int64_t line_no = 0;
  std::string line;
  auto fail = [&](int64_t at, const std::string& what) -> MatrixMarketError {
    std::ostringstream os;
    os << source << ":" << at << ": " << what;
    return MatrixMarketError(os.str());
  };

  // The banner.
  if (!std::getline(in, line)) throw fail(1, "empty file: expected a %%MatrixMarket banner");
  ++line_no;
  const std::vector<std::string> banner = split(line);
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket") {
    throw fail(line_no, "expected the banner '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  }
  if (banner.size() != 5) {
    throw fail(line_no, "the banner needs 4 words after %%MatrixMarket (object, format, field, "
                        "symmetry), found " + std::to_string(banner.size() - 1));
  }
  const std::string object = lower(banner[1]), format = lower(banner[2]), field = lower(banner[3]),
                    symmetry = lower(banner[4]);
  if (object != "matrix") throw fail(line_no, "unsupported object '" + banner[1] + "' (only 'matrix')");
  if (format != "coordinate") {
    throw fail(line_no, "unsupported format '" + banner[2] + "': only 'coordinate' (sparse) files, "
                        "not 'array' (dense)");
  }
  if (field != "real" && field != "integer" && field != "pattern") {
    throw fail(line_no, "unsupported field '" + banner[3] + "': real, integer or pattern");
  }
  if (symmetry != "general" && symmetry != "symmetric") {
    throw fail(line_no, "unsupported symmetry '" + banner[4] + "': general or symmetric");
  }
  const bool pattern = field == "pattern", integer = field == "integer",
             symmetric = symmetry == "symmetric";

  // Comments, then the size line.
  std::vector<std::string> size;
  while (true) {
    if (!std::getline(in, line)) throw fail(line_no + 1, "truncated: the file ends before the size line");
    ++line_no;
    if (blank(line) || line[line.find_first_not_of(" \t")] == '%') continue;
    size = split(line);
    break;
  }
  int64_t rows = 0, cols = 0, entries = 0;
  if (size.size() != 3 || !parse_int(size[0], &rows) || !parse_int(size[1], &cols) ||
      !parse_int(size[2], &entries)) {
    throw fail(line_no, "expected the size line 'rows cols entries' (three integers), found '" + line + "'");
  }
  if (rows < 1 || cols < 1 || rows > kMaxNnz || cols > kMaxNnz) {
    throw fail(line_no, "rows and cols must be in [1, 2^31 - 1], found " + std::to_string(rows) +
                            " x " + std::to_string(cols));
  }
  if (entries < 0 || entries > kMaxNnz) {
    throw fail(line_no, "the entry count must be in [0, 2^31 - 1], found " + std::to_string(entries));
  }
  if (symmetric && rows != cols) throw fail(line_no, "a symmetric matrix must be square");

  struct Entry {
    int32_t row, col;
    float value;
  };
  std::vector<Entry> list;
  list.reserve(static_cast<size_t>(std::min<int64_t>(entries, int64_t{1} << 24)));
  const size_t want = pattern ? 2 : 3;
  int64_t read = 0;
  int64_t expanded = 0;
  while (read < entries) {
    if (!std::getline(in, line)) {
      throw fail(line_no + 1, "truncated: the size line promises " + std::to_string(entries) +
                                  " entries, the file ends after " + std::to_string(read));
    }
    ++line_no;
    if (blank(line)) continue;
    const std::vector<std::string> t = split(line);
    if (t[0][0] == '%') continue;
    if (t.size() != want) {
      throw fail(line_no, "an entry of a " + field + " file is " + std::to_string(want) +
                              " fields ('i j" + (pattern ? "" : " value") + "'), found " +
                              std::to_string(t.size()));
    }
    int64_t i = 0, j = 0;
    if (!parse_int(t[0], &i)) throw fail(line_no, "row index '" + t[0] + "' is not an integer");
    if (!parse_int(t[1], &j)) throw fail(line_no, "column index '" + t[1] + "' is not an integer");
    if (i < 1 || i > rows) {
      throw fail(line_no, "row index " + t[0] + " is outside 1.." + std::to_string(rows) +
                              " (indices are 1-based)");
    }
    if (j < 1 || j > cols) {
      throw fail(line_no, "column index " + t[1] + " is outside 1.." + std::to_string(cols) +
                              " (indices are 1-based)");
    }
    double v = 1.0;
    if (!pattern) {
      if (integer) {
        int64_t iv = 0;
        if (!parse_int(t[2], &iv)) throw fail(line_no, "value '" + t[2] + "' is not an integer");
        v = static_cast<double>(iv);
      } else if (!parse_real(t[2], &v)) {
        throw fail(line_no, "value '" + t[2] + "' is not a finite number");
      }
    }
    if (symmetric && j > i) {
      throw fail(line_no, "a symmetric file lists the lower triangle only (row >= column), found "
                          "row " + t[0] + ", column " + t[1]);
    }
    list.push_back({static_cast<int32_t>(i - 1), static_cast<int32_t>(j - 1), static_cast<float>(v)});
    expanded += (symmetric && i != j) ? 2 : 1;
    if (expanded > kMaxNnz) throw fail(line_no, "more than 2^31 - 1 entries after expansion");
    ++read;
  }
  while (std::getline(in, line)) {
    ++line_no;
    if (blank(line) || line[line.find_first_not_of(" \t")] == '%') continue;
    throw fail(line_no, "more entries than the " + std::to_string(entries) +
                            " the size line promises");
  }

  Csr m;
  m.rows = static_cast<int32_t>(rows);
  m.cols = static_cast<int32_t>(cols);
  m.row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  for (const Entry& e : list) {
    ++m.row_ptr[e.row + 1];
    if (symmetric && e.row != e.col) ++m.row_ptr[e.col + 1];
  }
  for (int64_t r = 0; r < rows; ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  m.col_idx.resize(static_cast<size_t>(expanded));
  m.values.resize(static_cast<size_t>(expanded));
  std::vector<int32_t> next(m.row_ptr.begin(), m.row_ptr.end() - 1);
  for (const Entry& e : list) {
    int32_t at = next[e.row]++;
    m.col_idx[at] = e.col;
    m.values[at] = e.value;
    if (symmetric && e.row != e.col) {
      at = next[e.col]++;
      m.col_idx[at] = e.row;
      m.values[at] = e.value;
    }
  }
  return m;
}

Csr read_matrix_market_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw MatrixMarketError(path + ": cannot open the file");
  return read_matrix_market(in, path);
}

}  // namespace labkit::ops::spmv
