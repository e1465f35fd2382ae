// RED TEAM ROUND 37: v3 rewrites its 32 MiB workspace with evict_last stores at the end of each
// call (discarding them at the start of the next), to keep cuSPARSE, timed next, out of that part
// of L2. Beaten by the persisting-line reset before every flush and in the worker after the call.
//
// Lab 06: sparse matrix-vector multiply in CSR.
//
// y = A x, A rows x cols in CSR (row_ptr, col_idx, values), any rows/cols >= 1, nnz >= 0.
#include "spmv.h"

#include <cstddef>
#include <cstdint>

namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr unsigned kScalarBlock = 256;
constexpr unsigned kVectorBlock = 256;
constexpr int kMidMax = 1024;       // rows up to this length: sub-warps in the first pass
constexpr int kLongMin = 32768;     // rows past this: split over blocks (atomicAdd)
constexpr int kChunk = 4096;        // entries per block-chunk of a very long row
constexpr size_t kListOffsetBytes = 65536;

template <int W>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int offset = W / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset, W);
  return v;
}

// ---- L2 residency policies (PTX createpolicy / cache_hint) -----------------------------------
__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// Streaming reads (each entry is used once): first out of L2, so that x stays.
__device__ __forceinline__ float ld_stream_f32(const float* p, uint64_t pol) {
  float v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;"
               : "=f"(v) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ int ld_stream_s32(const int* p, uint64_t pol) {
  int v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.s32 %0, [%1], %2;"
               : "=r"(v) : "l"(p), "l"(pol));
  return v;
}
__device__ __forceinline__ void st_keep_f32(float* p, float v, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" :: "l"(p), "f"(v), "l"(pol) : "memory");
}
__device__ __forceinline__ void st_keep_v4(uint4* p, uint4 v, uint64_t pol) {
  asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
               :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol) : "memory");
}

// Drop our own lines (workspace garbage, y's poison) from L2 without writing them back: they are
// overwritten by this call anyway.
__global__ void drop_lines_kernel(char* base, size_t bytes) {
  const uintptr_t first = (reinterpret_cast<uintptr_t>(base) + 127) & ~uintptr_t{127};
  const uintptr_t end = (reinterpret_cast<uintptr_t>(base) + bytes) & ~uintptr_t{127};
  for (uintptr_t a = first + (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 128; a < end;
       a += (size_t)gridDim.x * blockDim.x * 128) {
    asm volatile("discard.global.L2 [%0], 128;" :: "l"(a) : "memory");
  }
}

// The workspace, rewritten with the evict_last priority at the end of the call.
__global__ void keep_lines_kernel(char* base, size_t bytes) {
  const uint64_t pol = policy_evict_last();
  const uintptr_t first = (reinterpret_cast<uintptr_t>(base) + 15) & ~uintptr_t{15};
  const uintptr_t end = (reinterpret_cast<uintptr_t>(base) + bytes) & ~uintptr_t{15};
  const uint4 z = make_uint4(0, 0, 0, 0);
  for (uintptr_t a = first + (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 16; a < end;
       a += (size_t)gridDim.x * blockDim.x * 16) {
    st_keep_v4(reinterpret_cast<uint4*>(a), z, pol);
  }
}

}  // namespace

// ---- v1: one thread per row ------------------------------------------------------------------
__global__ void spmv_v1_scalar_kernel(int rows, const int* __restrict__ row_ptr,
                                      const int* __restrict__ col_idx,
                                      const float* __restrict__ values,
                                      const float* __restrict__ x, float* __restrict__ y) {
  const size_t row = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (row >= (size_t)rows) return;
  float sum = 0.0f;
  for (int64_t e = row_ptr[row]; e < row_ptr[row + 1]; ++e) sum += values[e] * x[col_idx[e]];
  y[row] = sum;
}

void spmv_v1_scalar(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* workspace,
                    cudaStream_t stream) {
  (void)cols; (void)nnz; (void)workspace;
  const unsigned blocks = (unsigned)(((size_t)rows + kScalarBlock - 1) / kScalarBlock);
  spmv_v1_scalar_kernel<<<blocks, kScalarBlock, 0, stream>>>(rows, row_ptr, col_idx, values, x, y);
}

// ---- v2: one warp per row --------------------------------------------------------------------
__global__ void spmv_v2_vector_kernel(int rows, const int* __restrict__ row_ptr,
                                      const int* __restrict__ col_idx,
                                      const float* __restrict__ values,
                                      const float* __restrict__ x, float* __restrict__ y) {
  const size_t row = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= (size_t)rows) return;
  float sum = 0.0f;
  for (int64_t e = row_ptr[row] + lane; e < row_ptr[row + 1]; e += kWarp) sum += values[e] * x[col_idx[e]];
  sum = group_sum<32>(sum);
  if (lane == 0) y[row] = sum;
}

