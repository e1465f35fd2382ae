// Lab 06 interface: sparse matrix-vector multiply, y = A x, A in CSR.
//
//   y[r] = sum over e in [row_ptr[r], row_ptr[r + 1]) of values[e] * x[col_idx[e]]
//
// A is rows x cols with nnz stored entries:
//   row_ptr[rows + 1]   non-decreasing, row_ptr[0] = 0, row_ptr[rows] = nnz
//   col_idx[nnz]        each in [0, cols)
//   values[nnz]         float
//   x[cols], y[rows]    float
//
// What the harness promises, and what it does not:
//   - rows >= 1 and cols >= 1 (a matrix with no rows has nothing to compute: it is not
//     tested); rows != cols is allowed both ways; nnz >= 0, and nnz = 0 means y = 0.
//   - Rows may be empty (row_ptr[r] == row_ptr[r + 1]): y[r] must be written, as exactly 0.
//   - Within a row the columns come in ANY order, and the same column may appear more than
//     once: duplicate entries add up (each contributes values[e] * x[col]), as in cuSPARSE.
//   - Sizes: nnz <= 2^31 - 1 and rows, cols <= 2^31 - 1, so every index fits in an int. The
//     tests go up to nnz = 2^31 - 1. An index is an int, but a PRODUCT of indices is not:
//     a thread number blockIdx.x * blockDim.x + threadIdx.x overflows int once the grid has
//     2^31 threads (4M rows at one warp per row is 2^27 threads: fine; one thread per entry
//     at nnz near 2^31 is not). Compute thread and warp numbers in size_t / long long before
//     comparing them with rows, and step strided loops over entries in 64 bits
//     (`for (int e = ...; e < end; e += 32)` overflows when end is within 32 of 2^31 - 1).
//   - y is fully overwritten: its contents on entry are garbage (the harness fills it with
//     NaN). Never add into it without writing it first.
//   - `workspace` is device scratch of at least spmv_workspace_bytes(rows, nnz) bytes, 256-byte
//     aligned, holding garbage on entry (the harness refills it before every call). Use it or
//     not; only v3_best is expected to need it.
//
// All pointers are device pointers. The launcher enqueues everything on `stream` and returns
// without synchronizing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Bytes of `workspace` for a matrix of `rows` rows and `nnz` entries: two 32-bit words per
// row (room for a list of rows sorted into bins, or block boundaries) plus 64 KiB for counters
// and per-block partial sums.
inline constexpr size_t spmv_workspace_bytes(size_t rows, size_t /*nnz*/) {
  return 8 * rows + 65536;
}

// Defined in spmv.cu (the file you edit).
void spmv_v1_scalar(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* workspace,
                    cudaStream_t stream);
void spmv_v2_vector(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* workspace,
                    cudaStream_t stream);
void spmv_v3_best(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* workspace,
                  cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher). Tests and benchmarks loop
// over this table.
#define SPMV_VARIANTS(X)             \
  X(v1_scalar, spmv_v1_scalar)       \
  X(v2_vector, spmv_v2_vector)       \
  X(v3_best, spmv_v3_best)
