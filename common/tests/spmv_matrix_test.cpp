// CPU tests of the spmv family's matrices (no GPU needed): the CSR generators keep their
// promises, and the Matrix Market reader reads good files and rejects bad ones with a message
// that names the line. The files are written by the tests themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

#include "labkit/device_buffer.hpp"
#include "labkit/ops/spmv.hpp"
#include "labkit/ops/spmv_matrix.hpp"

namespace {

namespace sp = labkit::ops::spmv;

// ---------------------------------------------------------------------------------- helpers

::testing::AssertionResult well_formed(const sp::Csr& m) {
  const std::string problem = sp::validate(m);
  if (problem.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << problem;
}

// Rows whose columns are strictly increasing (sorted and distinct).
::testing::AssertionResult rows_sorted_distinct(const sp::Csr& m) {
  for (int32_t r = 0; r < m.rows; ++r) {
    for (int32_t e = m.row_ptr[r] + 1; e < m.row_ptr[r + 1]; ++e) {
      if (m.col_idx[e] <= m.col_idx[e - 1]) {
        return ::testing::AssertionFailure() << "row " << r << ": col_idx[" << e << "] = "
                                             << m.col_idx[e] << " after " << m.col_idx[e - 1];
      }
    }
  }
  return ::testing::AssertionSuccess();
}

std::map<int32_t, int> row_multiset(const sp::Csr& m, int32_t r) {
  std::map<int32_t, int> out;
  for (int32_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e) ++out[m.col_idx[e]];
  return out;
}

// A file written for the test, removed after it.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    std::string pattern = ::testing::TempDir() + "spmv_mm_XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    path_ = name.data();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

sp::Csr read_text(const std::string& text) {
  TempFile f(text);
  return sp::read_matrix_market_file(f.path());
}

// The reader's message for `text`, "" when it did not throw.
std::string reader_error(const std::string& text) {
  TempFile f(text);
  try {
    sp::read_matrix_market_file(f.path());
  } catch (const sp::MatrixMarketError& e) {
    const std::string message = e.what();
    // Every message names the file.
    EXPECT_NE(message.find(f.path()), std::string::npos) << message;
    return message.substr(std::min(message.size(), f.path().size()));
  }
  return "";
}

// ----------------------------------------------------------------------------- the reader

TEST(SpmvMatrixMarket, ReadsGeneralRealWithComments) {
  const sp::Csr m = read_text(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "\n"
      "3 4 5\n"
      "1 1 1.5\n"
      "3 4 -2e-1\n"
      "% a comment between entries\n"
      "1 3 2\n"
      "2 2 3.25\n"
      "3 1 4\n");
  ASSERT_TRUE(well_formed(m));
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_EQ(m.nnz(), 5);
  EXPECT_EQ(m.row_ptr, (std::vector<int32_t>{0, 2, 3, 5}));
  // File order within a row (the reader does not sort).
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{0, 2, 1, 3, 0}));
  EXPECT_EQ(m.values, (std::vector<float>{1.5f, 2.0f, 3.25f, -0.2f, 4.0f}));
}

TEST(SpmvMatrixMarket, BannerWordsAreCaseInsensitive) {
  const sp::Csr m = read_text("%%MatrixMarket MATRIX Coordinate Integer GENERAL\n2 2 1\n2 1 -7\n");
  EXPECT_EQ(m.nnz(), 1);
  EXPECT_EQ(m.values, (std::vector<float>{-7.0f}));
}

TEST(SpmvMatrixMarket, ExpandsSymmetric) {
  const sp::Csr m = read_text(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "3 3 4\n"
      "1 1 2\n"
      "2 1 -1\n"
      "3 2 -3\n"
      "3 3 5\n");
  ASSERT_TRUE(well_formed(m));
  EXPECT_EQ(m.nnz(), 6);  // two diagonal entries, two off-diagonal ones mirrored
  EXPECT_EQ(m.row_ptr, (std::vector<int32_t>{0, 2, 4, 6}));
  // Row 0: (0,0)=2, mirror (0,1)=-1; row 1: (1,0)=-1, mirror (1,2)=-3; row 2: (2,1)=-3, (2,2)=5.
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{0, 1, 0, 2, 1, 2}));
  EXPECT_EQ(m.values, (std::vector<float>{2, -1, -1, -3, -3, 5}));
}

