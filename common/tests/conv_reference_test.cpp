// Host-only tests of the conv family's reference (lab 07), its float32 error bound, and the
// "where" report a student reads for the bugs the lab's hidden tests must catch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/compare.hpp"
#include "labkit/ops/conv.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::conv {
namespace {

Shape make(int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out, int64_t k, int64_t s,
           int64_t p) {
  Shape sh;
  sh.n = n; sh.c_in = c_in; sh.h = h; sh.w = w; sh.c_out = c_out; sh.k = k; sh.stride = s; sh.pad = p;
  return sh;
}

// The same convolution through an explicit unrolled matrix (row c*K*K + i*K + j, column
// oh*W_out + ow) and a plain product: a second, independent route to the same numbers.
std::vector<double> via_im2col(const Shape& s, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& bias) {
  const int64_t ho = s.h_out(), wo = s.w_out(), rows = s.c_in * s.k * s.k, cols = ho * wo;
  std::vector<double> y(s.y_count());
  for (int64_t n = 0; n < s.n; ++n) {
    std::vector<double> col(rows * cols, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t c = r / (s.k * s.k), i = (r / s.k) % s.k, j = r % s.k;
      for (int64_t p = 0; p < cols; ++p) {
        const int64_t ih = (p / wo) * s.stride - s.pad + i, iw = (p % wo) * s.stride - s.pad + j;
        if (ih >= 0 && ih < s.h && iw >= 0 && iw < s.w) {
          col[r * cols + p] = x[((n * s.c_in + c) * s.h + ih) * s.w + iw];
        }
      }
    }
    for (int64_t co = 0; co < s.c_out; ++co) {
      for (int64_t p = 0; p < cols; ++p) {
        double acc = bias.empty() ? 0.0 : bias[co];
        for (int64_t r = 0; r < rows; ++r) acc += double(w[co * rows + r]) * col[r * cols + p];
        y[(n * s.c_out + co) * cols + p] = acc;
      }
    }
  }
  return y;
}

TEST(ConvReference, SmallKnownConvolution) {
  // One 3x3 image 1..9, a 2x2 filter [1 0; 0 -1], no padding: y = x[i][j] - x[i+1][j+1] = -4.
  const Shape s = make(1, 1, 3, 3, 1, 2, 1, 0);
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w = {1, 0, 0, -1};
  std::vector<double> y, sq;
  reference(s, x, w, {}, &y, &sq);
  EXPECT_EQ(y, (std::vector<double>{-4, -4, -4, -4}));
  EXPECT_EQ(sq, (std::vector<double>{26, 40, 80, 106}));  // x_ij^2 + x_i+1,j+1^2
}

TEST(ConvReference, PaddingIsZeroAndBiasIsAdded) {
  // A 1x1 image of 2, a 3x3 filter of ones, padding 1: only the centre tap sees the pixel.
  const Shape s = make(1, 1, 1, 1, 2, 3, 1, 1);
  const std::vector<float> x = {2}, w(18, 1.0f), bias = {0.5f, -1.0f};
  std::vector<double> y, sq;
  reference(s, x, w, bias, &y, &sq);
  EXPECT_EQ(y, (std::vector<double>{2.5, 1.0}));
  EXPECT_EQ(sq, (std::vector<double>{4.25, 5.0}));  // bias^2 + (w x)^2
}

TEST(ConvReference, OutputSizeUsesIntegerDivision) {
  // H + 2P - K = 11 is not a multiple of the stride 2: H_out = 11/2 + 1 = 6.
  const Shape s = make(1, 1, 14, 15, 1, 3, 2, 0);
  EXPECT_EQ(s.h_out(), 6);
  EXPECT_EQ(s.w_out(), 7);
  EXPECT_THROW(make(1, 1, 2, 2, 1, 5, 1, 1).validate(), std::invalid_argument);  // K > H + 2P
  EXPECT_NO_THROW(make(1, 1, 3, 3, 1, 5, 1, 1).validate());                     // K = H + 2P
}

// Every shape class of the hidden tests, against the unrolled-matrix route; one of them large
// enough to run on several threads.
class ConvReferenceShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(ConvReferenceShapes, MatchesUnrolledProduct) {
  const Shape s = GetParam();
  const std::vector<float> x = random_floats(s.x_count(), 21, -0.5f, 1.5f);
  const std::vector<float> w = random_floats(s.w_count(), 22, -0.75f, 1.25f);
  const std::vector<float> bias = random_floats(size_t(s.c_out), 23, 0.5f, 1.5f);
  std::vector<double> y, sq;
  reference(s, x, w, bias, &y, &sq);
  const std::vector<double> expected = via_im2col(s, x, w, bias);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], expected[i], 1e-9 * (1 + std::sqrt(double(s.c_in * s.k * s.k) * sq[i]))) << "output " << i << " of " << s.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvReferenceShapes,
                         ::testing::Values(make(2, 3, 9, 9, 4, 3, 1, 1), make(2, 4, 14, 15, 6, 3, 2, 0),
                                           make(2, 5, 18, 13, 7, 4, 3, 1), make(3, 24, 9, 7, 40, 1, 1, 0),
                                           make(2, 6, 5, 5, 9, 5, 1, 0), make(1, 2, 6, 7, 3, 3, 1, 3),
                                           make(4, 1, 28, 28, 16, 5, 1, 2),
                                           make(2, 16, 24, 24, 32, 3, 1, 1)));  // 4.2e6 MACs: threaded