void spmv_v2_vector(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                    const float* values, const float* x, float* y, void* workspace,
                    cudaStream_t stream) {
  (void)cols; (void)nnz; (void)workspace;
  const size_t threads = (size_t)rows * kWarp;
  const unsigned blocks = (unsigned)((threads + kVectorBlock - 1) / kVectorBlock);
  spmv_v2_vector_kernel<<<blocks, kVectorBlock, 0, stream>>>(rows, row_ptr, col_idx, values, x, y);
}

// ---- v3: sub-warp per row, long rows listed and split; L2 hints ------------------------------
// Pass 1: W lanes per row for rows up to kMidMax entries; longer rows go to one of two lists in
// the workspace (their y set to 0 here).
template <int W>
__global__ void __launch_bounds__(256) spmv_rows_kernel(int rows, const int* __restrict__ row_ptr,
                                                        const int* __restrict__ col_idx,
                                                        const float* __restrict__ values,
                                                        const float* __restrict__ x,
                                                        float* __restrict__ y, int* counters,
                                                        int* mid_list, int* long_list) {
  const uint64_t first = policy_evict_first();
  const uint64_t last = policy_evict_last();
  const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  const size_t row = t / W;
  const int lane = threadIdx.x % W;
  const bool live = row < (size_t)rows;
  int start = 0, end = 0;
  if (live) {
    start = row_ptr[row];
    end = row_ptr[row + 1];
  }
  const int len = end - start;
  float sum = 0.0f;
  if (live && len <= kMidMax) {
    for (int64_t e = (int64_t)start + lane; e < end; e += W) {
      sum += ld_stream_f32(values + e, first) * x[ld_stream_s32(col_idx + e, first)];
    }
  }
  sum = group_sum<W>(sum);
  if (live && lane == 0) {
    if (len <= kMidMax) {
      st_keep_f32(y + row, sum, last);
    } else {
      y[row] = 0.0f;
      if (len <= kLongMin) {
        mid_list[atomicAdd(&counters[0], 1)] = (int)row;
      } else {
        long_list[atomicAdd(&counters[1], 1)] = (int)row;
      }
    }
  }
}

// Pass 2: a warp per listed row (kMidMax < length <= kLongMin).
__global__ void __launch_bounds__(256) spmv_mid_kernel(const int* __restrict__ row_ptr,
                                                       const int* __restrict__ col_idx,
                                                       const float* __restrict__ values,
                                                       const float* __restrict__ x,
                                                       float* __restrict__ y,
                                                       const int* counters, const int* mid_list) {
  const uint64_t first = policy_evict_first();
  const int count = counters[0];
  const int lane = threadIdx.x % kWarp;
  const size_t warps = (size_t)gridDim.x * blockDim.x / kWarp;
  for (size_t w = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / kWarp; w < (size_t)count; w += warps) {
    const int row = mid_list[w];
    const int start = row_ptr[row], end = row_ptr[row + 1];
    float sum = 0.0f;
    for (int64_t e = (int64_t)start + lane; e < end; e += kWarp) {
      sum += ld_stream_f32(values + e, first) * x[ld_stream_s32(col_idx + e, first)];
    }
    sum = group_sum<32>(sum);
    if (lane == 0) y[row] = sum;
  }
}

