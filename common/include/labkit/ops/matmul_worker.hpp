// The matmul op family, worker side: how a launcher is called from a worker request.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <stdexcept>
#include <utility>
#include <vector>

#include "labkit/ops/half_pair.hpp"
#include "labkit/ops/matmul_signature.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::matmul {

// Labs 01-04: float32 inputs.
using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream);

// Lab 10: 16-bit inputs, a launcher template instantiated for IEEE half and bfloat16.
template <typename T>
using Launcher16 = void (*)(const T* A, const T* B, float* C, int M, int N, int K,
                            cudaStream_t stream);
using Pair16 = HalfPair<Launcher16>;

namespace detail {
// (Launcher16<float> is Launcher: labs 01-04 call through it too.)
template <typename T>
void call(Launcher16<T> fn, const worker::Call& call) {
  fn(call.buffer<const T>(Sig::kA), call.buffer<const T>(Sig::kB), call.buffer<float>(Sig::kC),
     static_cast<int>(call.param(Sig::Param::kM)), static_cast<int>(call.param(Sig::Param::kN)),
     static_cast<int>(call.param(Sig::Param::kK)), call.stream);
}
}  // namespace detail

// Buffers and parameters as the family's signature declares them (matmul_signature.hpp).
inline void invoke(Launcher fn, const worker::Call& call) {
  if (call.param(Sig::Param::kDType) != Sig::kF32Param) {
    throw std::invalid_argument("this lab's launchers take float32 inputs");
  }
  detail::call<float>(fn, call);
}

inline void invoke16(Pair16 fn, const worker::Call& call) {
  invoke_half_pair<Sig>(fn, call, [&](auto one) { detail::call(one, call); }, "matmul");
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Launcher>> t) {
  return worker::bind<Launcher>(t, &invoke);
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Pair16>> t) {
  return worker::bind<Pair16>(t, &invoke16);
}

}  // namespace labkit::ops::matmul

// One row of lab 10's X-macro table (GEMM_VARIANTS): both instantiations of the launcher
// template.
#define LABKIT_MATMUL16_ENTRY(name, fn) \
  {#name, ::labkit::ops::matmul::Pair16{&fn<__half>, &fn<__nv_bfloat16>}},
