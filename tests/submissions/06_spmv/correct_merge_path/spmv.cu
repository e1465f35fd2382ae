// CORRECT: v3 is merge-path SpMV: equal work per thread over the merge of row ends and entries
// (binary search on each thread's diagonal), finished rows written with =, the part of the row a
// thread ends in added by a second kernel with atomicAdd. Carries live in the workspace.
#include "spmv.h"

#include <cstddef>
#include <cstdint>

namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;

// v1, v2.
constexpr unsigned kScalarBlock = 256;  // threads per block: 256 rows
constexpr unsigned kVectorBlock = 256;  // threads per block: 8 rows (one warp each)

// v3.
constexpr unsigned kBestBlock = 256;         // threads per block, every v3 kernel
constexpr int kEntriesPerLane = 4;           // sub-warp width: mean row length / this, rounded
                                             // up to a power of two in [kMinWidth, 32]
constexpr int kMinWidth = 2;
constexpr int kShortTrips = 32;              // a row of <= width * kShortTrips entries is done in
                                             // place by its sub-warp; longer ones are deferred
constexpr int kHugeRow = 1 << 14;            // deferred rows longer than this: the whole grid
constexpr int kChunk = kBestBlock * 8;       // entries per block and trip of a huge row
constexpr unsigned kDeferredBlocks = 1024;   // grid of the two deferred passes
constexpr size_t kListOffset = 256;          // bytes: counters first, then the row list

static_assert(kScalarBlock % kWarp == 0 && kVectorBlock % kWarp == 0 && kBestBlock % kWarp == 0,
              "blocks of whole warps");
static_assert(kBestBlock <= 1024 && kBestBlock / kWarp <= kWarp, "block sums reduced by one warp");

// Strided loops over entries step in 64 bits: with nnz up to 2^31 - 1, `e += 32` on an int
// would overflow for the last entries of the matrix.

// Sum over the `width` lanes of each aligned group of a warp; lane 0 of the group holds it.
// Every lane of the warp must call it (full mask).
template <int W>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int offset = W / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset, W);
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// spmv_v1_scalar_kernel: one thread per row walks its row.
// Memory traffic: row_ptr twice per row, every entry's value and column once, x gathered.
// Known limit: neighbouring threads read entries a row apart (uncoalesced unless rows are
// about one entry long), and one long row keeps its warp busy while 31 lanes idle.
// ---------------------------------------------------------------------------------------------
__global__ void __launch_bounds__(kScalarBlock)
spmv_v1_scalar_kernel(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                      const float* __restrict__ values, const float* __restrict__ x,
                      float* __restrict__ y) {
  const size_t row = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= static_cast<size_t>(rows)) return;
  const int start = row_ptr[row], end = row_ptr[row + 1];
  float sum = 0.0f;
  for (int e = start; e < end; ++e) sum += values[e] * x[col_idx[e]];
  y[row] = sum;  // written for every row, empty ones included
}

void spmv_v1_scalar(int rows, int /*cols*/, int /*nnz*/, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* /*workspace*/,
                    cudaStream_t stream) {
  const size_t blocks = (static_cast<size_t>(rows) + kScalarBlock - 1) / kScalarBlock;
  spmv_v1_scalar_kernel<<<static_cast<unsigned>(blocks), kScalarBlock, 0, stream>>>(
      rows, row_ptr, col_idx, values, x, y);
}

// ---------------------------------------------------------------------------------------------
// spmv_v2_vector_kernel: one warp per row; lane l takes entries start + l, start + l + 32, ...
// (coalesced), then a shuffle reduction.
// Memory traffic: as v1, but each warp's loads are 32 consecutive entries.
// Known limit: a row of 3 entries keeps 29 lanes idle, and the 5 shuffle steps cost as much
// as the row itself.
// ---------------------------------------------------------------------------------------------
__global__ void __launch_bounds__(kVectorBlock)
spmv_v2_vector_kernel(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                      const float* __restrict__ values, const float* __restrict__ x,
                      float* __restrict__ y) {
  // size_t: at rows >= 2^26 the thread number passes 2^31.
  const size_t row = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (row >= static_cast<size_t>(rows)) return;  // the same for the whole warp
  const int start = row_ptr[row], end = row_ptr[row + 1];
  float sum = 0.0f;
  for (int64_t e = start + static_cast<int64_t>(lane); e < end; e += kWarp) sum += values[e] * x[col_idx[e]];
  sum = group_sum<kWarp>(sum);
  if (lane == 0) y[row] = sum;
}

