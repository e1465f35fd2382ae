// RED TEAM ROUND 37: a correct v3 that reads the first three quarters of L2's worth of its input
// with an evict_last policy, so that the next timed call's input, written to the same lines, may
// survive the judge's L2 flush. Beaten by the flush resetting persisting lines first and reading
// instead of writing (labkit::L2Flusher, reset_persisting_l2): no gain over the same kernel without it.
//
// Lab 09: histogram. v1 global atomics, v2 one shared histogram per block, v3 replicated shared
// sub-histograms fed by 16-byte loads.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "histogram.h"

namespace {

constexpr int kThreads = 256;

int grid_for(size_t n, int blocks_per_sm) {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const size_t needed = (n + kThreads - 1) / kThreads;
  const size_t cap = static_cast<size_t>(sms) * blocks_per_sm;
  return static_cast<int>(needed < cap ? (needed == 0 ? 1 : needed) : cap);
}

constexpr size_t kSharedBudget = 48 * 1024;

// L2 residency hints for the streamed input. The first `keep_bytes` of the input are read with
// the evict_last priority, the rest with evict_first ("stream once, do not pollute L2").
__device__ __forceinline__ uint64_t policy_keep() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t policy_stream() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint4 load16(const void* ptr, uint64_t pol) {
  uint4 r;
  asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(ptr), "l"(pol));
  return r;
}

// ---------------------------------------------------------------------------------------------
// v1
template <typename T>
__global__ void global_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    atomicAdd(&bins[static_cast<unsigned>(in[i])], 1u);
  }
}

// ---------------------------------------------------------------------------------------------
// v2
template <typename T>
__global__ void shared_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n, int num_bins) {
  extern __shared__ unsigned int block_bins[];
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) block_bins[b] = 0;
  __syncthreads();
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    atomicAdd(&block_bins[static_cast<unsigned>(in[i])], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    const unsigned c = block_bins[b];
    if (c != 0) atomicAdd(&bins[b], c);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: 2^copies_log2 interleaved copies (bin b of copy c at b * copies + c, lane l in copy
// l % copies), 16-byte loads over the aligned body, the head and tail one element at a time.
template <typename T>
__device__ __forceinline__ void count16(const uint4& u, unsigned int* sh, int copies_log2,
                                        unsigned copy) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
  if constexpr (sizeof(T) == 1) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const unsigned b = (w[i] >> (8 * j)) & 0xFFu;
        atomicAdd(&sh[(b << copies_log2) + copy], 1u);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) atomicAdd(&sh[(w[i] << copies_log2) + copy], 1u);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    replicated_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins, size_t n,
                      int num_bins, int copies_log2, size_t keep_bytes) {
  extern __shared__ unsigned int block_bins[];
  const int copies = 1 << copies_log2;
  const int words = num_bins << copies_log2;
  for (int b = threadIdx.x; b < words; b += blockDim.x) block_bins[b] = 0;
  __syncthreads();
  const unsigned copy = threadIdx.x & (copies - 1);
  constexpr size_t kPer = 16 / sizeof(T);  // elements per 16-byte load

  const uintptr_t addr = reinterpret_cast<uintptr_t>(in);
  size_t head = ((16 - (addr & 15)) & 15) / sizeof(T);
  if (head > n) head = n;
  const size_t nvec = (n - head) / kPer;
  const size_t body_end = head + nvec * kPer;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;

  // head and tail
  for (size_t i = tid; i < head; i += stride) {
    atomicAdd(&block_bins[(static_cast<unsigned>(in[i]) << copies_log2) + copy], 1u);
  }
  for (size_t i = body_end + tid; i < n; i += stride) {
    atomicAdd(&block_bins[(static_cast<unsigned>(in[i]) << copies_log2) + copy], 1u);
  }
  // body
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  const size_t keep_vec = keep_bytes / 16;
  const size_t split = keep_vec < nvec ? keep_vec : nvec;
  {
    const uint64_t keep = policy_keep();  // the first keep_bytes: evict_last
    for (size_t v = tid; v < split; v += stride) {
      count16<T>(load16(vec + v, keep), block_bins, copies_log2, copy);
    }
  }
  {
    const uint64_t stream = policy_stream();  // the rest: evict_first
    for (size_t v = split + tid; v < nvec; v += stride) {
      count16<T>(load16(vec + v, stream), block_bins, copies_log2, copy);
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    unsigned c = 0;
    for (int k = 0; k < copies; ++k) c += block_bins[(b << copies_log2) + ((k + b) & (copies - 1))];
    if (c != 0) atomicAdd(&bins[b], c);
  }
}

// The input bytes worth keeping resident: what the GPU lets persist in L2 (three quarters of it
// where the property is not reported).
size_t keep_bytes_for_device() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 0;
  size_t keep = prop.persistingL2CacheMaxSize > 0 ? static_cast<size_t>(prop.persistingL2CacheMaxSize)
                                                  : static_cast<size_t>(prop.l2CacheSize) / 4 * 3;
  return keep;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
template <typename T>
void histogram_v1_global_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  cudaMemsetAsync(bins, 0, sizeof(unsigned int) * static_cast<size_t>(num_bins), stream);
  global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n);
}

template <typename T>
void histogram_v2_shared_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  cudaMemsetAsync(bins, 0, sizeof(unsigned int) * static_cast<size_t>(num_bins), stream);
  const size_t smem = sizeof(unsigned int) * static_cast<size_t>(num_bins);
  if (smem > kSharedBudget) {
    global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n);
    return;
  }
  shared_atomics_kernel<T><<<grid_for(n, 8), kThreads, smem, stream>>>(in, bins, n, num_bins);
}

template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream) {
  cudaMemsetAsync(bins, 0, sizeof(unsigned int) * static_cast<size_t>(num_bins), stream);
  if (sizeof(unsigned int) * static_cast<size_t>(num_bins) > kSharedBudget) {
    global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n);
    return;
  }
  int copies_log2 = 5;
  while (copies_log2 > 0 &&
         (sizeof(unsigned int) * (static_cast<size_t>(num_bins) << copies_log2)) > kSharedBudget) {
    --copies_log2;
  }
  const size_t smem = sizeof(unsigned int) * (static_cast<size_t>(num_bins) << copies_log2);
  replicated_kernel<T><<<grid_for(n / (16 / sizeof(T)) + 1, 4), kThreads, smem, stream>>>(
      in, bins, n, num_bins, copies_log2, keep_bytes_for_device());
}

#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
