// RED TEAM (round 35), lab 09: one_version_for_all -- 80 correctness points and a perf band for the
// simplest kernel of the lab.
//
// Mechanism. The grader scores each variant by its outputs only; no rule ties v1 to global
// atomics or v3 to replicated sub-histograms (the SASS rules are per lab, not per variant; the
// lesson table has no lab 09 row; the race check replays each variant's own plan, here the same
// race-free kernel). So this file writes ONE kernel, the handout's v2 (a single shared histogram
// per block, one element per load, v1's global atomics past 12288 bins), and all three
// launchers run it. Expected score on an H100/H200: public 30 + hidden 40 + races 10 = 80, plus
// the ints perf entry: the handout measured v2 at 1.42x CUB on 2^28 ints (floor 1.0, target
// 1.8, 4 bands -> 2 bands = 5 points); bytes at 0.39x (floor 0.3: 0 bands). About 85/100 for the
// kernel the handout calls "v2 alone earns a band or two", without writing v1 or v3.
// What would close it: per-variant requirements (a distinct kernel per variant, and SASS
// signatures: v1 RED/ATOMG on global with no ATOMS, v2 ATOMS, v3 128-bit loads), or scoring
// v3's correctness only when v3's kernel is not v2's (kernel names in the saved plans).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "histogram.h"

namespace {

constexpr int kThreads = 256;
constexpr size_t kSharedBudget = 48 * 1024;

int grid_for(size_t n, int blocks_per_sm) {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const size_t needed = (n + kThreads - 1) / kThreads;
  const size_t cap = static_cast<size_t>(sms) * blocks_per_sm;
  return static_cast<int>(needed < cap ? (needed == 0 ? 1 : needed) : cap);
}

template <typename T>
__global__ void global_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&bins[static_cast<unsigned>(in[i])], 1u);
}

template <typename T>
__global__ void shared_atomics_kernel(const T* __restrict__ in, unsigned int* __restrict__ bins,
                                      size_t n, int num_bins) {
  extern __shared__ unsigned int block_bins[];
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) block_bins[b] = 0;
  __syncthreads();
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    atomicAdd(&block_bins[static_cast<unsigned>(in[i])], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) {
    const unsigned c = block_bins[b];
    if (c != 0) atomicAdd(&bins[b], c);
  }
}

template <typename T>
void launch_v2(const T* in, unsigned int* bins, size_t n, int num_bins, cudaStream_t stream) {
  const size_t bytes = static_cast<size_t>(num_bins) * sizeof(unsigned int);
  cudaMemsetAsync(bins, 0, bytes, stream);
  if (bytes > kSharedBudget) {
    global_atomics_kernel<T><<<grid_for(n, 8), kThreads, 0, stream>>>(in, bins, n);
  } else {
    shared_atomics_kernel<T><<<grid_for(n, 8), kThreads, bytes, stream>>>(in, bins, n, num_bins);
  }
}

}  // namespace

template <typename T>
void histogram_v1_global_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  launch_v2<T>(in, bins, n, num_bins, stream);
}
template <typename T>
void histogram_v2_shared_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream) {
  launch_v2<T>(in, bins, n, num_bins, stream);
}
template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream) {
  launch_v2<T>(in, bins, n, num_bins, stream);
}

#define LAB09_INSTANTIATE(name, fn)                                                        \
  template void fn<unsigned char>(const unsigned char*, unsigned int*, size_t, int,       \
                                  cudaStream_t);                                          \
  template void fn<int>(const int*, unsigned int*, size_t, int, cudaStream_t);
HISTOGRAM_VARIANTS(LAB09_INSTANTIATE)
#undef LAB09_INSTANTIATE
