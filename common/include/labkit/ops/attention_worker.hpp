// The attention op family, worker side (lab 11): how a launcher pair is called.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/ops/attention_signature.hpp"
#include "labkit/ops/half_pair.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::attention {

template <typename T>
using Launcher = void (*)(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                          int head_dim, bool causal, cudaStream_t stream);

// One variant: its IEEE half and its bfloat16 instantiation.
using Pair = HalfPair<Launcher>;

namespace detail {
template <typename T>
void call(Launcher<T> fn, const worker::Call& call) {
  fn(call.buffer<const T>(Sig::kQ), call.buffer<const T>(Sig::kK), call.buffer<const T>(Sig::kV),
     call.buffer<T>(Sig::kO), static_cast<int>(call.param(Sig::Param::kBatchHeads)),
     static_cast<int>(call.param(Sig::Param::kSeq)),
     static_cast<int>(call.param(Sig::Param::kHeadDim)), call.param(Sig::Param::kCausal) != 0,
     call.stream);
}
}  // namespace detail

// Buffers and parameters as the family's signature declares them (attention_signature.hpp).
inline void invoke(Pair fn, const worker::Call& call) {
  invoke_half_pair<Sig>(fn, call, [&](auto one) { detail::call(one, call); }, "attention");
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Pair>> t) {
  return worker::bind<Pair>(t, &invoke);
}

}  // namespace labkit::ops::attention

// One row of lab 11's X-macro table (ATTENTION_VARIANTS): both instantiations of the launcher
// template.
#define LABKIT_ATTENTION_ENTRY(name, fn) \
  {#name, ::labkit::ops::attention::Pair{&fn<__half>, &fn<__nv_bfloat16>}},
