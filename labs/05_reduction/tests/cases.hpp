// What the public and hidden tests of lab 05 share: the variant names and test naming.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/reduce.hpp"
#include "labkit/worker.hpp"
#include "reduce.h"

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

// From 2^26 elements (256 MiB) the inputs are drawn on the GPU (the same distributions) and the
// reference summed there: nothing that size goes through the host, where drawing, summing and
// copying it cost seconds per variant (the 2^28 tests: 2 s each on the host, 0.3 s drawn on
// the GPU, on an H100). The sizes below stay on the host, so both paths are tested.
inline constexpr size_t kDeviceInputsFrom = size_t{1} << 26;

// From 2^24 elements up to the benchmark's sizes a test makes two calls on the same buffers,
// fresh inputs and workspace garbage each: a sum carried over from an earlier call (a host
// static, a __device__ variable) fails within the test itself, whichever tests its worker ran
// before (the grader splits a lab's many tests among several judges, each with its own worker).
// Past 2^31 (8.6 GB a call, tests of index width) one call.
inline constexpr size_t kTwoCallsFrom = size_t{1} << 24;
inline constexpr size_t kTwoCallsBelow = size_t{1} << 31;

// `calls` 0: one, or two from kTwoCallsFrom to kTwoCallsBelow elements.
inline rd::Case make_case(size_t n, rd::DType dtype, uint64_t seed, int calls = 0) {
  rd::Case c;
  c.n = n;
  c.dtype = dtype;
  c.seed = seed;
  c.workspace = reduce_workspace_size(n);
  c.calls = calls > 0 ? calls : (n >= kTwoCallsFrom && n < kTwoCallsBelow ? 2 : 1);
  c.device_inputs = n >= kDeviceInputsFrom;
  return c;
}

// `in` at an element offset from a 16-byte boundary: the tests of "any pointer".
using OffsetParam = std::tuple<std::string, rd::DType, size_t, uint32_t>;

// "v4_optimized_f32_n1048579_off3"
inline std::string offset_param_name(const ::testing::TestParamInfo<OffsetParam>& info) {
  const auto& [variant, dtype, n, offset] = info.param;
  return variant + "_" + rd::dtype_name(dtype) + "_n" + std::to_string(n) + "_off" +
         std::to_string(offset);
}

}  // namespace lab05
