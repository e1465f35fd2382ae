// The reduce op family, worker side (lab 05): how a launcher pair (float, int) is called.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/worker.hpp"

namespace labkit::ops::reduce {

template <typename T>
using Launcher = void (*)(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);

// One variant: its float and its int instantiation.
struct Pair {
  Launcher<float> f32;
  Launcher<int> i32;
};

// Buffers: 0 = in, 1 = out (one element), 2 = workspace. Parameters: n, dtype (0 f32, 1 i32).
inline void invoke(Pair fn, const worker::Call& call) {
  const size_t n = static_cast<size_t>(call.param(0));
  if (call.param(1) == 0) {
    fn.f32(call.buffer<const float>(0), call.buffer<float>(1), n, call.buffer<float>(2), call.stream);
  } else {
    fn.i32(call.buffer<const int>(0), call.buffer<int>(1), n, call.buffer<int>(2), call.stream);
  }
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Pair>> t) {
  return worker::bind<Pair>(t, &invoke);
}

}  // namespace labkit::ops::reduce

// One row of a reduce lab's X-macro table: both instantiations of the launcher template.
#define LABKIT_REDUCE_ENTRY(name, fn) {#name, ::labkit::ops::reduce::Pair{&fn<float>, &fn<int>}},
