// WRONG (every result): the reference, except that every kernel returns at its start, so the
// outputs keep the judge's poison. Every correctness test fails quickly; nothing hangs.
// Lab 06 reference solution: y = A x for A in CSR (see ../../labs/06_spmv/spmv.h).
//
// v1 one thread per row, v2 one warp per row (any length, shuffle reduction), v3 row binning:
// a warp takes a few consecutive rows and streams their entries (CSR-stream: whole 128-byte
// lines, products through shared memory), a sub-warp sized to the matrix's mean row length
// sums each row, and the rows too long for that are deferred to a second pass that cuts them
// into chunks and gives every warp of the grid an equal run of chunks, whatever the rows'
// lengths. The constants below are the knobs to tune on the GPU.
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
constexpr int kShortTrips = 128;             // a row of <= width * kShortTrips entries is done in
                                             // place by its warp; longer ones are deferred
constexpr int kStreamTrips = 4;              // entries per lane in flight when a warp streams its
                                             // rows: pieces of 32 * this entries
constexpr int kChunk = kWarp * 8;            // entries of a deferred row per chunk
constexpr int kUnroll = 4;                   // entries in flight per lane in the deferred pass
constexpr int kUnrollShort = 4;              // the same for a row walked by its sub-warp alone
constexpr unsigned kDeferredBlocks = 1024;   // grid of the deferred pass
constexpr size_t kListOffset = 256;          // bytes: the counter first, then the two lists

