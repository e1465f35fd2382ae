// Lab 02 public tests: every variant in matmul.h against a double-precision CPU reference, on
// shapes inside the size promise (M, N multiples of 64, any K >= 1). Fixed seeds, so a failure
// here repeats exactly. Run them with
//   cmake --workflow --preset student
// or one by one:
//   ./build/student/labs/02_register_tiling/02_register_tiling_test --gtest_filter='*MatmulPublic*'
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "shapes.hpp"

namespace {

using lab02::Shape;
namespace mm = labkit::ops::matmul;

// One tile, K = 1, odd K, M != N != K, odd multiples of 64 on each side, tall and wide.
constexpr Shape kPublicShapes[] = {
    {64, 64, 64},   {64, 64, 1},    {128, 192, 33}, {192, 128, 7},   {640, 64, 100},
    {64, 576, 99},  {256, 256, 256}, {576, 448, 129},
};
static_assert(lab02::all_inside_promise(kPublicShapes), "a public shape breaks the size promise");
static_assert(lab02::varied_inside_promise(kPublicShapes), "the public shapes do not vary enough");

class MatmulPublic : public ::testing::TestWithParam<lab02::VariantShape> {};

TEST_P(MatmulPublic, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = 1000003u * s.M + 1009u * s.N + s.K;  // fixed per shape
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulPublic,
    ::testing::Combine(::testing::ValuesIn(lab02::kVariants), ::testing::ValuesIn(kPublicShapes)),
    lab02::variant_shape_name);

class MatmulPublicStream : public ::testing::TestWithParam<std::string> {};

// The launcher is recorded into a CUDA graph from its stream and replayed: all of its work
// must go onto the stream it is given (no default-stream launch, no cudaMemcpy inside).
TEST_P(MatmulPublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  mm::Case c{192, 128, 40, 4242, 1};
  c.capture = true;
  LABKIT_EXPECT_OK(mm::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulPublicStream, ::testing::ValuesIn(lab02::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
