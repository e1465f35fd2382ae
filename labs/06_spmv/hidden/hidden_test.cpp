// Lab 06 hidden tests (dropped from the student release), seeded from the judge's seed.
//
// What each matrix is for (cases.hpp has the sizes):
//   laplacian_300x301, uniform_len1to3: short rows, many of them (scalar's home ground; a
//     warp per row wastes most lanes)
//   uniform_len33to300, uniform_len100to400, powerlaw_large, rect_wide: rows longer than a
//     warp (a vector kernel that handles only the first 32 entries of a row is wrong on
//     every one of them)
//   empty_rows, mostly_empty, no_entries: y must be written as 0 for empty rows (a kernel
//     that returns early leaves the NaN poison)
//   dense_last_row, single_short_row, single_entry: the last row is non-empty, so its end,
//     row_ptr[rows] = nnz, matters (a kernel that stops a row early, or treats the last row
//     as empty, or never runs the last row, is wrong there)
//   unsorted, duplicates: any column order, repeated entries add up
//   long_rows_unsorted_dups: both in rows of 10^4 to 10^5 entries (the paths for long rows:
//     a block or several per row, bins, splits)
//   rows_past_2p26: 2^26 + 2^20 rows: a warp-per-row thread number computed in int wraps
//   uniform_2p22_len32: 2^27 entries (the benchmark's size)
//     (both drawn on the GPU: tests/cases.hpp, device_matrices)
//   nnz_max (SpmvHiddenNnzMax): nnz = 2^31 - 1, drawn on the GPU: 32-bit entry loops wrap
//   laplacian_bench, denserow_bench: the benchmark's Laplacian and dense-row classes at its
//     size, drawn from the seed (grid size, dense row's place), columns in random order
//   repeat: three calls on the same buffers, fresh values, x and workspace garbage each
//   matrix market: every *.mtx in hidden/matrices/ (the instructor's real matrices)
// Every matrix here has rows whose x[row] differs from x[col] and values whose mean is not 0,
// so the lecture notes' swapped indices (x[el] * data[col_index[el]], x[row]) are wrong on all.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "labkit/gpu.hpp"
#include "labkit/random.hpp"
#include "tests/cases.hpp"

namespace {

// A seed per matrix name, stable across compilers (FNV-1a), mixed with the judge's seed.
uint64_t seed_for(const std::string& name) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return labkit::mix_seed(labkit::test_seed(), h);
}

const std::vector<std::string> kHiddenMatrices = {
    "laplacian_300x301", "uniform_len1to3", "uniform_len33to300", "uniform_len100to400",
    "powerlaw_large",    "rect_tall",       "rect_wide",          "empty_rows",
    "mostly_empty",      "no_entries",      "dense_last_row",     "single_short_row",
    "single_entry",      "unsorted",        "duplicates",
};

class SpmvHidden : public ::testing::TestWithParam<lab06::Param> {};

TEST_P(SpmvHidden, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, matrix] = GetParam();
  LABKIT_EXPECT_OK(lab06::sp::check(variant, lab06::make_case(matrix, seed_for(matrix))));
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmvHidden,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::ValuesIn(kHiddenMatrices)),
                         lab06::param_name);

// The large ones: the matrix outer, so that each is made once for the three versions.
class SpmvHiddenLarge : public ::testing::TestWithParam<lab06::Param> {};

TEST_P(SpmvHiddenLarge, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, matrix] = GetParam();
  LABKIT_EXPECT_OK(lab06::sp::check(variant, lab06::make_case(matrix, seed_for(matrix))));
}

INSTANTIATE_TEST_SUITE_P(LongRowsUnsortedDups, SpmvHiddenLarge,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::Values(std::string("long_rows_unsorted_dups"))),
                         lab06::param_name);
INSTANTIATE_TEST_SUITE_P(Rows2p26, SpmvHiddenLarge,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::Values(std::string("rows_past_2p26"))),
                         lab06::param_name);
