// RED TEAM ROUND 37: flush_debt_dodge's kernel reading the first three quarters of L2's worth of
// its input with evict_last, so the next call's input might start in L2. Beaten by the persisting-
// line reset before every flush.
//
// Lab 09: histogram.
//
// bins[b] = how many i in [0, n) have in[i] == b, 0 <= b < num_bins.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "histogram.h"

namespace {

constexpr int kThreads = 256;
constexpr size_t kSharedBudget = 48 * 1024;

// The streaming reads carry an L2 policy of evict_first (PTX createpolicy + .L2::cache_hint):
// each 16-byte chunk is read once, so its line is the first to go when the next one comes in.
// Set to false for the control run (plain loads).
constexpr bool kEvictFirst = true;

__device__ __forceinline__ uint64_t policy_evict_first() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

__device__ __forceinline__ uint4 ld_stream(const uint4* p, uint64_t pol) {
  uint4 v;
  if (kEvictFirst) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
  } else {
    v = __ldg(p);
  }
  return v;
}

__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

// The first `pin_vecs` 16-byte chunks of the input are read with an evict_last policy: their lines
// should outlast the judge's normal-priority traffic (its check of the inputs, the calibration
// call, CUB's run, the next draw, which rewrites them in place, and its 2 x L2 memset flush), so the
// next timed call finds that much of its fresh input already in L2.
__device__ __forceinline__ uint4 ld_pinned(const uint4* p, uint64_t pol) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(pol));
  return v;
}

int sm_count() {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms > 0 ? sms : 1;
}

template <typename T>
__device__ __forceinline__ void count_one(T v, unsigned int* sh, unsigned int* bins, int num_bins,
                                          int copy, bool use_shared) {
  const unsigned b = static_cast<unsigned>(v);
  if (use_shared) {
    atomicAdd(&sh[copy * num_bins + b], 1u);
  } else {
    atomicAdd(&bins[b], 1u);
  }
}

template <typename T>
__device__ __forceinline__ void count_chunk(uint4 c, unsigned int* sh, unsigned int* bins,
                                            int num_bins, int copy, bool use_shared) {
  if (sizeof(T) == 1) {
    const unsigned w[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        count_one<unsigned char>(static_cast<unsigned char>((w[i] >> (8 * k)) & 0xFF), sh, bins,
                                 num_bins, copy, use_shared);
      }
    }
  } else {
    count_one<int>(static_cast<int>(c.x), sh, bins, num_bins, copy, use_shared);
    count_one<int>(static_cast<int>(c.y), sh, bins, num_bins, copy, use_shared);
    count_one<int>(static_cast<int>(c.z), sh, bins, num_bins, copy, use_shared);
    count_one<int>(static_cast<int>(c.w), sh, bins, num_bins, copy, use_shared);
  }
}

// One kernel for every version: per-warp copies of the block's histogram in shared memory when
// they fit (else global atomics), 16-byte streaming loads, a merge of non-zero bins at the end.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    histogram_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins, size_t n,
                     int num_bins, int copies, size_t pin_vecs) {
  extern __shared__ unsigned int block_bins[];
  const bool use_shared = copies > 0;
  const int copy = use_shared ? (threadIdx.x / 32) % copies : 0;
  if (use_shared) {
    for (int i = threadIdx.x; i < num_bins * copies; i += blockDim.x) block_bins[i] = 0;
    __syncthreads();
  }
  const uint64_t pol = policy_evict_first();
  const uint64_t keep = policy_evict_last();
  constexpr size_t kPer = 16 / sizeof(T);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(in);
  size_t head = ((16 - (addr & 15)) & 15) / sizeof(T);
  if (head > n) head = n;
  const size_t vecs = (n - head) / kPer;
  const size_t tail_start = head + vecs * kPer;
  const size_t tid = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  if (tid < head) count_one<T>(in[tid], block_bins, bins, num_bins, copy, use_shared);
  const uint4* v = reinterpret_cast<const uint4*>(in + head);
  size_t i = tid;
  const size_t pinned = pin_vecs < vecs ? pin_vecs : vecs;
  for (; i < pinned; i += stride) count_chunk<T>(ld_pinned(v + i, keep), block_bins, bins, num_bins, copy, use_shared);
  for (; i + 3 * stride < vecs; i += 4 * stride) {
    const uint4 a = ld_stream(v + i, pol);
    const uint4 b = ld_stream(v + i + stride, pol);
    const uint4 c = ld_stream(v + i + 2 * stride, pol);
    const uint4 d = ld_stream(v + i + 3 * stride, pol);
    count_chunk<T>(a, block_bins, bins, num_bins, copy, use_shared);
    count_chunk<T>(b, block_bins, bins, num_bins, copy, use_shared);
    count_chunk<T>(c, block_bins, bins, num_bins, copy, use_shared);
    count_chunk<T>(d, block_bins, bins, num_bins, copy, use_shared);
  }
  for (; i < vecs; i += stride) count_chunk<T>(ld_stream(v + i, pol), block_bins, bins, num_bins, copy, use_shared);
  if (tid < n - tail_start) count_one<T>(in[tail_start + tid], block_bins, bins, num_bins, copy, use_shared);
  if (use_shared) {
    __syncthreads();
    for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
      unsigned int sum = 0;
      for (int c = 0; c < copies; ++c) sum += block_bins[c * num_bins + b];
      if (sum != 0) atomicAdd(&bins[b], sum);
    }
  }
}

template <typename T>
void launch(const T* in, unsigned int* bins, size_t n, int num_bins, cudaStream_t stream) {
  cudaMemsetAsync(bins, 0, static_cast<size_t>(num_bins) * sizeof(unsigned int), stream);
  int copies = 8;
  while (copies > 0 && static_cast<size_t>(num_bins) * copies * sizeof(unsigned int) > kSharedBudget) {
    copies /= 2;
  }
  const size_t shared = static_cast<size_t>(num_bins) * copies * sizeof(unsigned int);
  const size_t per_block = static_cast<size_t>(kThreads) * 16 / sizeof(T);
  size_t blocks = (n + per_block - 1) / per_block;
  const size_t cap = static_cast<size_t>(sm_count()) * (copies > 0 ? 4 : 8);
  if (blocks > cap) blocks = cap;
  if (blocks == 0) blocks = 1;
  // About 3/4 of L2 (the snapshot's l2CacheSize; 50 MiB on an H200: 37.5 MiB of input pinned).
  cudaDeviceProp prop{};
  int device = 0;
  cudaGetDevice(&device);
  size_t l2 = size_t{50} << 20;
  if (cudaGetDeviceProperties(&prop, device) == cudaSuccess && prop.l2CacheSize > 0) l2 = prop.l2CacheSize;
  const size_t pin_vecs = (l2 / 4 * 3) / 16;
  histogram_kernel<T><<<static_cast<unsigned>(blocks), kThreads, shared, stream>>>(in, bins, n, num_bins,
                                                                                  copies, pin_vecs);
}

}  // namespace

template <typename T>
void histogram_v1_global_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  launch<T>(in, bins, n, num_bins, stream);
}

template <typename T>
void histogram_v2_shared_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  launch<T>(in, bins, n, num_bins, stream);
}

template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream) {
  launch<T>(in, bins, n, num_bins, stream);
}

#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