static_assert(kScalarBlock % kWarp == 0 && kVectorBlock % kWarp == 0 && kBestBlock % kWarp == 0,
              "blocks of whole warps");

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
                      float* __restrict__ y) { if (gridDim.x != 0) return;  // corpus: writes nothing
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
                      float* __restrict__ y) { if (gridDim.x != 0) return;  // corpus: writes nothing
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

// ---------------------------------------------------------------------------------------------
// v3: row binning in one pass over the rows, and one pass over the rows it deferred.
// Workspace: a 64-bit counter (high half: rows deferred; low half: chunks of kChunk entries
// they hold), then two lists of `rows` 32-bit words: the deferred rows, and the number of each
// one's first chunk. A warp takes its places in both with one atomic, so the chunk numbers
// rise with the list index: the deferred pass finds a chunk's row by binary search.
// ---------------------------------------------------------------------------------------------

// spmv_v3_short_kernel<W>: W lanes per row (W = the matrix's mean row length / kEntriesPerLane,
// a power of two), so a warp holds 32 / W consecutive rows, whose entries are consecutive too.
// The warp streams them in pieces of 32 * kStreamTrips entries: lane l loads entries
// piece + l + 32 k (each load a whole 128-byte line), keeps kStreamTrips x gathers in flight,
// and puts the products in shared memory; then each row's W lanes add up the products of
// their row in that piece.
// Memory traffic: row_ptr read once; values and col_idx streamed once, in whole lines, marked
// evict-first (__ldcs) so that x stays in L2; x gathered (mostly from L2).
// Known limit: a row far longer than W * kShortTrips would keep its warp busy for long (and the
// warp's other rows' lanes idle while it sums): such rows are deferred, y[row] = 0 for the
// deferred pass to add into, and a warp holding one (or the grid's ragged last warp) lets each
// sub-warp walk its own row instead, with loads of W consecutive entries.
template <int W>
__global__ void __launch_bounds__(kBestBlock, 2048 / kBestBlock)  // 32 registers: a full SM
spmv_v3_short_kernel(int rows, const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                     const float* __restrict__ values, const float* __restrict__ x,
                     float* __restrict__ y, unsigned long long* __restrict__ counter,
                     int* __restrict__ list, unsigned* __restrict__ first_chunk) { if (gridDim.x != 0) return;  // corpus: writes nothing
  __shared__ float products[kBestBlock / kWarp][kWarp * kStreamTrips];
  const size_t row = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / W;
  const int lane = static_cast<int>(threadIdx.x % W);
  const unsigned lane32 = threadIdx.x % kWarp;
  const bool valid = row < static_cast<size_t>(rows);
  int start = 0, end = 0;
  if (valid) {
    start = __ldg(row_ptr + row);
    end = __ldg(row_ptr + row + 1);
  }
  const int len = end - start;
  const bool in_place = len <= W * kShortTrips;
  float sum = 0.0f;
  if (__all_sync(kFullMask, valid && in_place)) {
    // The warp's rows hold the entries [span_lo, span_hi): the first row's start, the last's end.
    const int span_lo = __shfl_sync(kFullMask, start, 0);
    const int span_hi = __shfl_sync(kFullMask, end, kWarp - 1);
    float* prod = products[threadIdx.x / kWarp];
    constexpr int kPiece = kWarp * kStreamTrips;
    for (int64_t piece = span_lo; piece < span_hi; piece += kPiece) {  // 64-bit: no overflow near 2^31
      int c[kStreamTrips];
      float v[kStreamTrips];
#pragma unroll
      for (int k = 0; k < kStreamTrips; ++k) {  // every load first, then every gather
        const int64_t e = piece + lane32 + k * kWarp;
        c[k] = 0;
        v[k] = 0.0f;
        if (e < span_hi) {
          c[k] = __ldcs(col_idx + e);
          v[k] = __ldcs(values + e);
        }
      }
#pragma unroll
      for (int k = 0; k < kStreamTrips; ++k) {
        if (piece + lane32 + k * kWarp < span_hi) prod[lane32 + k * kWarp] = v[k] * __ldg(x + c[k]);
      }
      __syncwarp();
      // This row's entries in the piece, as offsets into prod.
      const int lo = start > piece ? static_cast<int>(start - piece) : 0;
      const int hi = end - piece < kPiece ? static_cast<int>(end - piece) : kPiece;
      for (int j = lo + lane; j < hi; j += W) sum += prod[j];
      __syncwarp();  // prod is rewritten by the next piece
    }
  } else if (in_place) {
#pragma unroll kUnrollShort
    for (int64_t e = start + lane; e < end; e += W) sum += __ldg(values + e) * __ldg(x + __ldg(col_idx + e));
  }
  sum = group_sum<W>(sum);  // every lane of the warp gets here
  const bool leader = valid && lane == 0;
  if (leader && in_place) y[row] = sum;

  // The warp's deferred rows (rare): one atomic for all of them, the places handed out by a
  // prefix sum over the lanes. Packed as (rows << 32) + chunks: no carry, chunks < 2^32.
  const bool deferred = leader && !in_place;
  if (!__any_sync(kFullMask, deferred)) return;
  const unsigned long long mine =
      deferred ? (1ull << 32) + static_cast<unsigned>((len + kChunk - 1) / kChunk) : 0ull;
  unsigned long long inclusive = mine;
#pragma unroll
  for (unsigned offset = 1; offset < kWarp; offset *= 2) {
    const unsigned long long v = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane32 >= offset) inclusive += v;
  }
  unsigned long long base = 0;
  if (lane32 == kWarp - 1) base = atomicAdd(counter, inclusive);
  base = __shfl_sync(kFullMask, base, kWarp - 1);
  if (deferred) {
    const unsigned long long at = base + inclusive - mine;
    const unsigned idx = static_cast<unsigned>(at >> 32);
    list[idx] = static_cast<int>(row);
    first_chunk[idx] = static_cast<unsigned>(at);
    y[row] = 0.0f;
  }
}

