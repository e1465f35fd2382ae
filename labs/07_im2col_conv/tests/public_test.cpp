// Lab 07 public tests: both versions of conv.h against a direct convolution in double on the
// CPU (each output within 6 * sqrt(C_in*K*K) * 2^-24 * (sqrt(bias^2 + sum (w x)^2) + |ref|),
// inputs from labkit/ops/conv_dist.hpp). Fixed seeds: a failure repeats exactly.
//   ./build/student/labs/07_im2col_conv/07_im2col_conv_test --gtest_filter='*Public*'
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "tests/cases.hpp"

namespace {

using lab07::Named;
using lab07::shape;

// {n, c_in, h, w, c_out, k, stride, pad}
const Named kPublicShapes[] = {
    {"tiny_3x3_pad1", shape(1, 3, 8, 8, 4, 3, 1, 1), true},
    {"no_padding", shape(2, 4, 10, 10, 8, 3, 1, 0), false},
    {"stride2_pad1", shape(2, 3, 15, 15, 6, 3, 2, 1), true},
    {"k1", shape(2, 16, 7, 9, 8, 1, 1, 0), true},
    {"nonsquare_k5_pad2", shape(3, 5, 12, 20, 7, 5, 1, 2), true},
    {"c_out_160", shape(2, 16, 20, 20, 160, 3, 1, 1), false},
    {"resnet_like", shape(4, 32, 28, 28, 32, 3, 1, 1), true},
};

class ConvPublic : public ::testing::TestWithParam<lab07::Param> {};

TEST_P(ConvPublic, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  LABKIT_EXPECT_OK(lab07::cv::check(variant, lab07::make_case(s, 7919 * s.shape.y_count() + 1)));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvPublic,
                         ::testing::Combine(::testing::ValuesIn(lab07::kVariants),
                                            ::testing::ValuesIn(kPublicShapes)),
                         lab07::param_name);

class ConvPublicStream : public ::testing::TestWithParam<std::string> {};

// Recorded into a CUDA graph from its stream and replayed: every kernel and every conv_sgemm
// call must go onto the stream the launcher is given.
TEST_P(ConvPublicStream, LaunchesOnTheGivenStream) {
  LABKIT_REQUIRE_GPU();
  lab07::cv::Case c = lab07::make_case({"capture", shape(2, 8, 14, 14, 16, 3, 1, 1), true}, 4242);
  c.capture = true;
  LABKIT_EXPECT_OK(lab07::cv::check(GetParam(), c));
}

INSTANTIATE_TEST_SUITE_P(Variants, ConvPublicStream, ::testing::ValuesIn(lab07::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
