// The spmv op family, worker side (lab 06): how a launcher is called.
#pragma once

#include <cuda_runtime.h>

#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/worker.hpp"

namespace labkit::ops::spmv {

// y = A x for a CSR matrix A (rows x cols, nnz entries, 32-bit indices, float values).
using Launcher = void (*)(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                          const float* values, const float* x, float* y, void* workspace,
                          cudaStream_t stream);

// Buffers: 0 = row_ptr (rows + 1), 1 = col_idx (nnz), 2 = values (nnz), 3 = x (cols),
// 4 = y (rows), 5 = workspace. Parameters: rows, cols, nnz.
inline void invoke(Launcher fn, const worker::Call& call) {
  fn(static_cast<int>(call.param(0)), static_cast<int>(call.param(1)),
     static_cast<int>(call.param(2)), call.buffer<const int>(0), call.buffer<const int>(1),
     call.buffer<const float>(2), call.buffer<const float>(3), call.buffer<float>(4),
     call.buffer<void>(5), call.stream);
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Launcher>> t) {
  return worker::bind<Launcher>(t, &invoke);
}

}  // namespace labkit::ops::spmv
