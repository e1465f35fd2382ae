// Lab 04 hidden tests (dropped from the student release). Inputs come from the judge's seed,
// which the grader derives from the submission and sends after start-up (LABKIT_SEED replays
// it locally).
//
// What each shape is for:
//   primes and sizes just past a tile (129, 257): partial edge tiles on the right, at the
//     bottom and in the corner: missing load guards read past A or B (the harness's NaN
//     canaries, or memcheck), missing store guards write past C, stores done only for full
//     tiles leave the edge tiles unwritten
//   K % 8 != 0 (1, 5, 7, 17, 103, 129, 4093...): `K / S` slices drop the tail of every dot
//     product; K = 1..7 is less than one slice (no full slice at all)
//   tall-skinny and wide-short (20000 x 3, 3 x 20000, 4097 x 2): one tile across, many down
//   multiples of 4 (but not of a tile): a kernel with 16-byte loads takes its fast path there,
//     and must still guard whole float4s at the edges
//   repeat: three calls on the same buffers with fresh inputs
//   races: compute-sanitizer racecheck at a small size with edges in both directions and a
//     partial last slice (a missing barrier often still gives the right product)
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/ops/matmul.hpp"
#include "labkit/random.hpp"
#include "tests/shapes.hpp"

namespace {

using lab04::Shape;
namespace mm = labkit::ops::matmul;

constexpr Shape kHiddenShapes[] = {
    {2, 3, 5},        {31, 33, 17},     {97, 101, 103},   {130, 257, 7},   {129, 129, 1},
    {1, 1, 4099},     {1000, 1, 1},     {1, 1000, 1},     {255, 257, 263}, {4097, 2, 129},
    {2, 4097, 129},   {20000, 3, 17},   {3, 20000, 17},   {1023, 1025, 511}, {1000, 1000, 1000},
    {300, 260, 68},   {516, 132, 4},    {4, 388, 1028},   {129, 4093, 129},  {1100, 900, 4093},
};

uint64_t seed_for(const Shape& s) {
  return labkit::mix_seed(labkit::test_seed(), 1000003u * s.M + 1009u * s.N + s.K);
}

class MatmulHidden : public ::testing::TestWithParam<lab04::VariantShape> {};

TEST_P(MatmulHidden, MatchesCpuReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed_for(s), 1}));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, MatmulHidden,
    ::testing::Combine(::testing::ValuesIn(lab04::kVariants), ::testing::ValuesIn(kHiddenShapes)),
    lab04::variant_shape_name);

class MatmulHiddenRepeat : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

// Three calls on one shape with the same buffers, fresh inputs each: a kernel that caches or
// reuses a previous result, or depends on what C held before, fails here. One odd shape, one
// shape a multiple of 4 (the 16-byte path of an optimized kernel).
TEST_P(MatmulHiddenRepeat, FreshInputsEveryCall) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  const uint64_t seed = labkit::mix_seed(labkit::test_seed(), 77 + s.K);
  LABKIT_EXPECT_OK(mm::check(variant, {s.M, s.N, s.K, seed, 3}));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulHiddenRepeat,
                         ::testing::Combine(::testing::ValuesIn(lab04::kVariants),
                                            ::testing::Values(Shape{300, 200, 101}, Shape{260, 196, 84})),
                         lab04::variant_shape_name);

class MatmulHiddenRace : public ::testing::TestWithParam<std::string> {};

// Graded: racecheck is part of this lab's grading (the grader always passes it the tool).
// 200 x 150 x 37: 2 x 2 blocks with partial edges, five slices, the last one partial.
TEST_P(MatmulHiddenRace, NoSharedMemoryRaces) {
  LABKIT_REQUIRE_GPU();
  if (!labkit::sanitizer_available()) {
    GTEST_SKIP() << "no compute-sanitizer given (--labkit-sanitizer): the race check cannot run";
  }
  const Shape s{200, 150, 37};
  LABKIT_EXPECT_OK(labkit::check_races(mm::spec(GetParam(), {s.M, s.N, s.K, seed_for(s), 1})));
}

INSTANTIATE_TEST_SUITE_P(Variants, MatmulHiddenRace, ::testing::ValuesIn(lab04::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
