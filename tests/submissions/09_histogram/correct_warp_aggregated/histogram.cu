// CORRECT (another v3): per-warp histograms in shared memory (one copy per warp of the block, as
// many as fit in 48 KiB) instead of the reference's 32 interleaved copies, and __match_any_sync
// aggregation: the lanes of a warp with the same value elect a leader, which adds popc of their
// match mask with one shared atomic. 16-byte loads from the first 16-byte boundary; head and
// tail counted by one warp; warp-uniform loops (every lane reaches every __match_any_sync);
// indices in size_t; v1's kernel past 48 KiB of counts. v1 and v2 are the reference's.
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
                                      size_t n) {
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
                                      size_t n, int num_bins) {
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
// v3 (another design): one histogram per warp in shared memory (the block's 8 warps, or as many
// copies as fit in the budget, a power of two: warp w counts into copy w % copies), and
// __match_any_sync aggregation: the lanes of a warp holding the same value elect one leader (the
// lowest lane of their match mask), which adds the number of its peers (popc of the mask) with
// one shared atomic. A hot bin or one value everywhere then costs one atomic per warp, not 32.
// The input comes in 16-byte loads from the first 16-byte boundary of `in`; the head before it
// and the tail after the last whole load (fewer than 32 elements together) are counted by the
// first warp of block 0, one element per lane. Every loop is uniform across a warp (its trip
// count depends on the warp only): every lane reaches every __match_any_sync.
//
// add_aggregated: counts `value` once for each lane of the warp that holds it; a lane without
// an element (valid false) takes part in the match with a key no bin has (2^32 - 1).
__device__ __forceinline__ void add_aggregated(unsigned int value, bool valid, unsigned int* hist) {
  const unsigned int key = valid ? value : 0xFFFFFFFFu;
  const unsigned int peers = __match_any_sync(0xFFFFFFFFu, key);
  const int lane = static_cast<int>(threadIdx.x & 31u);
  if (valid && __ffs(peers) - 1 == lane) atomicAdd(hist + value, static_cast<unsigned int>(__popc(peers)));
}

// The values in one 32-bit word of a load: four bytes, or one int.
template <typename T>
__device__ __forceinline__ void add_word(unsigned int word, bool valid, unsigned int* hist) {
  if constexpr (sizeof(T) == 1) {
    add_aggregated(word & 0xFFu, valid, hist);
    add_aggregated((word >> 8) & 0xFFu, valid, hist);
    add_aggregated((word >> 16) & 0xFFu, valid, hist);
    add_aggregated(word >> 24, valid, hist);
  } else {
    add_aggregated(word, valid, hist);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    warp_aggregated_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins, size_t n,
                           int num_bins, int copies) {
  extern __shared__ unsigned int block_bins[];  // copies * num_bins counts, copy after copy
  const int words = num_bins * copies;
  for (int w = threadIdx.x; w < words; w += blockDim.x) block_bins[w] = 0;
  __syncthreads();

  const unsigned int warp = threadIdx.x / 32;
  const unsigned int lane = threadIdx.x & 31u;
  unsigned int* hist = block_bins + static_cast<size_t>(warp % copies) * num_bins;
  const size_t warp_global = (blockIdx.x * size_t{blockDim.x} + threadIdx.x) / 32;
  const size_t warps = size_t{gridDim.x} * blockDim.x / 32;
  constexpr size_t kPerLoad = 16 / sizeof(T);
  // Elements before the first 16-byte boundary (`in` may be any element-aligned pointer).
  const size_t misalign = reinterpret_cast<uintptr_t>(in) & 15;
  size_t head = misalign == 0 ? 0 : (16 - misalign) / sizeof(T);
  if (head > n) head = n;
  const uint4* body = reinterpret_cast<const uint4*>(in + head);
  const size_t loads = (n - head) / kPerLoad;
  const size_t tail = head + loads * kPerLoad;  // the first element after the last whole load

  for (size_t base = warp_global * 32; base < loads; base += warps * 32) {
    const size_t i = base + lane;
    const bool valid = i < loads;
    const uint4 v = valid ? __ldcs(body + i) : make_uint4(0u, 0u, 0u, 0u);
    add_word<T>(v.x, valid, hist);
    add_word<T>(v.y, valid, hist);
    add_word<T>(v.z, valid, hist);
    add_word<T>(v.w, valid, hist);
  }
  if (blockIdx.x == 0 && warp == 0) {  // head and tail: at most 15 + 15 elements
    const size_t scalars = head + (n - tail);
    const size_t j = lane < head ? lane : tail + (lane - head);
    const bool valid = lane < scalars;
    add_aggregated(valid ? static_cast<unsigned int>(in[j]) : 0u, valid, hist);
  }
  __syncthreads();

  // Merge: thread b sums bin b's copies.
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    unsigned int count = 0;
    for (int c = 0; c < copies; ++c) count += block_bins[c * num_bins + b];
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
  // One copy per warp (a power of two, at most the block's warps) as far as the budget goes.
  int copies = 1;
  while (copies < kThreads / 32 && one_copy * (2 * copies) <= kSharedBudget) copies *= 2;
  const size_t shared = one_copy * copies;
  const int per_sm = static_cast<int>((228 * 1024) / (shared + 1024));
  warp_aggregated_kernel<T><<<grid_for(n / (16 / sizeof(T)) + 1, per_sm < 8 ? per_sm : 8),
                              kThreads, shared, stream>>>(in, bins, n, num_bins, copies);
}

// Both element types of every version (histogram.h's table).
#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
