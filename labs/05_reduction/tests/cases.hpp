// What the public and hidden tests of lab 05 share: the variant names and test naming.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/reduce.hpp"
#include "labkit/worker.hpp"
#include "reduce.h"

namespace labkit::ops::reduce {
// How GoogleTest prints a test's dtype parameter.
inline void PrintTo(DType d, std::ostream* os) { *os << dtype_name(d); }
}  // namespace labkit::ops::reduce

namespace lab05 {

namespace rd = labkit::ops::reduce;

// The variant names of reduce.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {REDUCE_VARIANTS(LABKIT_VARIANT_NAME)};
inline const std::vector<rd::DType> kDTypes = {rd::DType::kF32, rd::DType::kI32};

using Param = std::tuple<std::string, rd::DType, size_t>;

// "v3_sequential_i32_n1025"
inline std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [variant, dtype, n] = info.param;
  return variant + "_" + rd::dtype_name(dtype) + "_n" + std::to_string(n);
}

inline rd::Case make_case(size_t n, rd::DType dtype, uint64_t seed, int calls = 1) {
  rd::Case c;
  c.n = n;
  c.dtype = dtype;
  c.seed = seed;
  c.workspace = reduce_workspace_size(n);
  c.calls = calls;
  return c;
}

}  // namespace lab05
