// The spmv op family, worker side (lab 06): how a launcher is called.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/ops/spmv_signature.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::spmv {

// y = A x for a CSR matrix A (rows x cols, nnz entries, 32-bit indices, float values).
using Launcher = void (*)(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                          const float* values, const float* x, float* y, void* workspace,
                          cudaStream_t stream);

// Buffers and parameters as the family's signature declares them (spmv_signature.hpp).
inline void invoke(Launcher fn, const worker::Call& call) {
  fn(static_cast<int>(call.param(Sig::Param::kRows)),
     static_cast<int>(call.param(Sig::Param::kCols)),
     static_cast<int>(call.param(Sig::Param::kNnz)), call.buffer<const int>(Sig::kRowPtr),
     call.buffer<const int>(Sig::kColIdx), call.buffer<const float>(Sig::kValues),
     call.buffer<const float>(Sig::kX), call.buffer<float>(Sig::kY),
     call.buffer<void>(Sig::kWorkspace), call.stream);
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Launcher>> t) {
  return worker::bind<Launcher>(t, &invoke);
}

}  // namespace labkit::ops::spmv
