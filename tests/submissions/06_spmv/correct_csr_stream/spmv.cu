// CORRECT: v3 is CSR-stream with a fixed 256 rows per block: the block's entries go through
// shared memory in chunks of 256 products, each thread sums the part of its own row in each
// chunk. Any row length, empty rows written as 0; the chunk loop in 64 bits (nnz up to
// 2^31 - 1).
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

// v3: CSR-stream with a fixed number of rows per block. The block streams the contiguous
// entries of its rows through shared memory in chunks of kStreamBlock products (coalesced,
// whatever the row lengths); each thread then adds the products of its own row that lie in the
// chunk. Long rows simply take more chunks.
namespace {
constexpr unsigned kStreamBlock = 256;  // threads = rows per block = products per chunk
}  // namespace

__global__ void __launch_bounds__(kStreamBlock)
spmv_v3_stream_kernel(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                      const float* __restrict__ values, const float* __restrict__ x,
                      float* __restrict__ y) {
  __shared__ float products[kStreamBlock];
  const size_t first = static_cast<size_t>(blockIdx.x) * kStreamBlock;
  const size_t last = first + kStreamBlock < static_cast<size_t>(rows) ? first + kStreamBlock
                                                                        : static_cast<size_t>(rows);
  const size_t row = first + threadIdx.x;
  const bool mine = row < last;
  const int my_start = mine ? row_ptr[row] : 0, my_end = mine ? row_ptr[row + 1] : 0;
  const int block_start = row_ptr[first], block_end = row_ptr[last];
  float sum = 0.0f;
  // 64-bit: the last chunk may start within 256 of 2^31 - 1 (nnz reaches it).
  for (int64_t chunk = block_start; chunk < block_end; chunk += kStreamBlock) {
    const int64_t e = chunk + threadIdx.x;
    if (e < block_end) products[threadIdx.x] = values[e] * x[col_idx[e]];
    __syncthreads();
    const int64_t lo = my_start > chunk ? my_start : chunk;
    const int64_t chunk_end = chunk + kStreamBlock < block_end ? chunk + kStreamBlock : block_end;
    const int64_t hi = my_end < chunk_end ? my_end : chunk_end;
    for (int64_t k = lo; k < hi; ++k) sum += products[k - chunk];
    __syncthreads();
  }
  if (mine) y[row] = sum;
}

void spmv_v3_best(int rows, int /*cols*/, int /*nnz*/, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* /*workspace*/,
                  cudaStream_t stream) {
  const size_t blocks = (static_cast<size_t>(rows) + kStreamBlock - 1) / kStreamBlock;
  spmv_v3_stream_kernel<<<static_cast<unsigned>(blocks), kStreamBlock, 0, stream>>>(
      rows, row_ptr, col_idx, values, x, y);
}
