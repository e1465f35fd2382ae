// Worker side of the op families whose launcher is fn(in, out, n, workspace, stream), one
// instantiation per element type (float, int): reduce (lab 05) and scan (lab 08). How such a
// launcher pair is called, for a family's signature `Sig` (reduce_signature.hpp,
// scan_signature.hpp: the same buffers in, out, workspace and parameters n, dtype; only the
// sizes differ).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/worker.hpp"

namespace labkit::ops::typed {

template <typename T>
using Launcher = void (*)(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);

// One variant: its float and its int instantiation.
struct Pair {
  Launcher<float> f32;
  Launcher<int> i32;
};

// Buffers and parameters as the family's signature declares them.
template <typename Sig>
void invoke(Pair fn, const worker::Call& call) {
  const size_t n = static_cast<size_t>(call.param(Sig::Param::kN));
  if (call.param(Sig::Param::kDType) == Sig::kF32Param) {
    fn.f32(call.buffer<const float>(Sig::kIn), call.buffer<float>(Sig::kOut), n,
           call.buffer<float>(Sig::kWorkspace), call.stream);
  } else {
    fn.i32(call.buffer<const int>(Sig::kIn), call.buffer<int>(Sig::kOut), n,
           call.buffer<int>(Sig::kWorkspace), call.stream);
  }
}

template <typename Sig>
std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Pair>> table) {
  return worker::bind<Pair>(table, &invoke<Sig>);
}

}  // namespace labkit::ops::typed

// One row of a lab's X-macro table (REDUCE_VARIANTS, SCAN_VARIANTS): both instantiations of
// the launcher template.
#define LABKIT_TYPED_ENTRY(name, fn) {#name, ::labkit::ops::typed::Pair{&fn<float>, &fn<int>}},
