// Lab 03 public tests: every variant in matmul.h against a double-precision CPU reference, on
// shapes that keep the lab's size promise (M, N multiples of 128, K a multiple of 8). Fixed
// seeds, so a failure here repeats exactly. Run them with
//   cmake --workflow --preset student
// or one by one:
//   ./build/student/labs/03_smem_tiling/03_smem_tiling_test --gtest_filter='*MatmulPublic*'
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "shapes.hpp"

namespace {

using lab03::Shape;
namespace mm = labkit::ops::matmul;

// One tile and one slice; one tile, many slices; several tiles along each side (M != N, so a
// row/column mix-up shows); K not a multiple of 16 or 32; a square run of 512.
constexpr Shape kPublicShapes[] = {
    {128, 128, 8}, {128, 128, 128}, {256, 128, 64}, {128, 384, 40}, {384, 256, 24}, {512, 512, 512},
};
static_assert(lab03::keeps_promise(kPublicShapes[0]) && lab03::keeps_promise(kPublicShapes[1]) &&
              lab03::keeps_promise(kPublicShapes[2]) && lab03::keeps_promise(kPublicShapes[3]) &&
              lab03::keeps_promise(kPublicShapes[4]) && lab03::keeps_promise(kPublicShapes[5]),
              "public shapes must keep the size promise of matmul.h");

class MatmulPublic : public ::testing::TestWithParam<lab03::VariantShape> {};

TEST_P(MatmulPublic, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = 1000003u * s.M + 1009u * s.N + s.K;  // fixed per shape
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulPublic,
    ::testing::Combine(::testing::ValuesIn(lab03::kVariants), ::testing::ValuesIn(kPublicShapes)),
    lab03::variant_shape_name);

class MatmulPublicStream : public ::testing::TestWithParam<std::string> {};

// The launcher is recorded into a CUDA graph from its stream and replayed: all of its work
// must go onto the stream it is given (no default-stream launch, no cudaMemcpy inside).
TEST_P(MatmulPublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  mm::Case c{256, 128, 48, 4242, 1};
  c.capture = true;
  LABKIT_EXPECT_OK(mm::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulPublicStream, ::testing::ValuesIn(lab03::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
