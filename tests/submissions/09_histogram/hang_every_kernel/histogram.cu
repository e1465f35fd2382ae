// WRONG (hang): the reference, except that every kernel spins forever at its start (a
// condition that never becomes false). Every test times out; the judge must bound what it
// costs (a variant that hangs three times in a row is not run again), not wait a timeout per test.
// Lab 09 reference solution: histogram, bins[b] = how many of in[0..n) equal b.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "histogram.h"

namespace {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, no more than the
// elements need.
[[maybe_unused]] int grid_for(size_t n, int blocks_per_sm) {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const size_t needed = (n + kThreads - 1) / kThreads;
  const size_t cap = static_cast<size_t>(sms) * blocks_per_sm;
  return static_cast<int>(needed < cap ? (needed == 0 ? 1 : needed) : cap);
}

// ---------------------------------------------------------------------------------------------
// v1: one global atomic per element. Every update of a bin goes to L2; with 256 bins the
// atomics of the whole GPU queue on 256 addresses.
template <typename T>
__global__ void global_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    atomicAdd(&bins[static_cast<unsigned int>(in[i])], 1u);
  }
}

// ---------------------------------------------------------------------------------------------
// v2: privatisation. Each block counts into its own histogram in shared memory (atomics there
// are fast and contended only by the block's own threads), then adds each non-zero bin to the
// global histogram once: 256 global atomics per block instead of one per element.
template <typename T>
__global__ void shared_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n, int num_bins) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  extern __shared__ unsigned int block_bins[];  // num_bins counts (dynamic: its size is a launch
                                                // argument)
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) block_bins[b] = 0;
  __syncthreads();
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += stride) {
    atomicAdd(&block_bins[static_cast<unsigned int>(in[i])], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    const unsigned int count = block_bins[b];
    if (count != 0) atomicAdd(&bins[b], count);
  }
}

// ---------------------------------------------------------------------------------------------
// v3: the block's histogram replicated 2^copies_log2 times, interleaved: bin b of copy c at
// word b * copies + c, and lane l of every warp counts into copy l % copies. With 32 copies
// (256 bins: 32 KiB) the lanes of a warp always hit 32 different banks, whatever the values:
// no bank conflict, and no two lanes of a warp on one address even when every element is the
// same (the hot-bin and one-value inputs cost what uniform ones do). The input comes in 16-byte
// loads (16 bytes or 4 ints per load), aligned: the head before the first 16-byte boundary and
// the tail are counted one element at a time.
template <typename T>
__device__ __forceinline__ void count_word(unsigned int word, unsigned int* copy, int shift) {
  if constexpr (sizeof(T) == 1) {
    atomicAdd(copy + ((word & 0xFFu) << shift), 1u);
    atomicAdd(copy + (((word >> 8) & 0xFFu) << shift), 1u);
    atomicAdd(copy + (((word >> 16) & 0xFFu) << shift), 1u);
    atomicAdd(copy + ((word >> 24) << shift), 1u);
  } else {
    atomicAdd(copy + (word << shift), 1u);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    replicated_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins, size_t n,
                      int num_bins, int copies_log2) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  extern __shared__ unsigned int block_bins[];  // num_bins << copies_log2 counts
  const int copies = 1 << copies_log2;
  const int words = num_bins << copies_log2;
  for (int w = threadIdx.x; w < words; w += blockDim.x) block_bins[w] = 0;
  __syncthreads();

  unsigned int* copy = block_bins + (threadIdx.x & (copies - 1));
  const size_t tid = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  constexpr size_t kPerLoad = 16 / sizeof(T);
  // Elements before the first 16-byte boundary (`in` may be any element-aligned pointer).
  const size_t misalign = reinterpret_cast<uintptr_t>(in) & 15;
  size_t head = misalign == 0 ? 0 : (16 - misalign) / sizeof(T);
  if (head > n) head = n;
  if (tid < head) atomicAdd(copy + (static_cast<unsigned int>(in[tid]) << copies_log2), 1u);
  const uint4* body = reinterpret_cast<const uint4*>(in + head);
  const size_t loads = (n - head) / kPerLoad;
  size_t i = tid;
  for (; i + stride < loads; i += 2 * stride) {  // two loads in flight per thread
    const uint4 a = __ldcs(body + i);
    const uint4 b = __ldcs(body + i + stride);
    count_word<T>(a.x, copy, copies_log2);
    count_word<T>(a.y, copy, copies_log2);
    count_word<T>(a.z, copy, copies_log2);
    count_word<T>(a.w, copy, copies_log2);
    count_word<T>(b.x, copy, copies_log2);
    count_word<T>(b.y, copy, copies_log2);
    count_word<T>(b.z, copy, copies_log2);
    count_word<T>(b.w, copy, copies_log2);
  }
  if (i < loads) {
    const uint4 a = __ldcs(body + i);
    count_word<T>(a.x, copy, copies_log2);
    count_word<T>(a.y, copy, copies_log2);
    count_word<T>(a.z, copy, copies_log2);
    count_word<T>(a.w, copy, copies_log2);
  }
  for (size_t t = head + loads * kPerLoad + tid; t < n; t += stride) {
    atomicAdd(copy + (static_cast<unsigned int>(in[t]) << copies_log2), 1u);
  }
  __syncthreads();

  // Merge: thread b sums bin b's copies, starting at copy b % copies so that a warp's 32 reads
  // fall in 32 banks.
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    unsigned int count = 0;
    for (int c = 0; c < copies; ++c) {
      count += block_bins[(b << copies_log2) + ((b + c) & (copies - 1))];
    }
    if (count != 0) atomicAdd(&bins[b], count);
  }
}

// Shared memory a block may use without cudaFuncSetAttribute's opt-in.
[[maybe_unused]] constexpr size_t kSharedBudget = 48 * 1024;

}  // namespace

// ---------------------------------------------------------------------------------------------
// The launchers: zero `bins` on the stream, then count.

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
  const size_t shared = sizeof(unsigned int) * static_cast<size_t>(num_bins);
  if (shared > kSharedBudget) {
    global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n);
    return;
  }
  shared_atomics_kernel<T><<<grid_for(n, 8), kThreads, shared, stream>>>(in, bins, n, num_bins);
}

template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream) {
  cudaMemsetAsync(bins, 0, sizeof(unsigned int) * static_cast<size_t>(num_bins), stream);
  const size_t one_copy = sizeof(unsigned int) * static_cast<size_t>(num_bins);
  if (one_copy > kSharedBudget) {
    global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n);
    return;
  }
  // As many copies (a power of two, at most 32) as fit in the budget.
  int copies_log2 = 0;
  while (copies_log2 < 5 && (one_copy << (copies_log2 + 1)) <= kSharedBudget) ++copies_log2;
  const size_t shared = one_copy << copies_log2;
  const int per_sm = static_cast<int>((228 * 1024) / (shared + 1024));
  replicated_kernel<T><<<grid_for(n / (16 / sizeof(T)) + 1, per_sm < 8 ? per_sm : 8), kThreads,
                         shared, stream>>>(in, bins, n, num_bins, copies_log2);
}

// Both element types of every version (histogram.h's table).
#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
