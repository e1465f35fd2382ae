// The conv op family, worker side (lab 07): how a launcher is called, and the GEMM the lab
// provides to the student's im2col variant (in that variant's worker only).
//
// The shape struct is the lab's own (its header is the only one the student's file may
// include), so the launcher type is a template over it; the lab's worker binds
// `bind<ConvShape>({CONV_VARIANTS(LABKIT_WORKER_ENTRY)})`. The struct must have the int
// members n, c_in, h, w, c_out, k, stride, pad.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/ops/conv_signature.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::conv {

template <typename Shape>
using Launcher = void (*)(const float* x, const float* w, const float* bias, float* y,
                          Shape shape, float* workspace, cudaStream_t stream);

// The GEMM's two calls as helper ops of a plan (labkit/helper.hpp; the executor's side is
// common/src/ops/conv_gemm.cu), and what a variant that is not given them gets.
inline constexpr uint32_t kHelperSgemm = 1;
inline constexpr uint32_t kHelperSgemmBatched = 2;
inline constexpr const char* kHelperRefusal =
    "conv_sgemm is given for v1_im2col only (the GEMM of the explicit im2col variant); this "
    "variant must compute its product itself";

// Creates the cuBLAS handle and its workspace behind conv_sgemm (common/src/ops/conv_gemm.cu).
// Called by the lab's worker at start-up, before any request: creating them inside a launcher
// that is being recorded into a graph would allocate during the capture. Never throws; a
// failure is reported by the first conv_sgemm call. In the worker of the variants not given
// the GEMM (conv_gemm_stub.cpp: no cuBLAS there) it does nothing.
void gemm_setup() noexcept;

// Buffers and parameters as the family's signature declares them (conv_signature.hpp); the
// bias buffer is always allocated, and the launcher gets nullptr when has_bias is 0.
template <typename Shape>
void invoke(Launcher<Shape> fn, const worker::Call& call) {
  using P = Sig::Param;
  Shape s{};
  s.n = static_cast<int>(call.param(P::kN));
  s.c_in = static_cast<int>(call.param(P::kCIn));
  s.h = static_cast<int>(call.param(P::kH));
  s.w = static_cast<int>(call.param(P::kW));
  s.c_out = static_cast<int>(call.param(P::kCOut));
  s.k = static_cast<int>(call.param(P::kK));
  s.stride = static_cast<int>(call.param(P::kStride));
  s.pad = static_cast<int>(call.param(P::kPad));
  const float* bias = call.param(P::kHasBias) != 0 ? call.buffer<const float>(Sig::kBias) : nullptr;
  fn(call.buffer<const float>(Sig::kX), call.buffer<const float>(Sig::kW), bias,
     call.buffer<float>(Sig::kY), s, call.buffer<float>(Sig::kWorkspace), call.stream);
}

template <typename Shape>
std::vector<worker::Variant> bind(
    std::initializer_list<std::pair<const char*, Launcher<Shape>>> table) {
  return worker::bind<Launcher<Shape>>(table, &invoke<Shape>);
}

}  // namespace labkit::ops::conv