// Float32 accumulation in any order stays inside the bound; one lost tap or a bias added twice
// lands outside it.
TEST(ConvBound, SeparatesFloatRoundingFromRealBugs) {
  const Shape s = make(2, 64, 12, 12, 8, 3, 1, 1);
  const std::vector<float> x = random_floats(s.x_count(), 31, -0.5f, 1.5f);
  const std::vector<float> w = random_floats(s.w_count(), 32, -0.75f, 1.25f);
  const std::vector<float> bias = random_floats(size_t(s.c_out), 33, 0.5f, 1.5f);
  std::vector<double> ref, sq;
  reference(s, x, w, bias, &ref, &sq);
  const std::vector<double> bound = conv_bounds(ref, sq, s);
  const int64_t ho = s.h_out(), wo = s.w_out(), kk = s.k * s.k;
  double worst = 0;
  size_t lost_outside = 0, twice_outside = 0;
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t co = 0; co < s.c_out; ++co) {
      for (int64_t oh = 0; oh < ho; ++oh) {
        for (int64_t ow = 0; ow < wo; ++ow) {
          float acc = bias[co], lost = bias[co];
          for (int64_t c = 0; c < s.c_in; ++c) {
            for (int64_t t = 0; t < kk; ++t) {
              const int64_t ih = oh - s.pad + t / s.k, iw = ow - s.pad + t % s.k;
              if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
              const float term = w[(co * s.c_in + c) * kk + t] * x[((n * s.c_in + c) * s.h + ih) * s.w + iw];
              acc += term;
              if (!(c == 0 && t == 4)) lost += term;  // the centre tap of channel 0 lost
            }
          }
          const size_t i = size_t(((n * s.c_out + co) * ho + oh) * wo + ow);
          worst = std::max(worst, std::fabs(acc - ref[i]) / bound[i]);
          lost_outside += std::fabs(lost - ref[i]) > bound[i];
          twice_outside += std::fabs(acc + bias[co] - ref[i]) > bound[i];
        }
      }
    }
  }
  EXPECT_LT(worst, 0.5) << "float32 rounding should stay well inside the bound";
  EXPECT_GT(lost_outside, ref.size() * 9 / 10) << "a lost tap must fail nearly everywhere";
  EXPECT_EQ(twice_outside, ref.size()) << "a doubled bias (>= 0.5) must fail everywhere";
}

// What a student reads: a missing image offset shows as wrong images 1.., padding bugs as
// wrong elements near the edges, with the stride phase when S > 1.
TEST(ConvReport, NamesImagesBordersAndStridePhase) {
  const Shape s = make(3, 2, 8, 8, 2, 3, 2, 1);
  const size_t plane = size_t(s.h_out() * s.w_out());
  std::vector<double> ref(s.y_count(), 1.0), bound(s.y_count(), 1e-3);
  std::vector<float> got(ref.begin(), ref.end());
  for (size_t i = plane * 2; i < got.size(); ++i) got[i] = 5.0f;  // images 1 and 2 wrong
  std::vector<uint8_t> bytes(got.size() * 4);
  std::memcpy(bytes.data(), got.data(), bytes.size());
  const NchwLayout layout{size_t(s.n), size_t(s.c_out), size_t(s.h_out()), size_t(s.w_out()),
                          1, size_t(s.stride), "y"};
  const CompareResult r = compare_nchw(observe(bytes, DType::kF32), ref, bound, layout);
  ASSERT_FALSE(r.ok());
  const std::string report = r.report();
  EXPECT_NE(report.find("wrong images (n): 1-2 (2 of 3)"), std::string::npos) << report;
  EXPECT_NE(report.find("by stride phase (h % 2, w % 2)"), std::string::npos) << report;
}

}  // namespace
}  // namespace labkit::ops::conv
