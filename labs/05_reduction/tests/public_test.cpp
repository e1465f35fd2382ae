// Lab 05 public tests: every version of reduce.h, float and int, against a CPU reference (ints
// exact, floats within 4 * sqrt(n) * 2^-24 * sum|x|), `in` aligned or not. Fixed seeds: a
// failure repeats exactly.
//   ./build/student/labs/05_reduction/05_reduction_test --gtest_filter='*Public*'
#include <gtest/gtest.h>

#include "cases.hpp"
#include "labkit/gpu.hpp"

namespace {

using lab05::rd::DType;

// One element, one block's worth and around it, not a multiple of anything, a million.
constexpr size_t kPublicSizes[] = {1, 2, 255, 256, 1000, 4096, 65537, size_t{1} << 20};

class ReducePublic : public ::testing::TestWithParam<lab05::Param> {};

TEST_P(ReducePublic, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n] = GetParam();
  LABKIT_EXPECT_OK(lab05::rd::check(variant, lab05::make_case(n, dtype, 7919 * n + 1)));
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReducePublic,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::ValuesIn(lab05::kDTypes),
                                            ::testing::ValuesIn(kPublicSizes)),
                         lab05::param_name);

class ReducePublicOffset : public ::testing::TestWithParam<lab05::OffsetParam> {};

// `in` may be any pointer: here it starts 1, 2 or 3 elements past a 16-byte boundary, and n is
// not a multiple of 4, so a float4 / int4 load straight from `in` is misaligned (a fault), and
// a vector loop needs a scalar head and tail.
TEST_P(ReducePublicOffset, AnyInputPointer) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, dtype, n, offset] = GetParam();
  lab05::rd::Case c = lab05::make_case(n, dtype, 7919 * n + 11 * offset);
  c.in_offset = offset;
  LABKIT_EXPECT_OK(lab05::rd::check(variant, c));
}

INSTANTIATE_TEST_SUITE_P(Offsets, ReducePublicOffset,
                         ::testing::Combine(::testing::ValuesIn(lab05::kVariants),
                                            ::testing::ValuesIn(lab05::kDTypes),
                                            ::testing::Values((size_t{1} << 20) + 3),
                                            ::testing::Values(1u, 2u, 3u)),
                         lab05::offset_param_name);

class ReducePublicStream : public ::testing::TestWithParam<std::string> {};

// Recorded into a CUDA graph from its stream and replayed: every launch of every level must go
// onto the stream it is given.
TEST_P(ReducePublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  lab05::rd::Case c = lab05::make_case(100000, DType::kF32, 4242);
  c.capture = true;
  LABKIT_EXPECT_OK(lab05::rd::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, ReducePublicStream, ::testing::ValuesIn(lab05::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