INSTANTIATE_TEST_SUITE_P(Nnz2p27, SpmvHiddenLarge,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::Values(std::string("uniform_2p22_len32"))),
                         lab06::param_name);
INSTANTIATE_TEST_SUITE_P(BenchScaleLaplacian, SpmvHiddenLarge,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::Values(std::string("laplacian_bench"))),
                         lab06::param_name);
INSTANTIATE_TEST_SUITE_P(BenchScaleDenseRow, SpmvHiddenLarge,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::Values(std::string("denserow_bench"))),
                         lab06::param_name);

// nnz = 2^31 - 1, the most the interface allows (16 GiB of col_idx and values, drawn on the
// GPU): 2^21 + 1 rows of about 1024 entries, columns uniform in any order, the last row ending
// at entry 2^31 - 2. An entry index stepped in an int (e += 32) wraps there, and so does a
// thread number per entry.
class SpmvHiddenNnzMax : public ::testing::TestWithParam<std::string> {};

TEST_P(SpmvHiddenNnzMax, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  lab06::sp::Case c;
  c.device = {(1 << 21) + 1, (1 << 20) + 7, lab06::sp::kMaxNnz};
  c.name = "2097153 x 1048583, nnz = 2^31 - 1 (about 1024 per row, columns in any order)";
  c.seed = seed_for("nnz_max");
  c.workspace_bytes = spmv_workspace_bytes(static_cast<size_t>(c.device.rows),
                                           static_cast<size_t>(c.device.nnz));
  LABKIT_EXPECT_OK(lab06::sp::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, SpmvHiddenNnzMax, ::testing::ValuesIn(lab06::kVariants),
                         [](const auto& info) { return info.param; });

class SpmvHiddenRepeat : public ::testing::TestWithParam<lab06::Param> {};

// y poisoned and the workspace refilled with garbage before each of the three calls.
TEST_P(SpmvHiddenRepeat, FreshInputsAndGarbageWorkspace) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, matrix] = GetParam();
  LABKIT_EXPECT_OK(lab06::sp::check(variant, lab06::make_case(matrix, seed_for(matrix) + 1, 3)));
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmvHiddenRepeat,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::Values(std::string("powerlaw"), std::string("empty_rows"))),
                         lab06::param_name);

// ---- real matrices: every *.mtx file in hidden/matrices/ (LAB06_MATRIX_DIR, set by CMake).
std::vector<std::string> matrix_files() {
  std::vector<std::string> out;
#ifdef LAB06_MATRIX_DIR
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(LAB06_MATRIX_DIR, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".mtx") {
      out.push_back(entry.path().string());
    }
  }
#endif
  std::sort(out.begin(), out.end());
  return out;
}

// A test name from a file name: letters, digits and '_' only.
std::string test_name(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string(), out;
  for (char ch : stem) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out.empty() ? std::string("matrix") : out;
}

using FileParam = std::tuple<std::string, std::string>;  // variant, path

class SpmvHiddenMatrixMarket : public ::testing::TestWithParam<FileParam> {};

TEST_P(SpmvHiddenMatrixMarket, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, path] = GetParam();
  // A file that does not read is the instructor's problem, not the student's: it is reported
  // as an error of the test itself, with the reader's message.
  std::shared_ptr<const lab06::sp::Csr> m;
  try {
    m = std::make_shared<const lab06::sp::Csr>(lab06::sp::read_matrix_market_file(path));
  } catch (const lab06::sp::MatrixMarketError& e) {
    FAIL() << "the instructor's matrix file does not read (not your code's fault): " << e.what();
  }
  const std::string name = std::filesystem::path(path).filename().string();
  LABKIT_EXPECT_OK(lab06::sp::check(variant, lab06::make_case(m, name, seed_for(name))));
}

INSTANTIATE_TEST_SUITE_P(Files, SpmvHiddenMatrixMarket,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::ValuesIn(matrix_files())),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + test_name(std::get<1>(info.param));
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SpmvHiddenMatrixMarket);

}  // namespace
