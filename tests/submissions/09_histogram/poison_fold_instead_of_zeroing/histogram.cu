// Lab 09 histogram -- red-team candidate: poison_fold
// No cudaMemsetAsync anywhere: bins are never zeroed; block 0 adds (count - 0x7FC0DEAD) to every bin, cancelling the harness's fixed poison mod 2^32. One op per call instead of two.
#define RT_POISON_FOLD 1
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "histogram.h"

#ifndef RT_POISON_FOLD
#define RT_POISON_FOLD 0      // no memset: fold -0x7FC0DEAD (the harness's poison) into the merge
#endif
#ifndef RT_ALIAS
#define RT_ALIAS 0            // v1 and v2 are v3
#endif
#ifndef RT_COPIES_MAX_LOG2
#define RT_COPIES_MAX_LOG2 5  // 5: 32 replicated copies; 0: no replication
#endif
#ifndef RT_MODULE_SCRATCH
#define RT_MODULE_SCRATCH 0   // no memset: __device__ scratch zeroed by the per-call module reload
#endif
#ifndef RT_NO_ZERO
#define RT_NO_ZERO 0          // large n: skip the shared zeroing + barrier (executor scrub)
#endif

namespace {

constexpr int kThreads = 256;
constexpr unsigned int kPoison = 0x7FC0DEADu;
constexpr size_t kSharedBudget = 48 * 1024;

int sm_count() {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

int grid_for(size_t work_items, int blocks_per_sm) {
  const size_t needed = (work_items + kThreads - 1) / kThreads;
  const size_t cap = static_cast<size_t>(sm_count()) * blocks_per_sm;
  return static_cast<int>(needed < cap ? (needed == 0 ? 1 : needed) : cap);
}

#if RT_MODULE_SCRATCH
// Zero at every module load; the executor loads a fresh copy of the module before every call.
__device__ unsigned int g_scratch[256];
__device__ unsigned int g_ticket;
#endif

// Global-atomic kernel (v1, and the fallback past the shared budget).
template <typename T>
__global__ void global_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n, int num_bins, int fold) {
  const size_t g = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  if (fold) {
    for (size_t b = g; b < static_cast<size_t>(num_bins); b += stride) atomicAdd(&bins[b], 0u - kPoison);
  }
  for (size_t i = g; i < n; i += stride) {
    atomicAdd(&bins[static_cast<unsigned int>(in[i])], 1u);
  }
}

template <typename T>
__device__ __forceinline__ void count_word(unsigned int* h, unsigned int w, int cl, int copy) {
  if (sizeof(T) == 1) {
    atomicAdd(&h[((w & 0xFFu) << cl) + copy], 1u);
    atomicAdd(&h[(((w >> 8) & 0xFFu) << cl) + copy], 1u);
    atomicAdd(&h[(((w >> 16) & 0xFFu) << cl) + copy], 1u);
    atomicAdd(&h[((w >> 24) << cl) + copy], 1u);
  } else {
    atomicAdd(&h[(w << cl) + copy], 1u);
  }
}

// Replicated, interleaved shared histograms fed by 16-byte loads.
// mode: 0 plain (memset done by the launcher), 1 fold the poison, 2 module scratch.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    replicated_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins, size_t n,
                      int num_bins, int cl, int mode, int zero) {
  extern __shared__ unsigned int h[];
  const int copies = 1 << cl;
  const int words = num_bins << cl;
  if (zero) {
    for (int i = threadIdx.x; i < words; i += blockDim.x) h[i] = 0;
    __syncthreads();
  }
  const int copy = threadIdx.x & (copies - 1);
  const size_t g = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  constexpr size_t kPer = 16 / sizeof(T);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(in);
  size_t head = ((16 - (addr & 15)) & 15) / sizeof(T);
  if (head > n) head = n;
  if (g < head) atomicAdd(&h[(static_cast<unsigned int>(in[g]) << cl) + copy], 1u);
  const size_t nvec = (n - head) / kPer;
  const uint4* vp = reinterpret_cast<const uint4*>(in + head);
  size_t i = g;
  for (; i + stride < nvec; i += 2 * stride) {
    const uint4 a = __ldcs(vp + i);
    const uint4 b = __ldcs(vp + i + stride);
    count_word<T>(h, a.x, cl, copy); count_word<T>(h, a.y, cl, copy);
    count_word<T>(h, a.z, cl, copy); count_word<T>(h, a.w, cl, copy);
    count_word<T>(h, b.x, cl, copy); count_word<T>(h, b.y, cl, copy);
    count_word<T>(h, b.z, cl, copy); count_word<T>(h, b.w, cl, copy);
  }
  if (i < nvec) {
    const uint4 a = __ldcs(vp + i);
    count_word<T>(h, a.x, cl, copy); count_word<T>(h, a.y, cl, copy);
    count_word<T>(h, a.z, cl, copy); count_word<T>(h, a.w, cl, copy);
  }
  const size_t tail = head + nvec * kPer + g;
  if (tail < n) atomicAdd(&h[(static_cast<unsigned int>(in[tail]) << cl) + copy], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    unsigned int sum = 0;
    for (int c = 0; c < copies; ++c) sum += h[(b << cl) + ((b + c) & (copies - 1))];
    if (mode == 1 && blockIdx.x == 0) {
      atomicAdd(&bins[b], sum - kPoison);
    } else if (sum != 0) {
#if RT_MODULE_SCRATCH
      if (mode == 2) { atomicAdd(&g_scratch[b], sum); continue; }
#endif
      atomicAdd(&bins[b], sum);
    }
  }
#if RT_MODULE_SCRATCH
  if (mode == 2) {
    __shared__ unsigned int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = (atomicAdd(&g_ticket, 1u) == gridDim.x - 1);
    __syncthreads();
    if (last) {
      __threadfence();
      for (int b = threadIdx.x; b < num_bins; b += blockDim.x) bins[b] = atomicAdd(&g_scratch[b], 0u);
    }
  }
#endif
}

