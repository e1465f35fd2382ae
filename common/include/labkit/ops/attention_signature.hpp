// The attention op family's signature (lab 11): O = softmax(Q K^T / sqrt(d)) V per head, causal
// or not; Q, K, V and O are [batch_heads][seq][head_dim] in one 16-bit float type (IEEE half or
// bfloat16, one instantiation of the launcher each): fn(q, k, v, o, batch_heads, seq, head_dim,
// causal, stream). The one declaration of its buffers and parameters (labkit/signature.hpp): the
// worker, the judge and the benchmark derive theirs.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::attention {

struct Sig {
  struct Param {
    enum : int { kBatchHeads, kSeq, kHeadDim, kCausal, kDType, kCount };
  };
  enum Buf : int { kQ, kK, kV, kO, kCount };
  struct Sizes {
    uint64_t batch_heads, seq, head_dim;
    DType dtype;  // of every buffer: kF16 or kBF16
  };
  static Dims dims(const Sizes& s) { return Dims{s.batch_heads, s.seq, s.head_dim}; }
  static constexpr DType type(const Sizes& s) { return s.dtype; }
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kQ, "Q", protocol::Role::kInput, DType::kF16, &dims, &type},
      {kK, "K", protocol::Role::kInput, DType::kF16, &dims, &type},
      {kV, "V", protocol::Role::kInput, DType::kF16, &dims, &type},
      {kO, "O", protocol::Role::kOutput, DType::kF16, &dims, &type},
  };

  // The element type on the wire: 1 IEEE half, 2 bfloat16 (matmul's numbering).
  static constexpr int64_t kF16Param = 1, kBF16Param = 2;
  static std::vector<int64_t> params(int batch_heads, int seq, int head_dim, bool causal,
                                     DType dtype) {
    if (dtype != DType::kF16 && dtype != DType::kBF16) {
      throw std::invalid_argument("attention: the element type is f16 or bf16");
    }
    if (head_dim != 64 && head_dim != 128) {
      throw std::invalid_argument("attention: head_dim is 64 or 128");
    }
    return {batch_heads, seq, head_dim, causal ? 1 : 0,
            dtype == DType::kF16 ? kF16Param : kBF16Param};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount),
              "attention: one row per buffer, in enum order");

}  // namespace labkit::ops::attention
