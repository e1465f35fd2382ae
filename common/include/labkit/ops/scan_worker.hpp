// The scan op family, worker side (lab 08): how a launcher pair (float, int) is called.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/ops/scan_signature.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::scan {

template <typename T>
using Launcher = void (*)(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);

// One variant: its float and its int instantiation.
struct Pair {
  Launcher<float> f32;
  Launcher<int> i32;
};

// Buffers and parameters as the family's signature declares them (scan_signature.hpp).
inline void invoke(Pair fn, const worker::Call& call) {
  const size_t n = static_cast<size_t>(call.param(Sig::Param::kN));
  if (call.param(Sig::Param::kDType) == Sig::kF32Param) {
    fn.f32(call.buffer<const float>(Sig::kIn), call.buffer<float>(Sig::kOut), n,
           call.buffer<float>(Sig::kWorkspace), call.stream);
  } else {
    fn.i32(call.buffer<const int>(Sig::kIn), call.buffer<int>(Sig::kOut), n,
           call.buffer<int>(Sig::kWorkspace), call.stream);
  }
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Pair>> t) {
  return worker::bind<Pair>(t, &invoke);
}

}  // namespace labkit::ops::scan

// One row of a scan lab's X-macro table: both instantiations of the launcher template.
#define LABKIT_SCAN_ENTRY(name, fn) {#name, ::labkit::ops::scan::Pair{&fn<float>, &fn<int>}},