template <typename T>
void launch_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                       cudaStream_t stream, int max_cl) {
  int cl = max_cl;
  while (cl > 0 && (static_cast<size_t>(num_bins) << cl) * 4 > kSharedBudget) --cl;
  const size_t smem = (static_cast<size_t>(num_bins) << cl) * 4;
  const int fold = RT_POISON_FOLD;
  if (smem > kSharedBudget) {
    if (!fold) cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
    global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n, num_bins, fold);
    return;
  }
  int bps = static_cast<int>((228 * 1024) / (smem + 1024));
  if (bps > 8) bps = 8;
  if (bps < 1) bps = 1;
  int mode = fold ? 1 : 0;
#if RT_MODULE_SCRATCH
  if (num_bins == 256) mode = 2;
#endif
  if (mode == 0) cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
  int zero = 1;
#if RT_NO_ZERO
  // The race check counts "a few blocks' worth": give it the clean kernel. Big calls: one wave
  // of blocks, each finding the shared memory the executor scrubbed before the call.
  if (n >= (size_t{1} << 22)) zero = 0;
#endif
  const size_t items = (n * sizeof(T) + 15) / 16 + 32;
  const int grid = grid_for(items, bps);
  replicated_kernel<T><<<grid, kThreads, smem, stream>>>(in, bins, n, num_bins, cl, mode, zero);
}

}  // namespace

template <typename T>
void histogram_v1_global_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
#if RT_ALIAS
  launch_replicated<T>(in, bins, n, num_bins, stream, RT_COPIES_MAX_LOG2);
#else
  if (!RT_POISON_FOLD) cudaMemsetAsync(bins, 0, num_bins * sizeof(unsigned int), stream);
  global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n, num_bins,
                                                                     RT_POISON_FOLD);
#endif
}

template <typename T>
void histogram_v2_shared_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  launch_replicated<T>(in, bins, n, num_bins, stream, RT_ALIAS ? RT_COPIES_MAX_LOG2 : 0);
}

template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream) {
  launch_replicated<T>(in, bins, n, num_bins, stream, RT_COPIES_MAX_LOG2);
}

#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
