// Lab 03 hidden tests (dropped from the student release). Inputs come from the judge's seed,
// which the grader derives from the submission and sends after start-up (LABKIT_SEED replays
// it locally). Every shape keeps the size promise of matmul.h and varies inside it.
//
// What each shape is for:
//   K = 8: a single slice (a fetch indexed with the phase number instead of its start `ko`
//     is right only here, so every other K catches it)
//   M != N, one side a single tile, long thin grids: A sliced as if stored K x M, row/column
//     mix-ups, a grid built with the sides swapped
//   K = 2048 and odd multiples of 8 (24, 40, 264, 1000): many phases, slices that are not a
//     multiple of 16 or 32 (a kernel that quietly assumes S = 16 or 32 drops the tail)
//   repeat: three calls on the same buffers with fresh inputs
//   races: compute-sanitizer racecheck at a small size (a missing barrier often still gives
//     the right product, so the result alone does not show it)
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "labkit/random.hpp"
#include "tests/shapes.hpp"

namespace {

using lab03::Shape;
namespace mm = labkit::ops::matmul;

constexpr Shape kHiddenShapes[] = {
    {128, 128, 8},   {128, 256, 16},   {256, 128, 24},   {384, 640, 40},  {1024, 128, 8},
    {128, 1024, 2048}, {640, 768, 1000}, {1152, 896, 264}, {2048, 2048, 136}, {128, 4096, 32},
    {4096, 128, 32},
};

constexpr bool all_keep_promise() {
  for (const Shape& s : kHiddenShapes) {
    if (!lab03::keeps_promise(s)) return false;
  }
  return true;
}
static_assert(all_keep_promise(), "hidden shapes must keep the size promise of matmul.h");

uint64_t seed_for(const Shape& s) {
  return labkit::mix_seed(labkit::test_seed(), 1000003u * s.M + 1009u * s.N + s.K);
}

class MatmulHidden : public ::testing::TestWithParam<lab03::VariantShape> {};

TEST_P(MatmulHidden, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed_for(s), 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulHidden,
    ::testing::Combine(::testing::ValuesIn(lab03::kVariants), ::testing::ValuesIn(kHiddenShapes)),
    lab03::variant_shape_name);

class MatmulHiddenRepeat : public ::testing::TestWithParam<std::string> {};

// Three calls on one shape with the same buffers, fresh inputs each: a kernel that caches or
// reuses a previous result, or depends on what C held before, fails here.
TEST_P(MatmulHiddenRepeat, FreshInputsEveryCall) {
  LABKIT_REQUIRE_GPU();
  const uint64_t seed = labkit::mix_seed(labkit::test_seed(), 77);
  LABKIT_EXPECT_OK(mm::check(GetParam(), {384, 256, 96, seed, 3}));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulHiddenRepeat, ::testing::ValuesIn(lab03::kVariants),
                         [](const auto& info) { return info.param; });

class MatmulHiddenRace : public ::testing::TestWithParam<std::string> {};

// Graded: racecheck is part of this lab's grading (the grader always passes it the tool).
// 256 x 256 x 64: four blocks, eight phases, so both barriers of every phase are exercised.
TEST_P(MatmulHiddenRace, NoSharedMemoryRaces) {
  LABKIT_REQUIRE_GPU();
  if (!labkit::sanitizer_available()) {
    GTEST_SKIP() << "no compute-sanitizer given (--labkit-sanitizer): the race check cannot run";
  }
  const Shape s{256, 256, 64};
  LABKIT_EXPECT_OK(labkit::check_races(mm::spec(GetParam(), {s.M, s.N, s.K, seed_for(s), 1})));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulHiddenRace, ::testing::ValuesIn(lab03::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
