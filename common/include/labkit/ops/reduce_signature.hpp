// The reduce op family's signature (lab 05): out[0] = sum of in[0..n), float or int; the
// launcher is fn(in, out, n, workspace, stream), one instantiation per element type. The one
// declaration of its buffers and parameters (labkit/signature.hpp): the worker, the judge and
// the benchmark derive theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::reduce {

struct Sig {
  struct Param {
    enum : int { kN, kDType, kCount };
  };
  enum Buf : int { kIn, kOut, kWorkspace, kCount };
  struct Sizes {
    uint64_t n;          // elements of `in`
    uint64_t workspace;  // elements (the lab's reduce_workspace_size(n))
    DType dtype;         // of every buffer: kF32 or kI32
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kIn, "in", protocol::Role::kInput, DType::kF32, [](const Sizes& s) { return Dims{s.n}; },
       [](const Sizes& s) { return s.dtype; }},
      {kOut, "out", protocol::Role::kOutput, DType::kF32, [](const Sizes&) { return Dims{1}; },
       [](const Sizes& s) { return s.dtype; }},
      {kWorkspace, "workspace", protocol::Role::kInOut, DType::kF32,
       [](const Sizes& s) { return Dims{s.workspace}; }, [](const Sizes& s) { return s.dtype; }},
  };

  // The dtype parameter on the wire: 0 f32, 1 i32.
  static constexpr int64_t kF32Param = 0, kI32Param = 1;
  static std::vector<int64_t> params(size_t n, DType dtype) {
    if (dtype != DType::kF32 && dtype != DType::kI32) {
      throw std::invalid_argument("reduce: the element type is f32 or i32");
    }
    return {static_cast<int64_t>(n), dtype == DType::kF32 ? kF32Param : kI32Param};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount), "reduce: one row per buffer, in enum order");

}  // namespace labkit::ops::reduce