// spmv_v3_deferred_kernel: the deferred rows' chunks, numbered one after the other (row by row,
// in list order), split into equal runs, one run per warp of the grid. A warp streams its run
// (kUnroll entries in flight per lane) and adds each row's part into y[row] with one atomicAdd.
// Memory traffic: the deferred entries once, coalesced; one binary search per warp.
// Known limit: float atomics, so the order of a long row's partial sums varies between calls
// (the last bits of y[row] may differ).
__global__ void __launch_bounds__(kBestBlock, 1)  // up to 64 registers: more loads in flight
spmv_v3_deferred_kernel(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                        const float* __restrict__ values, const float* __restrict__ x,
                        float* __restrict__ y, const unsigned long long* __restrict__ counter,
                        const int* __restrict__ list, const unsigned* __restrict__ first_chunk) { if (gridDim.x != 0) return;  // corpus: writes nothing
  const unsigned long long packed = *counter;
  const unsigned count = static_cast<unsigned>(packed >> 32);
  const unsigned total = static_cast<unsigned>(packed);  // chunks of all the deferred rows
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warps = gridDim.x * (blockDim.x / kWarp);
  const unsigned warp = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;
  const unsigned per = total / warps + (total % warps != 0);
  unsigned g = warp * per;  // < total + warps: no overflow
  const unsigned g_end = min(g + per, total);
  if (g >= g_end) return;

  // The row holding chunk g: the last list entry whose first chunk is <= g.
  unsigned lo = 0, hi = count - 1;
  while (lo < hi) {
    const unsigned mid = (lo + hi + 1) / 2;
    if (__ldg(first_chunk + mid) <= g) lo = mid; else hi = mid - 1;
  }
  for (unsigned i = lo; g < g_end; ++i) {
    const int row = __ldg(list + i);
    const unsigned first = __ldg(first_chunk + i);
    const unsigned stop = min(i + 1 < count ? __ldg(first_chunk + i + 1) : total, g_end);
    const int start = __ldg(row_ptr + row), end = __ldg(row_ptr + row + 1);
    const int64_t lo_e = start + static_cast<int64_t>(g - first) * kChunk;
    const int64_t hi_e = min(static_cast<int64_t>(end), start + static_cast<int64_t>(stop - first) * kChunk);
    float sum = 0.0f;
    int64_t e = lo_e + lane;
    for (; e + (kUnroll - 1) * kWarp < hi_e; e += kUnroll * kWarp) {
      int c[kUnroll];
      float v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) c[u] = __ldg(col_idx + e + u * kWarp), v[u] = __ldg(values + e + u * kWarp);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) sum += v[u] * __ldg(x + c[u]);
    }
    for (; e < hi_e; e += kWarp) sum += __ldg(values + e) * __ldg(x + __ldg(col_idx + e));
    sum = group_sum<kWarp>(sum);
    if (lane == 0) atomicAdd(y + row, sum);
    g = stop;
  }
}

namespace {

template <int W>
void launch_short(int rows, const int* row_ptr, const int* col_idx, const float* values,
                  const float* x, float* y, unsigned long long* counter, int* list,
                  unsigned* first_chunk, cudaStream_t stream) {
  const size_t threads = static_cast<size_t>(rows) * W;
  const size_t blocks = (threads + kBestBlock - 1) / kBestBlock;
  spmv_v3_short_kernel<W><<<static_cast<unsigned>(blocks), kBestBlock, 0, stream>>>(
      rows, row_ptr, col_idx, values, x, y, counter, list, first_chunk);
}

}  // namespace

void spmv_v3_best(int rows, int /*cols*/, int nnz, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* workspace,
                  cudaStream_t stream) {
  auto* counter = static_cast<unsigned long long*>(workspace);
  int* list = reinterpret_cast<int*>(static_cast<char*>(workspace) + kListOffset);
  auto* first_chunk = reinterpret_cast<unsigned*>(list + rows);
  // The workspace holds garbage: clear the counter, on the stream.
  cudaMemsetAsync(counter, 0, sizeof(*counter), stream);

  const double mean = rows > 0 ? static_cast<double>(nnz) / rows : 0.0;
  int width = kMinWidth;
  while (width < static_cast<int>(kWarp) && width * kEntriesPerLane < mean) width *= 2;
  switch (width) {
    case 2: launch_short<2>(rows, row_ptr, col_idx, values, x, y, counter, list, first_chunk, stream); break;
    case 4: launch_short<4>(rows, row_ptr, col_idx, values, x, y, counter, list, first_chunk, stream); break;
    case 8: launch_short<8>(rows, row_ptr, col_idx, values, x, y, counter, list, first_chunk, stream); break;
    case 16: launch_short<16>(rows, row_ptr, col_idx, values, x, y, counter, list, first_chunk, stream); break;
    default: launch_short<32>(rows, row_ptr, col_idx, values, x, y, counter, list, first_chunk, stream); break;
  }
  // The deferred pass reads the counter on the device: with nothing deferred it ends at once.
  spmv_v3_deferred_kernel<<<kDeferredBlocks, kBestBlock, 0, stream>>>(row_ptr, col_idx, values, x,
                                                                       y, counter, list, first_chunk);
}