// Pass 3: rows past kLongMin, in chunks of kChunk entries spread over the blocks.
__global__ void __launch_bounds__(256) spmv_long_kernel(const int* __restrict__ row_ptr,
                                                        const int* __restrict__ col_idx,
                                                        const float* __restrict__ values,
                                                        const float* __restrict__ x,
                                                        float* __restrict__ y,
                                                        const int* counters, const int* long_list) {
  const uint64_t first = policy_evict_first();
  const int count = counters[1];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  __shared__ float partial[8];
  unsigned long long global_chunk = 0;  // chunks counted over every listed row so far
  for (int r = 0; r < count; ++r) {
    const int row = long_list[r];
    const int start = row_ptr[row], end = row_ptr[row + 1];
    const int chunks = (end - start + kChunk - 1) / kChunk;
    // Chunk c of this row goes to block (global_chunk + c) % gridDim.x: rows spread evenly.
    const unsigned first_c = (unsigned)((gridDim.x - (global_chunk % gridDim.x) + blockIdx.x) % gridDim.x);
    for (unsigned c = first_c; c < (unsigned)chunks; c += gridDim.x) {
      const int64_t lo = (int64_t)start + (int64_t)c * kChunk;
      const int64_t hi = lo + kChunk < end ? lo + kChunk : end;
      float sum = 0.0f;
      for (int64_t e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        sum += ld_stream_f32(values + e, first) * x[ld_stream_s32(col_idx + e, first)];
      }
      sum = group_sum<32>(sum);
      if (lane == 0) partial[warp] = sum;
      __syncthreads();
      if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < (int)(blockDim.x / kWarp); ++i) s += partial[i];
        atomicAdd(&y[row], s);
      }
      __syncthreads();
    }
    global_chunk += (unsigned long long)chunks;
  }
}

template <int W>
static void launch_rows(int rows, const int* row_ptr, const int* col_idx, const float* values,
                        const float* x, float* y, int* counters, int* mid, int* lng,
                        cudaStream_t stream) {
  const size_t threads = (size_t)rows * W;
  const unsigned blocks = (unsigned)((threads + 255) / 256);
  spmv_rows_kernel<W><<<blocks, 256, 0, stream>>>(rows, row_ptr, col_idx, values, x, y, counters,
                                                   mid, lng);
}

void spmv_v3_best(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
                  const float* values, const float* x, float* y, void* workspace,
                  cudaStream_t stream) {
  (void)cols;
  const size_t ws_bytes = spmv_workspace_bytes((size_t)rows, (size_t)nnz);
  char* ws = static_cast<char*>(workspace);
  int* counters = reinterpret_cast<int*>(ws);
  int* mid = reinterpret_cast<int*>(ws + kListOffsetBytes);
  int* lng = mid + rows;
  // Our lines left in L2 by the last call (see keep_lines_kernel): dropped, unwritten.
  drop_lines_kernel<<<264, 256, 0, stream>>>(ws, ws_bytes);
  drop_lines_kernel<<<264, 256, 0, stream>>>(reinterpret_cast<char*>(y), (size_t)rows * 4);
  cudaMemsetAsync(counters, 0, 8, stream);
  const double mean = rows > 0 ? (double)nnz / rows : 0.0;
  if (mean <= 8) launch_rows<2>(rows, row_ptr, col_idx, values, x, y, counters, mid, lng, stream);
  else if (mean <= 16) launch_rows<4>(rows, row_ptr, col_idx, values, x, y, counters, mid, lng, stream);
  else if (mean <= 32) launch_rows<8>(rows, row_ptr, col_idx, values, x, y, counters, mid, lng, stream);
  else if (mean <= 64) launch_rows<16>(rows, row_ptr, col_idx, values, x, y, counters, mid, lng, stream);
  else launch_rows<32>(rows, row_ptr, col_idx, values, x, y, counters, mid, lng, stream);
  spmv_mid_kernel<<<1056, 256, 0, stream>>>(row_ptr, col_idx, values, x, y, counters, mid);
  spmv_long_kernel<<<1056, 256, 0, stream>>>(row_ptr, col_idx, values, x, y, counters, lng);
  // The workspace (32 MiB at the benchmark's 4M rows), rewritten with L2::evict_last: its lines
  // outlast the judge's normal-priority flush and sit in L2 while cuSPARSE runs.
  keep_lines_kernel<<<528, 256, 0, stream>>>(ws, ws_bytes);
}
