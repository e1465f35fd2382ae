// Lab 04 public tests: every variant in matmul.h against a double-precision CPU reference, on
// sizes that are not multiples of any tile. Fixed seeds, so a failure here repeats exactly.
// Run them with
//   cmake --workflow --preset student
// or one by one:
//   ./build/student/labs/04_boundary/04_boundary_test --gtest_filter='*MatmulPublic*'
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "shapes.hpp"

namespace {

using lab04::Shape;
namespace mm = labkit::ops::matmul;

// One element; smaller than one tile; one element more than a tile in each size; a whole
// number of tiles (must still work); a single row and a single column; K below one slice;
// sizes a multiple of 4 but not of any tile (a kernel with 16-byte loads takes its fast path).
constexpr Shape kPublicShapes[] = {
    {1, 1, 1},    {7, 9, 5},   {129, 130, 9},  {128, 128, 8},  {127, 129, 33},
    {1, 300, 50}, {300, 1, 50}, {64, 64, 3},   {260, 132, 100}, {256, 256, 256},
};

class MatmulPublic : public ::testing::TestWithParam<lab04::VariantShape> {};

TEST_P(MatmulPublic, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = 1000003u * s.M + 1009u * s.N + s.K;  // fixed per shape
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulPublic,
    ::testing::Combine(::testing::ValuesIn(lab04::kVariants), ::testing::ValuesIn(kPublicShapes)),
    lab04::variant_shape_name);

class MatmulPublicStream : public ::testing::TestWithParam<std::string> {};

// The launcher is recorded into a CUDA graph from its stream and replayed: all of its work
// must go onto the stream it is given (no default-stream launch, no cudaMemcpy inside).
TEST_P(MatmulPublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  mm::Case c{96, 80, 40, 4242, 1};
  c.capture = true;
  LABKIT_EXPECT_OK(mm::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulPublicStream, ::testing::ValuesIn(lab04::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
