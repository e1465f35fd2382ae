// Lab 07 hidden tests (dropped from the student release), seeded from the judge's seed.
//
// What each shape is for (the bugs they must catch are in tests/submissions/07_im2col_conv/):
//   pad*: padding > 0: the border outputs read zeros, never memory outside the image
//   stride*: stride 2 and 3, including sizes where H + 2P - K is not a multiple of the stride
//     (the last input rows and columns are unused: an H_out rounded up writes past y)
//   k1*: K = 1 (im2col is a copy, or a strided gather with S > 1)
//   k_eq_h*: K = H: one output row per image (with P = 0), or three (P = 1)
//   c_in_1: one input channel (rows of the unrolled matrix = K*K)
//   nonsquare*, odd*: H != W, sizes that are multiples of nothing (row/column mix-ups, tails of
//     every tile; C_out = 129 is one past a 128-row tile)
//   batch16: 16 images: a missing image offset reads image 0 for every image
//   stem_small: the 7x7 stride-2 pad-3 stem at 64x64
//   resnet_56: 8 images of the 56x56 64 -> 64 3x3 layer (the reference runs on every core)
//   repeat: three calls on the same buffers, fresh inputs, fresh garbage in the workspace
#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/random.hpp"
#include "tests/cases.hpp"

namespace {

using lab07::Named;
using lab07::shape;

// {n, c_in, h, w, c_out, k, stride, pad}
const Named kHiddenShapes[] = {
    {"pad1_bias", shape(2, 3, 9, 9, 4, 3, 1, 1), true},
    {"pad2_k5", shape(2, 3, 17, 17, 5, 5, 1, 2), true},
    {"pad3_k3", shape(1, 2, 6, 7, 3, 3, 1, 3), false},
    {"stride2", shape(2, 4, 16, 16, 8, 3, 2, 0), true},
    {"stride2_remainder", shape(2, 4, 14, 15, 6, 3, 2, 0), true},
    {"stride3_pad1_remainder", shape(2, 5, 18, 13, 7, 4, 3, 1), false},
    {"stride2_pad1_even", shape(3, 6, 20, 20, 10, 3, 2, 1), true},
    {"k1", shape(3, 24, 9, 7, 40, 1, 1, 0), true},
    {"k1_stride2", shape(2, 12, 11, 10, 9, 1, 2, 0), false},
    {"k_eq_h", shape(2, 6, 5, 5, 9, 5, 1, 0), true},
    {"k_eq_h_pad1", shape(2, 4, 5, 7, 6, 5, 1, 1), true},
    {"c_in_1", shape(4, 1, 28, 28, 16, 5, 1, 2), true},
    {"nonsquare_wide", shape(2, 7, 9, 31, 11, 3, 1, 1), true},
    {"nonsquare_tall_stride2", shape(2, 5, 33, 10, 8, 3, 2, 1), false},
    {"odd_c_out_129", shape(3, 13, 23, 19, 129, 3, 1, 1), true},
    {"odd_everything", shape(5, 17, 27, 21, 37, 5, 2, 2), true},
    {"batch16", shape(16, 8, 12, 12, 16, 3, 1, 1), true},
    {"stem_small", shape(2, 3, 64, 64, 64, 7, 2, 3), false},
    {"resnet_56", shape(8, 64, 56, 56, 64, 3, 1, 1), true},
};

uint64_t seed_for(const Named& s) {
  return labkit::mix_seed(labkit::test_seed(), std::hash<std::string>{}(s.name));
}

class ConvHidden : public ::testing::TestWithParam<lab07::Param> {};

TEST_P(ConvHidden, MatchesReference) {
  LABKIT_REQUIRE_GPU();
  const auto& [variant, s] = GetParam();
  LABKIT_EXPECT_OK(lab07::cv::check(variant, lab07::make_case(s, seed_for(s))));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvHidden,
                         ::testing::Combine(::testing::ValuesIn(lab07::kVariants),
                                            ::testing::ValuesIn(kHiddenShapes)),
                         lab07::param_name);

class ConvHiddenRepeat : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvHiddenRepeat, FreshInputsAndGarbageWorkspace) {
  LABKIT_REQUIRE_GPU();
  const Named s{"repeat", shape(3, 16, 19, 17, 24, 3, 1, 1), true};
  LABKIT_EXPECT_OK(lab07::cv::check(GetParam(), lab07::make_case(s, seed_for(s), 3)));
}

INSTANTIATE_TEST_SUITE_P(Variants, ConvHiddenRepeat, ::testing::ValuesIn(lab07::kVariants),
                         [](const auto& info) { return info.param; });

}  // namespace
