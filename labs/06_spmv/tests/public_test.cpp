// Lab 06 public tests: every version of spmv.h on the generated matrices, against a CPU
// reference in double (per row: within 2 * len * 2^-24 * sum|a x|; empty rows exactly 0).
// Fixed seeds: a failure repeats exactly.
//   ./build/student/labs/06_spmv/06_spmv_test --gtest_filter='*Public*'
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cases.hpp"
#include "labkit/gpu.hpp"

namespace {

// Each matrix is the case of one idea: see cases.hpp for the sizes.
const std::vector<std::string> kPublicMatrices = {
    "laplacian_31x17",  // the stencil: 3-5 entries per row
    "uniform_len8to24",
    "uniform_len32",    // exactly a warp per row
    "rect_tall",        // rows > cols, some rows empty
    "rect_wide",        // rows < cols, rows of up to 2000 entries
    "powerlaw",         // most rows short, a few very long
    "empty_rows",       // 30% empty, the first and the last among them
    "dense_row",        // one row of 4000 among rows of 1-8
    "single_row",
    "single_entry",     // 1 x 1
    "no_entries",       // nnz = 0: y = 0
    "unsorted",         // columns in any order within a row
    "duplicates",       // repeated (row, col) entries add up
};

class SpmvPublic : public ::testing::TestWithParam<lab06::Param> {};

TEST_P(SpmvPublic, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, matrix] = GetParam();
  LABKIT_EXPECT_OK(lab06::sp::check(variant, lab06::make_case(matrix, 6007)));
}

INSTANTIATE_TEST_SUITE_P(Matrices, SpmvPublic,
                         ::testing::Combine(::testing::ValuesIn(lab06::kVariants),
                                            ::testing::ValuesIn(kPublicMatrices)),
                         lab06::param_name);

class SpmvPublicStream : public ::testing::TestWithParam<std::string> {};

// Recorded into a CUDA graph from its stream and replayed: every launch (and memset) must go
// onto the stream it is given.
TEST_P(SpmvPublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  lab06::sp::Case c = lab06::make_case("powerlaw", 4242);
  c.capture = true;
  LABKIT_EXPECT_OK(lab06::sp::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, SpmvPublicStream, ::testing::ValuesIn(lab06::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
