// The matmul op family, worker side: how a launcher is called from a worker request.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/worker.hpp"

namespace labkit::ops::matmul {

using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream);

// Buffers: 0 = A, 1 = B, 2 = C. Parameters: M, N, K.
inline void invoke(Launcher fn, const worker::Call& call) {
  fn(call.buffer<const float>(0), call.buffer<const float>(1), call.buffer<float>(2),
     static_cast<int>(call.param(0)), static_cast<int>(call.param(1)),
     static_cast<int>(call.param(2)), call.stream);
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Launcher>> t) {
  return worker::bind<Launcher>(t, &invoke);
}

}  // namespace labkit::ops::matmul
