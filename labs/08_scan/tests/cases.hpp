// What the public and hidden tests of lab 08 share: the variant names and test naming.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/scan.hpp"
#include "labkit/worker.hpp"
#include "scan.h"

namespace lab08 {

namespace sc = labkit::ops::scan;

// The variant names of scan.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {SCAN_VARIANTS(LABKIT_VARIANT_NAME)};
inline const std::vector<sc::DType> kDTypes = {sc::DType::kF32, sc::DType::kI32};

using Param = std::tuple<std::string, sc::DType, size_t>;

// "v2_blelloch_i32_n1025"
inline std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [variant, dtype, n] = info.param;
  return variant + "_" + sc::dtype_name(dtype) + "_n" + std::to_string(n);
}

// From 2^26 elements (256 MiB) the inputs are drawn on the GPU by the worker (the same
// distributions) and the output is checked there against the judge's own draw and scan:
// nothing that size goes through the host. The sizes below stay on the host, so both paths are
// tested.
inline constexpr size_t kDeviceInputsFrom = size_t{1} << 26;

inline sc::Case make_case(size_t n, sc::DType dtype, uint64_t seed, int calls = 1) {
  sc::Case c;
  c.n = n;
  c.dtype = dtype;
  c.seed = seed;
  c.workspace = scan_workspace_size(n);
  c.calls = calls;
  c.device_inputs = n >= kDeviceInputsFrom;
  return c;
}

// `in` at an element offset from a 16-byte boundary: the tests of "any pointer".
using OffsetParam = std::tuple<std::string, sc::DType, size_t, uint32_t>;

// "v3_single_pass_f32_n1048579_off3"
inline std::string offset_param_name(const ::testing::TestParamInfo<OffsetParam>& info) {
  const auto& [variant, dtype, n, offset] = info.param;
  return variant + "_" + sc::dtype_name(dtype) + "_n" + std::to_string(n) + "_off" +
         std::to_string(offset);
}

}  // namespace lab08
