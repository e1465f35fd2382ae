// Lab 05: parallel reduction.
//
// Red-team case "race_replay_by_sticky_cluster_attr".
// The launcher sets cudaFuncAttributeRequiredClusterWidth = 2 on a tiny probe kernel ONCE (a
// function-local static), AFTER its launches. The executor applies the attribute and, as the
// real runtime would, re-applies it to every later copy of the module (Executor::load, attrs_).
// The probe kernel reads %cluster_nctarank: 2 in every call after the planner's first, 1 in the
// planner's first call. A race check's (or profile's, or memcheck's) replay runs the saved plan
// of the graded call in a FRESH executor: that plan holds no attribute op (it was in call 1's
// plan only), so in every replay the probe reads 1. The v1..v3 kernels finish their tree with
// the pre-Volta warp-synchronous tail (volatile shared memory, no barrier, no __syncwarp: the
// handout's "old form", a shared-memory race) whenever the probe read 2, and with a barrier per
// step otherwise: graded calls run the racy code, racecheck only ever sees the clean code.
#include "reduce.h"

#include <cstdint>

namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kWarp = 32;

// The probe: flag[0] = the cluster size this launch got (1 or 2).
__global__ void mode_probe_kernel(int* flag) {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  if (blockIdx.x == 0 && threadIdx.x == 0) flag[0] = static_cast<int>(r);
}

template <typename T>
__device__ __forceinline__ void racy_tail(volatile T* s, unsigned tid) {
  // The warp-synchronous tail: lanes read what other lanes wrote one statement before, with no
  // barrier between (a shared-memory race that current hardware happens to get right).
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
}

// One tree for v1..v3 (sequential addressing). Load, then halve with a barrier each step down
// to 64; the last 6 steps are racy when *mode == 2 (graded calls), barriered otherwise.
template <typename T>
__global__ void __launch_bounds__(kBlock)
tree_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n, const int* mode) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = size_t{blockIdx.x} * kBlock + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = kBlock / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (*mode == 2) {
    if (tid < 32) racy_tail<T>(sdata, tid);
  } else {
    for (unsigned s = 32; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
void levels(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  // The probe's flag lives in the workspace's last element (the levels never reach it).
  int* flag = reinterpret_cast<int*>(workspace + (reduce_workspace_size(n) - 1));
  mode_probe_kernel<<<2, kWarp, 0, stream>>>(flag);
  const T* level_in = in;
  T* level_out = workspace;
  size_t count = n;
  while (count > kBlock) {
    const size_t blocks = (count + kBlock - 1) / kBlock;
    tree_kernel<T><<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(level_in, level_out, count, flag);
    level_in = level_out;
    count = blocks;
    level_out += blocks;
  }
  tree_kernel<T><<<1, kBlock, 0, stream>>>(level_in, out, count, flag);
  // Once per planner process, after this call's launches: the attribute the executor keeps and
  // re-applies to every later copy of the module, but that no later plan (so no replay) holds.
  static bool sticky = false;
  if (!sticky) {
    sticky = true;
    cudaFuncSetAttribute(reinterpret_cast<const void*>(mode_probe_kernel),
                         cudaFuncAttributeRequiredClusterWidth, 2);
    cudaFuncSetAttribute(reinterpret_cast<const void*>(mode_probe_kernel),
                         cudaFuncAttributeRequiredClusterHeight, 1);
    cudaFuncSetAttribute(reinterpret_cast<const void*>(mode_probe_kernel),
                         cudaFuncAttributeRequiredClusterDepth, 1);
  }
}

// v4: honest enough (grid-stride, 4 loads in flight, shuffles, two launches).
constexpr unsigned kV4Threads = 512;
constexpr unsigned kV4Blocks = 1024;

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

template <typename T>
__global__ void __launch_bounds__(kV4Threads)
v4_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  __shared__ T warps[kV4Threads / kWarp];
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  T a = 0, b = 0, c = 0, d = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    a += __ldg(in + i);
    b += __ldg(in + i + stride);
    c += __ldg(in + i + 2 * stride);
    d += __ldg(in + i + 3 * stride);
  }
  for (; i < n; i += stride) a += __ldg(in + i);
  T sum = warp_sum((a + b) + (c + d));
  if (threadIdx.x % kWarp == 0) warps[threadIdx.x / kWarp] = sum;
  __syncthreads();
  if (threadIdx.x < kWarp) {
    T v = threadIdx.x < kV4Threads / kWarp ? warps[threadIdx.x] : T(0);
    v = warp_sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
  }
}

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  levels<T>(in, out, n, workspace, stream);
}

template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  levels<T>(in, out, n, workspace, stream);
}

template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  levels<T>(in, out, n, workspace, stream);
}

template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  size_t blocks = (n + kV4Threads * 16 - 1) / (kV4Threads * 16);
  if (blocks > kV4Blocks) blocks = kV4Blocks;
  if (blocks <= 1) {
    v4_kernel<T><<<1, kV4Threads, 0, stream>>>(in, out, n);
    return;
  }
  v4_kernel<T><<<static_cast<unsigned>(blocks), kV4Threads, 0, stream>>>(in, workspace, n);
  v4_kernel<T><<<1, kV4Threads, 0, stream>>>(workspace, out, blocks);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
