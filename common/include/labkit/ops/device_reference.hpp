// The judges' double-precision references of the families' sums, on the GPU
// (common/src/ops/device_reference.cu, in the judges only: CUB's device-wide algorithms, no
// hand-written reduction).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace labkit {

// The sum of x[0..count) and of |x|, in double (a float sum's
// reference); synchronises.
struct SumAbs {
  double sum = 0;
  double abs_sum = 0;
};
SumAbs sum_abs_f64(const float* x, size_t count, cudaStream_t stream);
// y = A x's reference for a CSR matrix (32-bit indices, rows up to nnz = 2^31 - 1): per row, the
// sum of a x and of |a x| in double, into ref[rows] and abs_ref[rows] (device), by CUB's
// segmented reduction (device_reference.cu); synchronises.
void spmv_reference_f64(const int32_t* row_ptr, const int32_t* col_idx, const float* values,
                        const float* x, int64_t rows, double* ref, double* abs_ref,
                        cudaStream_t stream);
// The exact sum of x[0..count) in 64 bits (an int sum's reference; device_reference.cu);
// synchronises.
int64_t sum_i32_i64(const int32_t* x, size_t count, cudaStream_t stream);

}  // namespace labkit