void spmv_v2_vector(int rows, int /*cols*/, int /*nnz*/, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* /*workspace*/,
                    cudaStream_t stream) {
  constexpr size_t rows_per_block = kVectorBlock / kWarp;
  const size_t blocks = (static_cast<size_t>(rows) + rows_per_block - 1) / rows_per_block;
  spmv_v2_vector_kernel<<<static_cast<unsigned>(blocks), kVectorBlock, 0, stream>>>(
      rows, row_ptr, col_idx, values, x, y);
}

// v3: merge path (Merrill and Garland). The rows' end offsets (row_ptr + 1) and the entry
// indices 0..nnz-1 are merged; thread t takes items [t * ipt, (t + 1) * ipt) of the merge, found
// by a binary search along its diagonal, so every thread does the same work whatever the row
// lengths. A row finished by a thread gets y[row] = (that thread's part); the part of the row a
// thread ends inside is its carry, added by a second kernel with atomicAdd.
namespace {
constexpr unsigned kMergeBlock = 128;
constexpr int kItemsPerThread = 8;
}  // namespace

__global__ void __launch_bounds__(kMergeBlock)
spmv_v3_merge_kernel(int rows, int nnz, int ipt, const int* __restrict__ row_ptr,
                     const int* __restrict__ col_idx, const float* __restrict__ values,
                     const float* __restrict__ x, float* __restrict__ y, int* __restrict__ carry_row,
                     float* __restrict__ carry_val, long long threads) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  const long long total = static_cast<long long>(rows) + nnz;
  const long long d = t * ipt < total ? t * ipt : total;
  const long long d_end = d + ipt < total ? d + ipt : total;
  // Diagonal search: i rows ended, j = d - i entries consumed.
  long long lo = d - nnz > 0 ? d - nnz : 0, hi = d < rows ? d : rows;
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (row_ptr[mid + 1] <= d - mid - 1) lo = mid + 1; else hi = mid;
  }
  int i = static_cast<int>(lo);
  int j = static_cast<int>(d - lo);
  float sum = 0.0f;
  for (long long k = d; k < d_end; ++k) {
    if (i < rows && j < row_ptr[i + 1]) {
      sum += values[j] * x[col_idx[j]];
      ++j;
    } else {
      y[i] = sum;  // row i ends here
      sum = 0.0f;
      ++i;
    }
  }
  carry_row[t] = i;
  carry_val[t] = sum;
}

__global__ void spmv_v3_carry_kernel(int rows, const int* __restrict__ carry_row,
                                     const float* __restrict__ carry_val, float* __restrict__ y,
                                     long long threads) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < threads && carry_row[t] < rows) atomicAdd(&y[carry_row[t]], carry_val[t]);
}

void spmv_v3_best(int rows, int /*cols*/, int nnz, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* workspace,
                  cudaStream_t stream) {
  const long long total = static_cast<long long>(rows) + nnz;
  // Carries: a row index and a value per thread, within the declared workspace.
  const long long max_threads =
      static_cast<long long>(spmv_workspace_bytes(static_cast<size_t>(rows), static_cast<size_t>(nnz)) / 8);
  long long ipt = kItemsPerThread;
  if ((total + ipt - 1) / ipt > max_threads) ipt = (total + max_threads - 1) / max_threads;
  const long long threads = (total + ipt - 1) / ipt;
  int* carry_row = static_cast<int*>(workspace);
  float* carry_val = reinterpret_cast<float*>(carry_row + threads);
  const unsigned blocks = static_cast<unsigned>((threads + kMergeBlock - 1) / kMergeBlock);
  spmv_v3_merge_kernel<<<blocks, kMergeBlock, 0, stream>>>(rows, nnz, static_cast<int>(ipt), row_ptr,
                                                            col_idx, values, x, y, carry_row,
                                                            carry_val, threads);
  spmv_v3_carry_kernel<<<blocks, kMergeBlock, 0, stream>>>(rows, carry_row, carry_val, y, threads);
}
