// Lab 08 hidden tests (dropped from the student release), seeded from the judge's seed.
//
// What each size is for:
//   100003, 16777223 (2^24 + 7): several levels of tile totals, thousands of tiles of v3 (a
//     look-back that reaches far back), not a multiple of any tile
//   268435456 (2^28), floats and ints: the benchmark's size, with the tests' bound, drawn on the
//     GPU (a path taken only at the benchmark's size is checked like every other)
//   2^31 + 2^20 + 7 (Past2p31), ints: n is a size_t, so an index, a tile offset or a count
//     computed in 32 bits wraps; the prefixes leave the int range (exact modulo 2^32); 8.6 GB
//     in and 8.6 GB out, drawn on the GPU and checked there against the judge's own draw and
//     scan (labkit/ops/scan_device.hpp); only a wrong output comes to the host, for the report
//   repeat: three calls on the same buffers, fresh inputs, fresh garbage in the workspace (a
//     status word or a tile counter not reset each call)
//   stream: recorded into a CUDA graph from its stream and replayed: every launch and reset must
//     go onto the stream it is given
//   races: compute-sanitizer racecheck on a small int scan (a missing barrier often still
//     gives the right prefixes, so the result alone does not show it)
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/random.hpp"
#include "tests/cases.hpp"

namespace {

using lab08::sc::DType;

constexpr size_t kHiddenSizes[] = {100003, (size_t{1} << 24) + 7};

uint64_t seed_for(size_t n, DType d) {
  return labkit::mix_seed(labkit::test_seed(), 2 * n + static_cast<uint64_t>(d));
}

class ScanHidden : public ::testing::TestWithParam<lab08::Param> {};

TEST_P(ScanHidden, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n] = GetParam();
  LABKIT_EXPECT_OK(lab08::sc::check(variant, lab08::make_case(n, dtype, seed_for(n, dtype))));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ScanHidden,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::ValuesIn(lab08::kDTypes),
                                            ::testing::ValuesIn(kHiddenSizes)),
                         lab08::param_name);

// 2^28, floats and ints: the graded benchmark's size.
INSTANTIATE_TEST_SUITE_P(BenchScale, ScanHidden,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::ValuesIn(lab08::kDTypes),
                                            ::testing::Values(size_t{1} << 28)),
                         lab08::param_name);

// 2^31 + 2^20 + 7 ints: past every 32-bit index (the public sizes never reach 2^31).
INSTANTIATE_TEST_SUITE_P(Past2p31, ScanHidden,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::Values(DType::kI32),
                                            ::testing::Values((size_t{1} << 31) + (size_t{1} << 20) + 7)),
                         lab08::param_name);

class ScanHiddenOffset : public ::testing::TestWithParam<lab08::OffsetParam> {};

TEST_P(ScanHiddenOffset, AnyInputPointer) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n, offset] = GetParam();
  lab08::sc::Case c = lab08::make_case(n, dtype, seed_for(n + offset, dtype));
  c.in_offset = offset;
  LABKIT_EXPECT_OK(lab08::sc::check(variant, c));
}

INSTANTIATE_TEST_SUITE_P(Offsets, ScanHiddenOffset,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::ValuesIn(lab08::kDTypes),
                                            ::testing::Values((size_t{1} << 24) + 3),
                                            ::testing::Values(1u, 3u)),
                         lab08::offset_param_name);

class ScanHiddenRepeat : public ::testing::TestWithParam<std::tuple<std::string, DType>> {};

TEST_P(ScanHiddenRepeat, FreshInputsAndGarbageWorkspace) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype] = GetParam();
  LABKIT_EXPECT_OK(
      lab08::sc::check(variant, lab08::make_case(300007, dtype, seed_for(300007, dtype), 3)));
}

INSTANTIATE_TEST_SUITE_P(Variants, ScanHiddenRepeat,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::ValuesIn(lab08::kDTypes)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  lab08::sc::dtype_name(std::get<1>(info.param));
                         });

class ScanHiddenStream : public ::testing::TestWithParam<std::string> {};

// Recorded into a CUDA graph from its stream and replayed, twice in a row on the same buffers:
// every launch of every level, and the workspace's reset, must go onto the stream it is given.
TEST_P(ScanHiddenStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  lab08::sc::Case c = lab08::make_case(100000, DType::kF32, seed_for(100000, DType::kF32), 2);
  c.capture = true;
  LABKIT_EXPECT_OK(lab08::sc::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, ScanHiddenStream, ::testing::ValuesIn(lab08::kVariants),
                         [](const auto& info) { return info.param; });

class ScanHiddenRace : public ::testing::TestWithParam<std::string> {};

// Graded: racecheck is part of this lab's grading (the grader always passes it the tool).
TEST_P(ScanHiddenRace, NoSharedMemoryRaces) {
  LABKIT_REQUIRE_GPU();
  if (!labkit::sanitizer_available()) {
    GTEST_SKIP() << "no compute-sanitizer given (--labkit-sanitizer): the race check cannot run";
  }
  LABKIT_EXPECT_OK(labkit::check_races(
      lab08::sc::spec(GetParam(), lab08::make_case(4100, DType::kI32, seed_for(4100, DType::kI32)))));
}

INSTANTIATE_TEST_SUITE_P(Variants, ScanHiddenRace, ::testing::ValuesIn(lab08::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
