// Lab 02 hidden tests (dropped from the student release). Inputs come from the judge's seed,
// which the grader derives from the submission and sends after start-up (LABKIT_SEED replays
// it locally). Every shape keeps the size promise of matmul.h (M, N multiples of 64, K >= 1);
// inside it they vary as much as they can.
//
// What each shape is for:
//   64 x 64 (one block tile): a grid computed with the wrong tile is empty or doubled
//   odd multiples of 64 (192, 320, 448, 576, 704, 1984): a 128-wide tile with a floor-divided
//     grid drops the last tile row or column; one without a guard writes past C
//   M != N != K, tall and wide: a[V] or b[V] read from the wrong matrix, A read as K x M, or M
//     and N swapped in the grid or an address, is wrong (not just slow) off the diagonal
//   K = 1, K odd, long K (4099, 8191): the accumulator start value, the k loop bounds
//   repeated calls: fresh inputs every call, so nothing may be cached between calls
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "labkit/random.hpp"
#include "tests/shapes.hpp"

namespace {

using lab02::Shape;
namespace mm = labkit::ops::matmul;

constexpr Shape kHiddenShapes[] = {
    {64, 64, 1},     {64, 64, 3},      {64, 64, 8191},    {128, 64, 17},    {64, 192, 2},
    {320, 448, 1},   {448, 320, 513},  {1984, 64, 31},    {64, 1984, 33},   {576, 704, 1023},
    {960, 832, 255}, {2112, 128, 4099}, {128, 2112, 4099}, {1024, 960, 1000},
};
static_assert(lab02::all_inside_promise(kHiddenShapes), "a hidden shape breaks the size promise");
static_assert(lab02::varied_inside_promise(kHiddenShapes), "the hidden shapes do not vary enough");

class MatmulHidden : public ::testing::TestWithParam<lab02::VariantShape> {};

TEST_P(MatmulHidden, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = labkit::mix_seed(labkit::test_seed(), 1000003u * s.M + 1009u * s.N + s.K);
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulHidden,
    ::testing::Combine(::testing::ValuesIn(lab02::kVariants), ::testing::ValuesIn(kHiddenShapes)),
    lab02::variant_shape_name);

class MatmulHiddenRepeat : public ::testing::TestWithParam<std::string> {};

// Three calls on one shape with the same buffers, fresh inputs each: a kernel that caches or
// reuses a previous result, or depends on what C held before, fails here.
TEST_P(MatmulHiddenRepeat, FreshInputsEveryCall) {
  LABKIT_REQUIRE_GPU();
  const uint64_t seed = labkit::mix_seed(labkit::test_seed(), 77);
  LABKIT_EXPECT_OK(mm::check(GetParam(), {320, 192, 100, seed, 3}));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulHiddenRepeat, ::testing::ValuesIn(lab02::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
