// The matmul op family, judge side (labs 01-04, 10): C[M x N] = A[M x K] * B[K x N], row-major,
// C in float32, A and B in float32 or (lab 10) a 16-bit float. A lab's tests pick shapes and seeds; this file knows the buffers, the inputs, the
// double-precision reference, the error bound and the row/column/tile "where" map; its buffers
// are declared once, in matmul_signature.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "labkit/check.hpp"
#include "labkit/ops/matmul_reference.hpp"
#include "labkit/ops/matmul_signature.hpp"

namespace labkit::ops::matmul {

struct Case {
  int M = 1, N = 1, K = 1;
  uint64_t seed = 1;
  int calls = 1;         // > 1: call again on fresh inputs each time (same buffers), check each
  bool capture = false;  // record the launcher under stream capture: all work onto `stream`
  DType dtype = DType::kF32;  // of A and B: kF32, or kF16 / kBF16 (lab 10; float32 sums alike)
};

// The check of variant `variant` of the lab's worker on random A, B from the seed
// (labkit::check runs it): every element of C, the canaries, and that A and B are unchanged.
CheckSpec spec(const std::string& variant, const Case& c);

}  // namespace labkit::ops::matmul
