// The matmul op family's signature (labs 01-04, 10): C[M x N] = A[M x K] * B[K x N], row-major;
// C in float32, A and B in float32 (labs 01-04: fn(A, B, C, M, N, K, stream)) or in a 16-bit
// float (lab 10: IEEE half or bfloat16, one instantiation of the launcher each). The one
// declaration of its buffers and parameters (labkit/signature.hpp): the worker, the judge and
// the benchmark derive theirs.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::matmul {

struct Sig {
  struct Param {
    enum : int { kM, kN, kK, kDType, kCount };
  };
  enum Buf : int { kA, kB, kC, kCount };
  struct Sizes {
    uint64_t M, N, K;
    DType in = DType::kF32;  // of A and B: kF32, kF16 or kBF16
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kA, "A", protocol::Role::kInput, DType::kF32,
       [](const Sizes& s) { return Dims{s.M, s.K}; }, [](const Sizes& s) { return s.in; }},
      {kB, "B", protocol::Role::kInput, DType::kF32,
       [](const Sizes& s) { return Dims{s.K, s.N}; }, [](const Sizes& s) { return s.in; }},
      {kC, "C", protocol::Role::kOutput, DType::kF32,
       [](const Sizes& s) { return Dims{s.M, s.N}; }},
  };

  // The inputs' type on the wire: 0 float32, 1 IEEE half, 2 bfloat16.
  static constexpr int64_t kF32Param = 0, kF16Param = 1, kBF16Param = 2;
  static std::vector<int64_t> params(int M, int N, int K, DType in = DType::kF32) {
    const int64_t type = in == DType::kF32    ? kF32Param
                         : in == DType::kF16  ? kF16Param
                         : in == DType::kBF16 ? kBF16Param
                                              : -1;
    if (type < 0) throw std::invalid_argument("matmul: the inputs are f32, f16 or bf16");
    return {M, N, K, type};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount), "matmul: one row per buffer, in enum order");

}  // namespace labkit::ops::matmul
