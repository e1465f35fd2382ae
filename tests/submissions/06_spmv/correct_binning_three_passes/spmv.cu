// CORRECT: v3 is row binning without lists: three kernels scan all rows, each taking one
// length class (<= 16 entries: 4 lanes per row; <= 4096: a warp per row; longer: a block per
// row, grid-stride). Every row is in exactly one class, so each y[row] is written once.
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

// v3: binning without lists: three kernels each scan all rows and take only the rows of their
// length class: up to 16 entries 4 lanes per row, up to 4096 a warp per row, longer ones a
// block per row (grid-stride over the rows).
namespace {
constexpr unsigned kBinBlock = 256;
constexpr int kSmallMax = 16, kMediumMax = 4096;
}  // namespace

template <int W>
__global__ void __launch_bounds__(kBinBlock)
spmv_v3_bin_kernel(int rows, int lo_len, int hi_len, const int* __restrict__ row_ptr,
                   const int* __restrict__ col_idx, const float* __restrict__ values,
                   const float* __restrict__ x, float* __restrict__ y) {
  const size_t row = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W;
  const int lane = static_cast<int>(threadIdx.x % W);
  int start = 0, end = 0;
  if (row < static_cast<size_t>(rows)) {
    start = row_ptr[row];
    end = row_ptr[row + 1];
  }
  const bool take = row < static_cast<size_t>(rows) && end - start >= lo_len && end - start <= hi_len;
  float sum = 0.0f;
  if (take) {
    for (int64_t e = start + static_cast<int64_t>(lane); e < end; e += W) sum += values[e] * x[col_idx[e]];
  }
  sum = group_sum<W>(sum);
  if (take && lane == 0) y[row] = sum;
}

__global__ void __launch_bounds__(kBinBlock)
spmv_v3_block_rows_kernel(int rows, int lo_len, const int* __restrict__ row_ptr,
                          const int* __restrict__ col_idx, const float* __restrict__ values,
                          const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float warp_sums[kBinBlock / kWarp];
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const int start = row_ptr[row], end = row_ptr[row + 1];
    if (end - start < lo_len) continue;  // the same for the whole block
    float sum = 0.0f;
    for (int64_t e = start + static_cast<int64_t>(threadIdx.x); e < end; e += kBinBlock) sum += values[e] * x[col_idx[e]];
    sum = group_sum<kWarp>(sum);
    if (threadIdx.x % kWarp == 0) warp_sums[threadIdx.x / kWarp] = sum;
    __syncthreads();
    if (threadIdx.x < kWarp) {
      sum = threadIdx.x < kBinBlock / kWarp ? warp_sums[threadIdx.x] : 0.0f;
      sum = group_sum<kWarp>(sum);
      if (threadIdx.x == 0) y[row] = sum;
    }
    __syncthreads();
  }
}

void spmv_v3_best(int rows, int /*cols*/, int /*nnz*/, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* /*workspace*/,
                  cudaStream_t stream) {
  const size_t r = static_cast<size_t>(rows);
  spmv_v3_bin_kernel<4><<<static_cast<unsigned>((r * 4 + kBinBlock - 1) / kBinBlock), kBinBlock, 0, stream>>>(
      rows, 0, kSmallMax, row_ptr, col_idx, values, x, y);
  spmv_v3_bin_kernel<32><<<static_cast<unsigned>((r * 32 + kBinBlock - 1) / kBinBlock), kBinBlock, 0, stream>>>(
      rows, kSmallMax + 1, kMediumMax, row_ptr, col_idx, values, x, y);
  spmv_v3_block_rows_kernel<<<1024, kBinBlock, 0, stream>>>(rows, kMediumMax + 1, row_ptr, col_idx,
                                                             values, x, y);
}
