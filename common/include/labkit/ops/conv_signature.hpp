// The conv op family's signature (lab 07): forward 2D convolution, NCHW float32; the launcher
// is fn(x, w, bias, y, shape, workspace, stream), with bias nullptr when there is none. The one
// declaration of its buffers and parameters (labkit/signature.hpp): the worker, the judge and
// the benchmark derive theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labkit/signature.hpp"

namespace labkit::ops::conv {

// The family's own copy of a lab's shape struct (the judge never includes student code).
struct Shape {
  int64_t n = 1, c_in = 1, h = 1, w = 1;  // input N x C_in x H x W
  int64_t c_out = 1, k = 1;               // filter C_out x C_in x K x K
  int64_t stride = 1, pad = 0;
  int64_t h_out() const { return (h + 2 * pad - k) / stride + 1; }
  int64_t w_out() const { return (w + 2 * pad - k) / stride + 1; }
  uint64_t x_count() const { return uint64_t(n * c_in * h * w); }
  uint64_t w_count() const { return uint64_t(c_out * c_in * k * k); }
  uint64_t y_count() const { return uint64_t(n * c_out * h_out() * w_out()); }
  double flop() const { return 2.0 * double(y_count()) * double(c_in * k * k); }
  // "N=2 C_in=3 9x11 -> C_out=5 K=3 S=2 P=1 (out 5x6)" (conv.cpp, the judge's side)
  std::string describe() const;
  // Throws std::invalid_argument unless every size is >= 1, pad >= 0 and K <= H + 2P, W + 2P.
  void validate() const;
};

struct Sig {
  struct Param {
    enum : int { kN, kCIn, kH, kW, kCOut, kK, kStride, kPad, kHasBias, kCount };
  };
  enum Buf : int { kX, kW, kBias, kY, kWorkspace, kCount };
  struct Sizes {
    Shape shape;
    uint64_t workspace;  // float elements (the lab's conv_workspace_size(shape))
  };
  static constexpr BufDecl<Sizes> kBufs[] = {
      {kX, "x", protocol::Role::kInput, DType::kF32,
       [](const Sizes& z) {
         const Shape& s = z.shape;
         return Dims{uint64_t(s.n), uint64_t(s.c_in), uint64_t(s.h), uint64_t(s.w)};
       }},
      {kW, "w", protocol::Role::kInput, DType::kF32,
       [](const Sizes& z) {
         const Shape& s = z.shape;
         return Dims{uint64_t(s.c_out), uint64_t(s.c_in), uint64_t(s.k), uint64_t(s.k)};
       }},
      // C_out values, always allocated: the launcher gets nullptr when the call has no bias.
      {kBias, "bias", protocol::Role::kInput, DType::kF32,
       [](const Sizes& z) { return Dims{uint64_t(z.shape.c_out)}; }},
      {kY, "y", protocol::Role::kOutput, DType::kF32,
       [](const Sizes& z) {
         const Shape& s = z.shape;
         return Dims{uint64_t(s.n), uint64_t(s.c_out), uint64_t(s.h_out()), uint64_t(s.w_out())};
       }},
      {kWorkspace, "workspace", protocol::Role::kInOut, DType::kF32,
       [](const Sizes& z) { return Dims{z.workspace}; }},
  };
  static std::vector<int64_t> params(const Shape& s, bool bias) {
    return {s.n, s.c_in, s.h, s.w, s.c_out, s.k, s.stride, s.pad, bias ? 1 : 0};
  }
};
static_assert(signature_ok(Sig::kBufs, Sig::kCount), "conv: one row per buffer, in enum order");

}  // namespace labkit::ops::conv
