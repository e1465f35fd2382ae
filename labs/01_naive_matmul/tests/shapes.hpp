// Test shapes shared by the public and hidden tests of lab 01.
#pragma once

#include <ostream>
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "labkit/matmul.hpp"
#include "matmul.h"

// How GoogleTest prints a parameter when a test fails.
inline void PrintTo(const MatmulVariant& v, std::ostream* os) { *os << v.name; }

namespace lab01 {

struct Shape {
  int M, N, K;
};
inline void PrintTo(const Shape& s, std::ostream* os) { *os << labkit::shape_label(s.M, s.N, s.K); }

using VariantShape = std::tuple<MatmulVariant, Shape>;

// "v1_naive_M127_N129_K33"
inline std::string variant_shape_name(const ::testing::TestParamInfo<VariantShape>& info) {
  const Shape& s = std::get<1>(info.param);
  return std::string(std::get<0>(info.param).name) + "_" + labkit::shape_label(s.M, s.N, s.K);
}

}  // namespace lab01
