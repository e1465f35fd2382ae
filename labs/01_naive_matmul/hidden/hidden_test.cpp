// Lab 01 hidden tests (dropped from the student release). Inputs come from the judge's seed,
// which the grader derives from the submission and sends after start-up (LABKIT_SEED replays
// it locally).
//
// What each shape is for:
//   primes and non-multiples: any block shape leaves partial tiles -> the bounds guard
//   M != N, tall and wide: a row/col mix-up is wrong (not just slow) off the diagonal
//   K = 1 and long K: off-by-one in the K loop, accumulator start value
//   repeated calls: fresh inputs every call, so nothing may be cached between calls
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "labkit/random.hpp"
#include "tests/shapes.hpp"

namespace {

using lab01::Shape;
namespace mm = labkit::ops::matmul;

constexpr Shape kHiddenShapes[] = {
    {2, 3, 5},        {97, 101, 103},  {257, 263, 269},  {31, 33, 17},     {33, 31, 65},
    {1, 1000, 1},     {1000, 1, 1},    {1, 1, 4099},     {500, 300, 1},    {7, 7, 2048},
    {20000, 3, 17},   {3, 20000, 17},  {4097, 2, 129},   {2, 4097, 129},   {1023, 1025, 511},
    {1000, 1000, 1000},
};

class MatmulHidden : public ::testing::TestWithParam<lab01::VariantShape> {};

TEST_P(MatmulHidden, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = labkit::mix_seed(labkit::test_seed(), 1000003u * s.M + 1009u * s.N + s.K);
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulHidden,
    ::testing::Combine(::testing::ValuesIn(lab01::kVariants), ::testing::ValuesIn(kHiddenShapes)),
    lab01::variant_shape_name);

class MatmulHiddenRepeat : public ::testing::TestWithParam<std::string> {};

// Three calls on one shape with the same buffers, fresh inputs each: a kernel that caches or
// reuses a previous result, or depends on what C held before, fails here.
TEST_P(MatmulHiddenRepeat, FreshInputsEveryCall) {
  LABKIT_REQUIRE_GPU();
  const uint64_t seed = labkit::mix_seed(labkit::test_seed(), 77);
  LABKIT_EXPECT_OK(mm::check(GetParam(), {300, 200, 100, seed, 3}));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulHiddenRepeat, ::testing::ValuesIn(lab01::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
