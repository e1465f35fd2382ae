// Lab 08 public tests: every version of scan.h, float and int, against a CPU reference (ints
// exact modulo 2^32, floats within 6 sqrt(n) 2^-24 (sqrt(sum of x^2 before i) + |ref_i|) of the
// exclusive prefix in double), `in` aligned or not. Fixed seeds: a failure repeats exactly.
//   ./build/student/labs/08_scan/08_scan_test --gtest_filter='*Public*'
#include <gtest/gtest.h>

#include "cases.hpp"
#include "labkit/gpu.hpp"

namespace {

using lab08::sc::DType;

// One element, two; around a warp; around a block's tile of 1024; a tile of v3 (4096) and one
// more; several levels of tile totals (65537); a million and 3 (no tile size divides it).
constexpr size_t kPublicSizes[] = {1,    2,    31,   32,    33,   1023,
                                   1024, 1025, 4097, 65537, (size_t{1} << 20) + 3};

class ScanPublic : public ::testing::TestWithParam<lab08::Param> {};

TEST_P(ScanPublic, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n] = GetParam();
  LABKIT_EXPECT_OK(lab08::sc::check(variant, lab08::make_case(n, dtype, 7919 * n + 3)));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ScanPublic,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::ValuesIn(lab08::kDTypes),
                                            ::testing::ValuesIn(kPublicSizes)),
                         lab08::param_name);

class ScanPublicOffset : public ::testing::TestWithParam<lab08::OffsetParam> {};

// `in` may be any pointer: here it starts 1, 2 or 3 elements past a 16-byte boundary, so a
// float4 / int4 load straight from `in` is misaligned (a fault).
TEST_P(ScanPublicOffset, AnyInputPointer) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n, offset] = GetParam();
  lab08::sc::Case c = lab08::make_case(n, dtype, 7919 * n + 11 * offset);
  c.in_offset = offset;
  LABKIT_EXPECT_OK(lab08::sc::check(variant, c));
}

INSTANTIATE_TEST_SUITE_P(Offsets, ScanPublicOffset,
                         ::testing::Combine(::testing::ValuesIn(lab08::kVariants),
                                            ::testing::ValuesIn(lab08::kDTypes),
                                            ::testing::Values((size_t{1} << 20) + 3),
                                            ::testing::Values(1u, 2u, 3u)),
                         lab08::offset_param_name);

}  // namespace