TEST(SpmvMatrixMarket, PatternGetsOnes) {
  const sp::Csr m = read_text(
      "%%MatrixMarket matrix coordinate pattern symmetric\n4 4 2\n1 1\n4 2\n");
  ASSERT_TRUE(well_formed(m));
  EXPECT_EQ(m.nnz(), 3);
  EXPECT_EQ(m.row_ptr, (std::vector<int32_t>{0, 1, 2, 2, 3}));
  EXPECT_EQ(m.col_idx, (std::vector<int32_t>{0, 3, 1}));
  EXPECT_EQ(m.values, (std::vector<float>{1, 1, 1}));
}

TEST(SpmvMatrixMarket, KeepsDuplicatesAndEmptyMatrices) {
  const sp::Csr d = read_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n1 2 3\n");
  EXPECT_EQ(d.nnz(), 2);
  EXPECT_EQ(d.col_idx, (std::vector<int32_t>{1, 1}));
  const sp::Csr z = read_text("%%MatrixMarket matrix coordinate real general\n5 3 0\n");
  ASSERT_TRUE(well_formed(z));
  EXPECT_EQ(z.nnz(), 0);
  EXPECT_EQ(z.row_ptr, (std::vector<int32_t>(6, 0)));
}

struct BadFile {
  const char* name;
  const char* text;
  const char* line;    // "path:<line>:" prefix the message must carry
  const char* phrase;  // and a phrase of the explanation
};

class SpmvMatrixMarketRejects : public ::testing::TestWithParam<BadFile> {};

TEST_P(SpmvMatrixMarketRejects, NamesTheLineAndTheProblem) {
  const BadFile& b = GetParam();
  const std::string message = reader_error(b.text);
  ASSERT_FALSE(message.empty()) << b.name << ": the reader accepted it";
  EXPECT_EQ(message.rfind(b.line, 0), 0u) << "message: " << message;
  EXPECT_NE(message.find(b.phrase), std::string::npos) << "message: " << message;
}

const char kHead[] = "%%MatrixMarket matrix coordinate real general\n";

