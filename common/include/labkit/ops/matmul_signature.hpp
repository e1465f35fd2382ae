// The matmul op family's signature (labs 01-04): C[M x N] = A[M x K] * B[K x N], row-major
// float32; the launcher is fn(A, B, C, M, N, K, stream). The one declaration of its buffers and
// parameters (labkit/signature.hpp): the worker, the judge and the benchmark derive theirs.
#pragma once

#include <cstdint>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::matmul {

struct Sig {
  struct Param {
    enum : int { kM, kN, kK, kCount };
  };
  enum Buf : int { kA, kB, kC, kCount };
  struct Sizes {
    uint64_t M, N, K;
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kA, "A", protocol::Role::kInput, DType::kF32,
       [](const Sizes& s) { return Dims{s.M, s.K}; }},
      {kB, "B", protocol::Role::kInput, DType::kF32,
       [](const Sizes& s) { return Dims{s.K, s.N}; }},
      {kC, "C", protocol::Role::kOutput, DType::kF32,
       [](const Sizes& s) { return Dims{s.M, s.N}; }},
  };
  static std::vector<int64_t> params(int M, int N, int K) { return {M, N, K}; }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount), "matmul: one row per buffer, in enum order");

}  // namespace labkit::ops::matmul
