// Test shapes shared by the public and hidden tests of lab 03, and the size promise they keep.
#pragma once

#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/matmul.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace lab03 {

// The variant names of matmul.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)};

struct Shape {
  int M, N, K;
};
inline void PrintTo(const Shape& s, std::ostream* os) { *os << labkit::shape_label(s.M, s.N, s.K); }

// The promise of matmul.h: M, N multiples of 128 and K of 8, none of them 0.
constexpr bool keeps_promise(const Shape& s) {
  return s.M > 0 && s.N > 0 && s.K > 0 && s.M % kMatmulMultipleMN == 0 &&
         s.N % kMatmulMultipleMN == 0 && s.K % kMatmulMultipleK == 0;
}

using VariantShape = std::tuple<std::string, Shape>;

// "v3_smem_tiled_M128_N256_K40"
inline std::string variant_shape_name(const ::testing::TestParamInfo<VariantShape>& info) {
  const Shape& s = std::get<1>(info.param);
  return std::get<0>(info.param) + "_" + labkit::shape_label(s.M, s.N, s.K);
}

}  // namespace lab03
