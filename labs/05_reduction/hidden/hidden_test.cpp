// Lab 05 hidden tests (dropped from the student release), seeded from the judge's seed.
//
// What each size is for:
//   1, 3, 31, 33: less than a block, less than a warp, around a warp
//   1023, 1025, 4097, 100003: around a block, not a multiple of any block or of the
//     elements per thread (the tail), several levels of partial sums
//   16777223, 268435457: many blocks, 2^28 + 1 in ints (exact: a lost tail or a partial
//     summed twice shows, where the float bound would hide it)
//   268435456 floats: the benchmark's size, with the tests' bound, so that a path taken only at
//     the benchmark's size is checked like every other (labkit/ops/reduce_dist.hpp: a lost
//     planted element, a sample or a stale sum fails there as anywhere)
//   2^31 + 2^20 + 7 (Past2p31), floats and ints: n is a size_t, so an index, count or grid
//     stride computed in 32 bits wraps (ints compared modulo 2^32: the sum leaves the int
//     range); 8.6 GB, drawn on the GPU and summed there for the reference (cases.hpp)
//   offsets 1, 2, 3 at 2^24 + 3: `in` may be any pointer (the public tests do 2^20 + 3; a
//     version whose vector path starts past the public sizes is checked here)
//   repeat: three calls on the same buffers, fresh inputs, fresh garbage in the workspace
//   (every test from 2^24 elements to 2^28 + 1 makes two such calls: tests/cases.hpp)
//   races: compute-sanitizer racecheck on a small int sum (a missing barrier often still
//     gives the right sum, so the result alone does not show it)
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/random.hpp"
#include "tests/cases.hpp"

namespace {

using lab05::rd::DType;

constexpr size_t kHiddenSizes[] = {1, 3, 31, 33, 1023, 1025, 4097, 100003, 16777223};

uint64_t seed_for(size_t n, DType d) {
  return labkit::mix_seed(labkit::test_seed(), 2 * n + static_cast<uint64_t>(d));
}

class ReduceHidden : public ::testing::TestWithParam<lab05::Param> {};

TEST_P(ReduceHidden, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n] = GetParam();
  LABKIT_EXPECT_OK(lab05::rd::check(variant, lab05::make_case(n, dtype, seed_for(n, dtype))));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReduceHidden,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::ValuesIn(lab05::kDTypes),
                                            ::testing::ValuesIn(kHiddenSizes)),
                         lab05::param_name);

// 2^28 + 1 ints: a gigabyte, exact.
INSTANTIATE_TEST_SUITE_P(Large, ReduceHidden,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::Values(DType::kI32),
                                            ::testing::Values((size_t{1} << 28) + 1)),
                         lab05::param_name);

// 2^28 floats: the graded benchmark's size.
INSTANTIATE_TEST_SUITE_P(BenchScale, ReduceHidden,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::Values(DType::kF32),
                                            ::testing::Values(size_t{1} << 28)),
                         lab05::param_name);

// 2^31 + 2^20 + 7: past every 32-bit index (the public sizes never reach 2^31).
INSTANTIATE_TEST_SUITE_P(Past2p31, ReduceHidden,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::ValuesIn(lab05::kDTypes),
                                            ::testing::Values((size_t{1} << 31) + (size_t{1} << 20) + 7)),
                         lab05::param_name);

class ReduceHiddenOffset : public ::testing::TestWithParam<lab05::OffsetParam> {};

TEST_P(ReduceHiddenOffset, AnyInputPointer) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n, offset] = GetParam();
  lab05::rd::Case c = lab05::make_case(n, dtype, seed_for(n + offset, dtype));
  c.in_offset = offset;
  LABKIT_EXPECT_OK(lab05::rd::check(variant, c));
}

INSTANTIATE_TEST_SUITE_P(Offsets, ReduceHiddenOffset,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::ValuesIn(lab05::kDTypes),
                                            ::testing::Values((size_t{1} << 24) + 3),
                                            ::testing::Values(1u, 2u, 3u)),
                         lab05::offset_param_name);

class ReduceHiddenRepeat : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(ReduceHiddenRepeat, FreshInputsAndGarbageWorkspace) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype] = GetParam();
  LABKIT_EXPECT_OK(
      lab05::rd::check(variant, lab05::make_case(300007, dtype, seed_for(300007, dtype), 3)));
}

INSTANTIATE_TEST_SUITE_P(Variants, ReduceHiddenRepeat,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::ValuesIn(lab05::kDTypes)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  lab05::rd::dtype_name(std::get<1>(info.param));
                         });

class ReduceHiddenRace : public ::testing::TestWithParam<std::string> {};

// Graded: racecheck is part of this lab's grading (the grader always passes it the tool).
TEST_P(ReduceHiddenRace, NoSharedMemoryRaces) {
  LABKIT_REQUIRE_GPU();
  if (!labkit::sanitizer_available()) {
    GTEST_SKIP() << "no compute-sanitizer given (--labkit-sanitizer): the race check cannot run";
  }
  LABKIT_EXPECT_OK(labkit::check_races(
      lab05::rd::spec(GetParam(), lab05::make_case(4096, DType::kI32, seed_for(4096, DType::kI32)))));
}

INSTANTIATE_TEST_SUITE_P(Variants, ReduceHiddenRace, ::testing::ValuesIn(lab05::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
