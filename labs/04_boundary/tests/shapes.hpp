// Test shapes shared by the public and hidden tests of lab 04.
#pragma once

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/matmul.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace lab04 {

// The variant names of matmul.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)};

struct Shape {
  int M, N, K;
};
inline void PrintTo(const Shape& s, std::ostream* os) { *os << labkit::shape_label(s.M, s.N, s.K); }

using VariantShape = std::tuple<std::string, Shape>;

// "v4_boundary_M127_N129_K33"
inline std::string variant_shape_name(const ::testing::TestParamInfo<VariantShape>& info) {
  const Shape& s = std::get<1>(info.param);
  return std::get<0>(info.param) + "_" + labkit::shape_label(s.M, s.N, s.K);
}

}  // namespace lab04
