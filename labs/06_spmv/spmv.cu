// Lab 06: sparse matrix-vector multiply in CSR. THIS is the file you edit (and the only one
// the grader takes).
//
// y = A x, A rows x cols in CSR (row_ptr, col_idx, values), any rows/cols >= 1, nnz >= 0.
// Three versions: v1 one thread per row, v2 one warp per row, v3 your fastest (row binning,
// CSR-adaptive, merge path: see README.md). Read README.md in this folder first. Build and
// test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 06  (your grade)
#include "spmv.h"

#include <cstddef>
#include <cstdint>

namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr unsigned kScalarBlock = 256;  // v1: threads per block = rows per block
constexpr unsigned kVectorBlock = 256;  // v2: threads per block = 8 warps = 8 rows per block

// Sum over the W lanes of each aligned group of W lanes of a warp (W = 2, 4, ..., 32); lane 0
// of each group must hold its group's sum on return. Every lane of the warp must call it.
template <int W>
__device__ __forceinline__ float group_sum(float v) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Halve the distance each step: offset = W/2, W/4, ..., 1:
  //   v += __shfl_down_sync(kFullMask, v, offset, W);
  // The last argument keeps the shuffle inside each group of W lanes.
  return v;  // placeholder: only lane 0's own value
  // ---- TODO(student) END ---------------------------------------------------------------
}

}  // namespace

// spmv_v1_scalar_kernel: one thread per row walks its row.
// Memory traffic: row_ptr twice per row, every entry's value and column once, x gathered.
// Known limit: neighbouring threads read entries a whole row apart (uncoalesced), and one
// long row keeps its warp busy while the other 31 lanes wait.
__global__ void spmv_v1_scalar_kernel(int rows, const int* __restrict__ row_ptr,
                                      const int* __restrict__ col_idx,
                                      const float* __restrict__ values,
                                      const float* __restrict__ x, float* __restrict__ y) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. row = blockIdx.x * blockDim.x + threadIdx.x, computed in size_t; return if row >= rows.
  // 2. Row `row` holds the entries e = row_ptr[row] .. row_ptr[row + 1] - 1.
  // 3. sum += values[e] * x[col_idx[e]]  (the value of the entry times x at its COLUMN).
  // 4. y[row] = sum: WRITE it, for every row, empty ones too (y holds garbage on entry).
  (void)rows; (void)row_ptr; (void)col_idx; (void)values; (void)x; (void)y;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

void spmv_v1_scalar(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* workspace,
                    cudaStream_t stream) {
  (void)cols; (void)nnz; (void)workspace;
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // ceil(rows / kScalarBlock) blocks of kScalarBlock threads, on `stream`.
  (void)kScalarBlock;
  (void)rows; (void)row_ptr; (void)col_idx; (void)values; (void)x; (void)y; (void)stream;
  // ---- TODO(student) END ---------------------------------------------------------------
}

// spmv_v2_vector_kernel: one warp per row; lane l takes entries start + l, start + l + 32, ...
// (a warp reads 32 consecutive entries at once), then a shuffle reduction.
// Memory traffic: as v1, coalesced.
// Known limit: a row of 3 entries keeps 29 lanes idle, and the 5 shuffle steps cost as much
// as the row itself.
__global__ void spmv_v2_vector_kernel(int rows, const int* __restrict__ row_ptr,
                                      const int* __restrict__ col_idx,
                                      const float* __restrict__ values,
                                      const float* __restrict__ x, float* __restrict__ y) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. row = (blockIdx.x * blockDim.x + threadIdx.x) / 32 in size_t (at 2^26 rows the thread
  //    number passes 2^31), lane = threadIdx.x % 32. Return if row >= rows: the whole warp
  //    returns together, so the shuffles below still see all 32 lanes.
  // 2. for (int64_t e = row_ptr[row] + lane; e < row_ptr[row + 1]; e += 32)
  //      sum += values[e] * x[col_idx[e]];
  //    Loop over the WHOLE row: rows can be much longer than 32 entries. (int64_t: an int
  //    `e += 32` overflows when the row ends within 32 of 2^31 - 1.)
  // 3. sum = group_sum<32>(sum); lane 0 writes y[row].
  (void)rows; (void)row_ptr; (void)col_idx; (void)values; (void)x; (void)y;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

void spmv_v2_vector(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* workspace,
                    cudaStream_t stream) {
  (void)cols; (void)nnz; (void)workspace;
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // kVectorBlock / 32 rows per block: ceil(rows / 8) blocks of kVectorBlock threads.
  (void)kVectorBlock; (void)kWarp; (void)kFullMask;
  (void)rows; (void)row_ptr; (void)col_idx; (void)values; (void)x; (void)y; (void)stream;
  // ---- TODO(student) END ---------------------------------------------------------------
}

// ---------------------------------------------------------------------------------------------
// v3: as fast as you can make it, on every kind of matrix (the benchmark: a Laplacian, 32
// random columns per row, power-law row lengths, one dense row among short ones). README.md
// walks through row binning; CSR-stream and merge path are fine too. You may add kernels,
// constants and helpers. `workspace` (spmv_workspace_bytes(rows, nnz) bytes of garbage) is
// yours: clear what you read with cudaMemsetAsync(..., stream) or a kernel of your own.
//
// A plan (row binning):
//   1. Pick a sub-warp width W (2..32) from the mean row length nnz / rows (the host knows
//      it): about 4 entries per lane.
//   2. A kernel with W lanes per row computes the rows of up to W * 32 entries in place
//      (group_sum<W>) and appends the longer ones to a list in workspace (atomicAdd on a
//      counter you cleared first); very long rows (> 16384) to a second list, with y[row] = 0.
//   3. A warp-per-row kernel over the first list; a kernel that spreads each row of the
//      second list over all its blocks, each adding its chunk's sum with atomicAdd(&y[row]).
//   Launch the list passes with a fixed grid: they read the counters on the device.
// ---------------------------------------------------------------------------------------------

void spmv_v3_best(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* workspace,
                  cudaStream_t stream) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  (void)rows; (void)cols; (void)nnz; (void)row_ptr; (void)col_idx; (void)values; (void)x;
  (void)y; (void)workspace; (void)stream;  // placeholder: launches nothing
  // ---- TODO(student) END ---------------------------------------------------------------
}
