// The matmul op family, worker side: how a launcher is called from a worker request.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/ops/matmul_signature.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::matmul {

using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream);

// Buffers and parameters as the family's signature declares them (matmul_signature.hpp).
inline void invoke(Launcher fn, const worker::Call& call) {
  fn(call.buffer<const float>(Sig::kA), call.buffer<const float>(Sig::kB),
     call.buffer<float>(Sig::kC), static_cast<int>(call.param(Sig::Param::kM)),
     static_cast<int>(call.param(Sig::Param::kN)), static_cast<int>(call.param(Sig::Param::kK)),
     call.stream);
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Launcher>> t) {
  return worker::bind<Launcher>(t, &invoke);
}

}  // namespace labkit::ops::matmul
