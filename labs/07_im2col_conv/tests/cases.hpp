// What the public and hidden tests of lab 07 share: the variant names, the shapes, test naming.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "conv.h"
#include "labkit/ops/conv.hpp"
#include "labkit/worker.hpp"

namespace lab07 {

namespace cv = labkit::ops::conv;

// The variant names of conv.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {CONV_VARIANTS(LABKIT_VARIANT_NAME)};

// A test shape with a name that says what it is for.
struct Named {
  std::string name;  // test name suffix: letters, digits, underscores
  cv::Shape shape;
  bool bias = true;
};

inline void PrintTo(const Named& s, std::ostream* os) { *os << s.name << ": " << s.shape.describe(); }

// {n, c_in, h, w, c_out, k, stride, pad}
inline cv::Shape shape(int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out, int64_t k,
                       int64_t stride, int64_t pad) {
  cv::Shape s;
  s.n = n; s.c_in = c_in; s.h = h; s.w = w; s.c_out = c_out; s.k = k; s.stride = stride; s.pad = pad;
  return s;
}

inline ConvShape lab_shape(const cv::Shape& s) {
  return ConvShape{int(s.n), int(s.c_in), int(s.h), int(s.w), int(s.c_out), int(s.k),
                   int(s.stride), int(s.pad)};
}

inline cv::Case make_case(const Named& s, uint64_t seed, int calls = 1) {
  cv::Case c;
  c.shape = s.shape;
  c.bias = s.bias;
  c.seed = seed;
  c.workspace = conv_workspace_size(lab_shape(s.shape));
  c.calls = calls;
  return c;
}

using Param = std::tuple<std::string, Named>;

// "v1_im2col_stride2_pad1"
inline std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
}

}  // namespace lab07