INSTANTIATE_TEST_SUITE_P(
    Files, SpmvMatrixMarketRejects,
    ::testing::Values(
        BadFile{"empty", "", ":1:", "empty file"},
        BadFile{"no_banner", "3 3 1\n1 1 1\n", ":1:", "expected the banner"},
        BadFile{"short_banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", ":1:", "needs 4 words"},
        BadFile{"vector_object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", ":1:", "unsupported object"},
        BadFile{"array_format", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", ":1:", "unsupported format 'array'"},
        BadFile{"complex_field", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", ":1:", "unsupported field 'complex'"},
        BadFile{"hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", ":1:", "unsupported symmetry 'hermitian'"},
        BadFile{"skew", "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", ":1:", "unsupported symmetry"},
        BadFile{"no_size_line", "%%MatrixMarket matrix coordinate real general\n% only a comment\n", ":3:", "before the size line"},
        BadFile{"size_not_numbers", "%%MatrixMarket matrix coordinate real general\n% c\nthree 3 1\n", ":3:", "three integers"},
        BadFile{"size_two_fields", "%%MatrixMarket matrix coordinate real general\n3 3\n", ":2:", "three integers"},
        BadFile{"zero_rows", "%%MatrixMarket matrix coordinate real general\n0 3 0\n", ":2:", "rows and cols must be in"},
        BadFile{"negative_entries", "%%MatrixMarket matrix coordinate real general\n3 3 -1\n", ":2:", "entry count"},
        BadFile{"row_zero", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n0 2 1\n", ":4:", "row index 0 is outside 1..3"},
        BadFile{"row_past_end", "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n", ":3:", "row index 4 is outside 1..3"},
        BadFile{"col_past_end", "%%MatrixMarket matrix coordinate real general\n3 2 1\n1 3 1\n", ":3:", "column index 3 is outside 1..2"},
        BadFile{"truncated", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 2\n", ":5:", "truncated: the size line promises 3 entries, the file ends after 2"},
        BadFile{"too_many", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 2\n", ":4:", "more entries than the 1"},
        BadFile{"value_not_number", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n", ":3:", "value 'abc' is not a finite number"},
        BadFile{"value_nan", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 nan\n", ":3:", "not a finite number"},
        BadFile{"index_not_integer", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1.5 1 1\n", ":3:", "row index '1.5' is not an integer"},
        BadFile{"integer_field_real_value", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 2.5\n", ":3:", "value '2.5' is not an integer"},
        BadFile{"missing_value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", ":3:", "3 fields"},
        BadFile{"pattern_with_value", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 5\n", ":3:", "2 fields"},
        BadFile{"symmetric_upper", "%%MatrixMarket matrix coordinate real symmetric\n3 3 1\n1 2 1\n", ":3:", "lower triangle only"},
        BadFile{"symmetric_not_square", "%%MatrixMarket matrix coordinate real symmetric\n3 2 0\n", ":2:", "must be square"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SpmvMatrixMarket, MissingFileIsAnError) {
  EXPECT_THROW(sp::read_matrix_market_file(::testing::TempDir() + "no_such_matrix.mtx"),
               sp::MatrixMarketError);
}

TEST(SpmvMatrixMarket, ReadsFromAStreamWithItsName) {
  std::istringstream in(std::string(kHead) + "2 2 1\n3 1 1\n");
  try {
    sp::read_matrix_market(in, "inline.mtx");
    FAIL() << "accepted an out-of-range row";
  } catch (const sp::MatrixMarketError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("inline.mtx:3: row index 3", 0), 0u) << e.what();
  }
}

// ------------------------------------------------------------------------------ generators

TEST(SpmvGenerators, Laplacian2dIsTheFivePointStencil) {
  const int32_t nx = 7, ny = 5;
  const sp::Csr m = sp::laplacian_2d(nx, ny);
  ASSERT_TRUE(well_formed(m));
  ASSERT_TRUE(rows_sorted_distinct(m));
  EXPECT_EQ(m.rows, nx * ny);
  EXPECT_EQ(m.cols, nx * ny);
  // 5 per interior point, minus one per missing neighbour: 5n - 2nx - 2ny.
  EXPECT_EQ(m.nnz(), 5 * nx * ny - 2 * nx - 2 * ny);
  for (int32_t y = 0; y < ny; ++y) {
    for (int32_t x = 0; x < nx; ++x) {
      const int32_t r = y * nx + x;
      const int expected = 5 - (x == 0) - (x == nx - 1) - (y == 0) - (y == ny - 1);
      ASSERT_EQ(m.row_length(r), expected) << "grid point (" << x << ", " << y << ")";
      float sum = 0;
      bool diagonal = false;
      for (int32_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e) {
        sum += m.values[e];
        if (m.col_idx[e] == r) diagonal = m.values[e] == 4.0f;
        const int32_t c = m.col_idx[e];
        const int32_t dx = c % nx - x, dy = c / nx - y;
        EXPECT_EQ(std::abs(dx) + std::abs(dy) <= 1, true) << "row " << r << " col " << c;
      }
      EXPECT_TRUE(diagonal) << "row " << r;
      EXPECT_EQ(sum, 4.0f - (expected - 1)) << "row " << r;
    }
  }
  EXPECT_EQ(sp::laplacian_2d(1, 1).nnz(), 1);
}

TEST(SpmvGenerators, UniformFixedAndRandomLengths) {
  const sp::Csr fixed = sp::uniform_random(1000, 500, 32, 32, 11);
  ASSERT_TRUE(well_formed(fixed));
  ASSERT_TRUE(rows_sorted_distinct(fixed));
  EXPECT_EQ(fixed.nnz(), 1000 * 32);
  for (int32_t r = 0; r < fixed.rows; ++r) ASSERT_EQ(fixed.row_length(r), 32) << "row " << r;

  const sp::Csr ranged = sp::uniform_random(2000, 300, 3, 40, 12);
  ASSERT_TRUE(well_formed(ranged));
  ASSERT_TRUE(rows_sorted_distinct(ranged));
  int32_t lo = 1 << 30, hi = 0;
  for (int32_t r = 0; r < ranged.rows; ++r) {
    lo = std::min(lo, ranged.row_length(r));
    hi = std::max(hi, ranged.row_length(r));
  }
  EXPECT_EQ(lo, 3);   // 2000 draws of 38 values: both ends come up
  EXPECT_EQ(hi, 40);
  // Columns spread over the whole range.
  const auto [cmin, cmax] = std::minmax_element(ranged.col_idx.begin(), ranged.col_idx.end());
  EXPECT_EQ(*cmin, 0);
  EXPECT_EQ(*cmax, 299);
}

TEST(SpmvGenerators, RowsAsLongAsColsAreEveryColumn) {
  const sp::Csr m = sp::uniform_random(10, 64, 64, 64, 3);
  ASSERT_TRUE(rows_sorted_distinct(m));
  for (int32_t e = 0; e < 64; ++e) EXPECT_EQ(m.col_idx[e], e);
}

TEST(SpmvGenerators, Rectangular) {
  for (auto [rows, cols] : {std::pair<int32_t, int32_t>{1000, 37}, {37, 1000}}) {
    const sp::Csr m = sp::uniform_random(rows, cols, 0, 20, 5);
    ASSERT_TRUE(well_formed(m)) << rows << " x " << cols;
    ASSERT_TRUE(rows_sorted_distinct(m));
    EXPECT_EQ(m.rows, rows);
    EXPECT_EQ(m.cols, cols);
    EXPECT_EQ(static_cast<int32_t>(m.row_ptr.size()), rows + 1);
  }
}

TEST(SpmvGenerators, PowerLawHasAHeavyTail) {
  const int32_t rows = 20000;
  const sp::Csr m = sp::power_law(rows, 50000, 2.0, 2, 20000, 9);
  ASSERT_TRUE(well_formed(m));
  ASSERT_TRUE(rows_sorted_distinct(m));
  std::vector<int32_t> len(rows);
  for (int32_t r = 0; r < rows; ++r) len[r] = m.row_length(r);
  std::sort(len.begin(), len.end());
  EXPECT_GE(len.front(), 2);
  EXPECT_LE(len.back(), 20000);
  const int32_t median = len[rows / 2];
  // alpha = 2: P(len >= k) = 2 / k, so the median is about 4 and the longest of 20000 rows is
  // in the thousands.
  EXPECT_LE(median, 8);
  EXPECT_GE(len.back(), 100 * median);
  EXPECT_GT(std::count_if(len.begin(), len.end(), [](int32_t l) { return l > 32; }), rows / 100);
}

TEST(SpmvGenerators, EmptyRowsIncludeBothEnds) {
  const sp::Csr m = sp::with_empty_rows(5000, 800, 1, 30, 0.3, 21);
  ASSERT_TRUE(well_formed(m));
  ASSERT_TRUE(rows_sorted_distinct(m));
  EXPECT_EQ(m.row_length(0), 0);
  EXPECT_EQ(m.row_length(m.rows - 1), 0);
  int empty = 0;
  for (int32_t r = 0; r < m.rows; ++r) empty += m.row_length(r) == 0;
  EXPECT_GT(empty, 5000 * 0.25);
  EXPECT_LT(empty, 5000 * 0.35);
}

TEST(SpmvGenerators, OneDenseRowAmongShortOnes) {
  const sp::Csr m = sp::one_dense_row(3000, 2500, 1, 8, 1234, 2500, 4);
  ASSERT_TRUE(well_formed(m));
  ASSERT_TRUE(rows_sorted_distinct(m));
  for (int32_t r = 0; r < m.rows; ++r) {
    if (r == 1234) {
      ASSERT_EQ(m.row_length(r), 2500);
      EXPECT_EQ(m.col_idx[m.row_ptr[r]], 0);
      EXPECT_EQ(m.col_idx[m.row_ptr[r + 1] - 1], 2499);
    } else {
      ASSERT_GE(m.row_length(r), 1) << "row " << r;
      ASSERT_LE(m.row_length(r), 8) << "row " << r;
    }
  }
}

TEST(SpmvGenerators, SingleRowAndNoEntries) {
  const sp::Csr one = sp::single_row(10000, 777, 8);
  ASSERT_TRUE(well_formed(one));
  ASSERT_TRUE(rows_sorted_distinct(one));
  EXPECT_EQ(one.rows, 1);
  EXPECT_EQ(one.nnz(), 777);
  const sp::Csr none = sp::no_entries(300, 200);
  ASSERT_TRUE(well_formed(none));
  EXPECT_EQ(none.nnz(), 0);
  EXPECT_EQ(none.row_ptr, std::vector<int32_t>(301, 0));
}

TEST(SpmvGenerators, ShuffledKeepsEachRowsEntries) {
  const sp::Csr base = sp::uniform_random(500, 400, 5, 50, 31);
  const sp::Csr m = sp::shuffled_within_rows(base, 32);
  ASSERT_TRUE(well_formed(m));
  EXPECT_EQ(m.row_ptr, base.row_ptr);
  int unsorted = 0;
  for (int32_t r = 0; r < m.rows; ++r) {
    ASSERT_EQ(row_multiset(m, r), row_multiset(base, r)) << "row " << r;
    unsorted += !std::is_sorted(m.col_idx.begin() + m.row_ptr[r], m.col_idx.begin() + m.row_ptr[r + 1]);
  }
  EXPECT_GT(unsorted, 450);  // rows of 5+ entries in a random order are almost never sorted
  EXPECT_FALSE(rows_sorted_distinct(m));
}

TEST(SpmvGenerators, DuplicatesRepeatEntriesOfTheirRow) {
  const sp::Csr base = sp::uniform_random(400, 300, 2, 20, 41);
  const sp::Csr m = sp::with_duplicates(base, 0.1, 42);
  ASSERT_TRUE(well_formed(m));
  EXPECT_GT(m.nnz(), base.nnz() + base.nnz() / 20);
  EXPECT_LT(m.nnz(), base.nnz() + base.nnz() / 5);
  int rows_with_repeats = 0;
  for (int32_t r = 0; r < m.rows; ++r) {
    const auto got = row_multiset(m, r), orig = row_multiset(base, r);
    bool repeat = false;
    for (const auto& [c, k] : got) {
      ASSERT_EQ(orig.count(c), 1u) << "row " << r << " gained column " << c;
      repeat |= k > 1;
    }
    ASSERT_EQ(got.size(), orig.size()) << "row " << r << " lost a column";
    rows_with_repeats += repeat;
  }
  EXPECT_GT(rows_with_repeats, 50);
  // A tiny fraction still gives at least one duplicate.
  EXPECT_GT(sp::with_duplicates(base, 1e-9, 43).nnz(), base.nnz());
}

TEST(SpmvGenerators, SameSeedSameMatrix) {
  EXPECT_EQ(sp::power_law(3000, 3000, 2.2, 1, 3000, 5).col_idx,
            sp::power_law(3000, 3000, 2.2, 1, 3000, 5).col_idx);
  EXPECT_NE(sp::uniform_random(300, 300, 8, 8, 5).col_idx,
            sp::uniform_random(300, 300, 8, 8, 6).col_idx);
  // Large enough to fill rows on several threads: still the same result.
  const sp::Csr a = sp::uniform_random(70000, 100000, 16, 16, 77);
  const sp::Csr b = sp::uniform_random(70000, 100000, 16, 16, 77);
  EXPECT_EQ(a.col_idx, b.col_idx);
}

TEST(SpmvGenerators, RefuseImpossibleArguments) {
  EXPECT_THROW(sp::uniform_random(10, 5, 1, 6, 1), std::invalid_argument);  // row > cols
  EXPECT_THROW(sp::uniform_random(0, 5, 1, 2, 1), std::invalid_argument);
  EXPECT_THROW(sp::uniform_random(10, 5, 3, 2, 1), std::invalid_argument);
  EXPECT_THROW(sp::one_dense_row(10, 5, 1, 2, 10, 5, 1), std::invalid_argument);
  EXPECT_THROW(sp::power_law(10, 5, 1.0, 1, 5, 1), std::invalid_argument);
  EXPECT_THROW(sp::no_entries(0, 1), std::invalid_argument);
}

TEST(SpmvGenerators, ValidateCatchesBrokenCsr) {
  sp::Csr m = sp::uniform_random(10, 10, 2, 2, 1);
  ASSERT_TRUE(well_formed(m));
  sp::Csr bad = m;
  bad.row_ptr[10] = 19;
  EXPECT_NE(sp::validate(bad).find("row_ptr[rows]"), std::string::npos);
  bad = m;
  bad.col_idx[3] = 10;
  EXPECT_NE(sp::validate(bad).find("col_idx[3]"), std::string::npos);
  bad = m;
  bad.row_ptr[4] = bad.row_ptr[5] + 1;
  EXPECT_NE(sp::validate(bad).find("decreases"), std::string::npos);
}

// ------------------------------------------------------- the judge's verify, without a GPU

// y computed in float from call c's inputs, as a kernel would; `max_per_row` < 0: every entry.
labkit::Bytes float_spmv(const labkit::CheckSpec& s, int c, int max_per_row = -1) {
  const auto& in = s.call.inputs[c];
  auto ints = [](const labkit::Bytes& b) { return reinterpret_cast<const int32_t*>(b.data()); };
  auto floats = [](const labkit::Bytes& b) { return reinterpret_cast<const float*>(b.data()); };
  const int32_t* row_ptr = ints(in[sp::Sig::kRowPtr]);
  const int32_t* col = ints(in[sp::Sig::kColIdx]);
  const float* val = floats(in[sp::Sig::kValues]);
  const float* x = floats(in[sp::Sig::kX]);
  const size_t rows = in[sp::Sig::kRowPtr].size() / 4 - 1;
  std::vector<float> y(rows);
  for (size_t r = 0; r < rows; ++r) {
    float sum = 0;
    for (int32_t e = row_ptr[r]; e < row_ptr[r + 1]; ++e) {
      if (max_per_row >= 0 && e - row_ptr[r] >= max_per_row) break;
      sum += val[e] * x[col[e]];
    }
    y[r] = sum;
  }
  labkit::Bytes out(rows * 4);
  std::memcpy(out.data(), y.data(), out.size());
  return out;
}

std::vector<labkit::Bytes> outputs_with_y(const labkit::CheckSpec& s, labkit::Bytes y) {
  std::vector<labkit::Bytes> out(s.call.buffers.size());
  out[sp::Sig::kY] = std::move(y);
  return out;
}

TEST(SpmvJudge, AcceptsAFloatKernelAndNamesTheRowLengthsOfABug) {
  sp::Case c;
  c.matrix = std::make_shared<const sp::Csr>(sp::with_empty_rows(3000, 2000, 1, 300, 0.2, 5));
  c.name = "test matrix";
  c.seed = 99;
  c.workspace_bytes = 1024;
  c.calls = 2;
  const labkit::CheckSpec s = sp::spec("v2_vector", c);
  ASSERT_EQ(s.call.inputs.size(), 2u);
  for (int call = 0; call < 2; ++call) {
    EXPECT_EQ(s.verify(call, outputs_with_y(s, float_spmv(s, call))).message, "")
        << "call " << call;
  }
  // Fresh values and x per call: call 0's y is wrong for call 1.
  EXPECT_NE(s.verify(1, outputs_with_y(s, float_spmv(s, 0))).message, "");
  // Only the first 32 entries of each row: wrong on the longer rows only.
  const std::string report = s.verify(0, outputs_with_y(s, float_spmv(s, 0, 32))).message;
  EXPECT_NE(report.find("rows of length 33-256: "), std::string::npos) << report;
  EXPECT_NE(report.find("rows of length 0: 0 of"), std::string::npos) << report;
  EXPECT_NE(report.find("rows of length 9-32: 0 of"), std::string::npos) << report;
  // The NaN poison left in the empty rows.
  labkit::Bytes y = float_spmv(s, 0);
  const sp::Csr& m = *c.matrix;
  for (int32_t r = 0; r < m.rows; ++r) {
    if (m.row_length(r) == 0) std::memcpy(y.data() + 4 * r, &labkit::kPoisonBits, 4);
  }
  const std::string empty = s.verify(0, outputs_with_y(s, y)).message;
  EXPECT_NE(empty.find("never written"), std::string::npos) << empty;
  EXPECT_NE(empty.find("rows of length 1-8: 0 of"), std::string::npos) << empty;
}

TEST(SpmvJudge, EmptyRowsMustBeExactlyZero) {
  sp::Case c;
  c.matrix = std::make_shared<const sp::Csr>(sp::no_entries(10, 10));
  c.name = "empty";
  const labkit::CheckSpec s = sp::spec("v1_scalar", c);
  labkit::Bytes y = float_spmv(s, 0);
  EXPECT_EQ(s.verify(0, outputs_with_y(s, y)).message, "");
  const float tiny = 1e-30f;
  std::memcpy(y.data() + 12, &tiny, 4);
  EXPECT_NE(s.verify(0, outputs_with_y(s, y)).message.find("y[3]"), std::string::npos);
}

}  // namespace
