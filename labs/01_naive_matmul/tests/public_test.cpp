// Lab 01 public tests: every variant in matmul.h against a double-precision CPU reference.
// Fixed seeds, so a failure here repeats exactly. Run them with
//   cmake --workflow --preset student
// or one by one:
//   ./build/student/labs/01_naive_matmul/01_naive_matmul_test --gtest_filter='*MatmulPublic*'
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "shapes.hpp"

namespace {

using lab01::Shape;
namespace mm = labkit::ops::matmul;

// Small to medium, square and not, multiples of common block shapes and not.
constexpr Shape kPublicShapes[] = {
    {1, 1, 1}, {64, 64, 64}, {32, 32, 1}, {127, 129, 33}, {1, 200, 50}, {200, 1, 50}, {256, 256, 256},
};

class MatmulPublic : public ::testing::TestWithParam<lab01::VariantShape> {};

TEST_P(MatmulPublic, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = 1000003u * s.M + 1009u * s.N + s.K;  // fixed per shape
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulPublic,
    ::testing::Combine(::testing::ValuesIn(lab01::kVariants), ::testing::ValuesIn(kPublicShapes)),
    lab01::variant_shape_name);

class MatmulPublicStream : public ::testing::TestWithParam<std::string> {};

// The launcher is recorded into a CUDA graph from its stream and replayed: all of its work
// must go onto the stream it is given (no default-stream launch, no cudaMemcpy inside).
TEST_P(MatmulPublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  mm::Case c{96, 80, 40, 4242, 1};
  c.capture = true;
  LABKIT_EXPECT_OK(mm::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulPublicStream, ::testing::ValuesIn(lab01::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
