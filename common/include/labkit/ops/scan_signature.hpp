// The scan op family's signature (lab 08): out[0] = 0, out[i] = in[0] + ... + in[i - 1], float
// or int; the launcher is fn(in, out, n, workspace, stream), one instantiation per element type.
// The one declaration of its buffers and parameters (labkit/signature.hpp): the worker, the
// judge and the benchmark derive theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::scan {

struct Sig {
  struct Param {
    enum : int { kN, kDType, kCount };
  };
  enum Buf : int { kIn, kOut, kWorkspace, kCount };
  struct Sizes {
    uint64_t n;          // elements of `in` and of `out`
    uint64_t workspace;  // elements (the lab's scan_workspace_size(n))
    DType dtype;         // of every buffer: kF32 or kI32
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kIn, "in", protocol::Role::kInput, DType::kF32, [](const Sizes& s) { return Dims{s.n}; },
       [](const Sizes& s) { return s.dtype; }},
      {kOut, "out", protocol::Role::kOutput, DType::kF32, [](const Sizes& s) { return Dims{s.n}; },
       [](const Sizes& s) { return s.dtype; }},
      {kWorkspace, "workspace", protocol::Role::kInOut, DType::kF32,
       [](const Sizes& s) { return Dims{s.workspace}; }, [](const Sizes& s) { return s.dtype; }},
  };

  // The dtype parameter on the wire: 0 f32, 1 i32.
  static constexpr int64_t kF32Param = 0, kI32Param = 1;
  static std::vector<int64_t> params(size_t n, DType dtype) {
    if (dtype != DType::kF32 && dtype != DType::kI32) {
      throw std::invalid_argument("scan: the element type is f32 or i32");
    }
    return {static_cast<int64_t>(n), dtype == DType::kF32 ? kF32Param : kI32Param};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount), "scan: one row per buffer, in enum order");

}  // namespace labkit::ops::scan
