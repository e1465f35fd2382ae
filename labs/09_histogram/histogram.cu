// Lab 09: histogram. THIS is the file you edit (and the only one the grader takes).
//
// bins[b] = how many of in[0..n) equal b, for bytes (256 bins) and ints (num_bins given at run
// time, up to 2^20). Three versions: v1 one global atomic per element, v2 a histogram per block
// in shared memory, v3 your fastest. Read README.md in this folder first. Build and test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 09  (your grade)
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "histogram.h"

namespace {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, no more than the
// elements need.
// (Given.) The SM count, read once per call: cheap, and right on any GPU.
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
  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // A grid-stride loop: i from blockIdx.x * blockDim.x + threadIdx.x, step gridDim.x *
  // blockDim.x, while i < n (in size_t: n can exceed 2^31); atomicAdd(&bins[in[i]], 1u).
  (void)in; (void)bins; (void)n;  // placeholder: remove this line
  // ---- TODO(student) END -----------------------------------------------------------------
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
  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // 1. Zero block_bins[0..num_bins) (every thread a strided share), then a barrier.
  // 2. The grid-stride loop of v1, with atomicAdd(&block_bins[in[i]], 1u).
  // 3. A barrier, then each thread adds its share of the non-zero bins to bins[] (atomicAdd:
  //    other blocks add to the same bins).
  (void)in; (void)bins; (void)n; (void)num_bins; (void)block_bins;  // placeholder
  // ---- TODO(student) END -----------------------------------------------------------------
}

// ---------------------------------------------------------------------------------------------
// v3: the block's histogram replicated 2^copies_log2 times, interleaved: bin b of copy c at
// word b * copies + c, and lane l of every warp counts into copy l % copies. With 32 copies
// (256 bins: 32 KiB) the lanes of a warp always hit 32 different banks, whatever the values:
// no bank conflict, and no two lanes of a warp on one address even when every element is the
// same (the hot-bin and one-value inputs cost what uniform ones do). The input comes in 16-byte
// loads (16 bytes or 4 ints per load), aligned: the head before the first 16-byte boundary and
// the tail are counted one element at a time.
// (Your design: the reference replicates the block's histogram so that a warp's lanes never
// share a bank, and reads 16 bytes per load. See README.md, "v3".)

template <typename T>
__global__ void __launch_bounds__(kThreads)
    replicated_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins, size_t n,
                      int num_bins, int copies_log2) {
  extern __shared__ unsigned int block_bins[];  // num_bins << copies_log2 counts
  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // Your fastest version. The launcher below passes copies_log2 (0: one copy) and sizes the
  // shared memory as num_bins << copies_log2 counts; change both as your design needs.
  (void)in; (void)bins; (void)n; (void)num_bins; (void)copies_log2; (void)block_bins;
  // ---- TODO(student) END -----------------------------------------------------------------
}

// Shared memory a block may use without cudaFuncSetAttribute's opt-in.
[[maybe_unused]] constexpr size_t kSharedBudget = 48 * 1024;

}  // namespace

// ---------------------------------------------------------------------------------------------
// The launchers: zero `bins` on the stream, then count.

template <typename T>
void histogram_v1_global_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // Zero bins (cudaMemsetAsync on `stream`: num_bins counts), then launch
  // global_atomics_kernel<T> with kThreads threads and grid_for(n, 8) blocks on `stream`.
  (void)in; (void)bins; (void)n; (void)num_bins; (void)stream;  // placeholder
  // ---- TODO(student) END -----------------------------------------------------------------
}

template <typename T>
void histogram_v2_shared_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // Zero bins, then launch shared_atomics_kernel<T> with num_bins counts of dynamic shared
  // memory. num_bins comes at run time and may be up to 2^20: past what a block's shared
  // memory holds (kSharedBudget bytes), count with v1's kernel instead.
  (void)in; (void)bins; (void)n; (void)num_bins; (void)stream;  // placeholder
  // ---- TODO(student) END -----------------------------------------------------------------
}

template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream) {
  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // Zero bins and launch replicated_kernel<T> as your design needs (one copy to start with;
  // the same fallback as v2 for bin counts past the shared memory).
  (void)in; (void)bins; (void)n; (void)num_bins; (void)stream;  // placeholder
  // ---- TODO(student) END -----------------------------------------------------------------
}

// Both element types of every version (histogram.h's table).
#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
