// A KNOWN GAP (red team round 11; docs/threat-model.md, "Races the check does not reproduce"):
// a one-block gate kernel, launched cooperatively, reads the grid-sync workspace's address
// (%envreg1/2, which a grid sync needs and the bank 0 rule allows), looks there for a mark an
// earlier call left and leaves one; v3's warp-synchronous tail (no __syncwarp, a hazard for
// racecheck) runs only where a mark is found, never in the race check's replay, a fresh process.
// Nothing scrubs or checks that workspace. A correct lab 05 otherwise.
#include "reduce.h"

#include <cstdint>

namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kMA = 0x5EC0DE01u, kMB = 0xFEEDF00Du, kMC = 0x0BADCAFEu;

}  // namespace

// Gate A: the driver's grid-sync workspace (%envreg1/%envreg2, bank 0 slots 0x44-0x4c, which the
// policy allows for cooperative groups). It is device memory of the context that no scrub, no
// module reload and no canary touches. A cooperative launch gets its address; a mark left there
// by an earlier call of this process says "not the replay". A fresh process (the race check's
// replay) finds no mark: the safe path. Nothing here calls grid.sync(), so the words are free.
__global__ void gate_gridws_kernel(unsigned* flag) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  unsigned lo = 0, hi = 0;
  asm volatile("mov.u32 %0, %%envreg1;" : "=r"(lo));
  asm volatile("mov.u32 %0, %%envreg2;" : "=r"(hi));
  volatile unsigned* ws = reinterpret_cast<volatile unsigned*>((uint64_t{hi} << 32) | lo);
  unsigned later = 0;
  if (ws != nullptr) {
    // {wsSize, barrier, ...}: past the header where the workspace has room, else the barrier
    // word (no kernel of this file synchronises the grid).
    volatile unsigned* m = ws[0] >= 16 ? ws + 2 : ws + 1;
    later = (m[0] == kMA) ? 1u : 0u;
    m[0] = kMA;
  }
  *flag = later;
}

static void gate(unsigned* flag, cudaStream_t stream) {
  void* args[] = {&flag};
  cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(gate_gridws_kernel), dim3(1),
                              dim3(32), args, 0, stream);
}


template <typename T>
__global__ void reduce_v1_interleaved_kernel(const T* __restrict__ in, T* __restrict__ out,
                                             size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = blockIdx.x * size_t{blockDim.x} + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0 && tid + s < blockDim.x) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v2_strided_kernel(const T* __restrict__ in, T* __restrict__ out,
                                         size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = blockIdx.x * size_t{blockDim.x} + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index + s < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v3 with the gate: `flag` points at the word gate() set (1: later call, take the fast path).
template <typename T>
__global__ void reduce_v3_sequential_kernel(const T* __restrict__ in, T* __restrict__ out,
                                            size_t n, const unsigned* flag) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = blockIdx.x * size_t{blockDim.x} + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  const bool fast = *(volatile const unsigned*)flag == 1u;
  if (fast) {
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }
    if (tid < 32) {  // warp-synchronous, no __syncwarp: what racecheck reports
      volatile T* v = sdata;
      v[tid] += v[tid + 32]; v[tid] += v[tid + 16]; v[tid] += v[tid + 8];
      v[tid] += v[tid + 4]; v[tid] += v[tid + 2]; v[tid] += v[tid + 1];
    }
  } else {
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

namespace {

// Levels; workspace[0] is the gate's word, partials from workspace + 1.
template <typename T, typename K>
void levels(K launch, const T* in, T* out, size_t n, T* workspace) {
  const T* level_in = in;
  T* level_out = workspace + 1;
  size_t count = n;
  while (count > kBlock) {
    const size_t blocks = (count + kBlock - 1) / kBlock;
    launch(static_cast<unsigned>(blocks), level_in, level_out, count);
    level_in = level_out;
    level_out += blocks;
    count = blocks;
  }
  launch(1u, level_in, out, count);
}

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  levels<T>([&](unsigned b, const T* i, T* o, size_t c) {
    reduce_v1_interleaved_kernel<T><<<b, kBlock, 0, stream>>>(i, o, c);
  }, in, out, n, workspace);
}

template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  levels<T>([&](unsigned b, const T* i, T* o, size_t c) {
    reduce_v2_strided_kernel<T><<<b, kBlock, 0, stream>>>(i, o, c);
  }, in, out, n, workspace);
}

template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  unsigned* flag = reinterpret_cast<unsigned*>(workspace);
  gate(flag, stream);
  levels<T>([&](unsigned b, const T* i, T* o, size_t c) {
    reduce_v3_sequential_kernel<T><<<b, kBlock, 0, stream>>>(i, o, c, flag);
  }, in, out, n, workspace);
}

namespace {

constexpr unsigned kV4Threads = 512;
constexpr unsigned kV4Unroll = 4;
constexpr unsigned kV4MaxBlocks = 1024;
constexpr unsigned kWarp = 32;

template <typename T> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<int> { using type = int4; };

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace

template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  using V = typename Vec4<T>::type;
  const size_t tid = blockIdx.x * size_t{blockDim.x} + threadIdx.x;
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  T sum = T(0);
  const size_t mis = reinterpret_cast<uintptr_t>(in) % 16;
  size_t head = mis == 0 ? 0 : (16 - mis) / sizeof(T);
  if (head > n) head = n;
  const V* body = reinterpret_cast<const V*>(in + head);
  const size_t n_vec = (n - head) / 4;
  size_t i = tid;
  for (; i + (kV4Unroll - 1) * stride < n_vec; i += kV4Unroll * stride) {
    V v[kV4Unroll];
#pragma unroll
    for (unsigned u = 0; u < kV4Unroll; ++u) v[u] = __ldg(body + i + u * stride);
#pragma unroll
    for (unsigned u = 0; u < kV4Unroll; ++u) sum += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n_vec; i += stride) {
    const V v = __ldg(body + i);
    sum += v.x + v.y + v.z + v.w;
  }
  if (tid < head) sum += in[tid];
  const size_t tail_start = head + n_vec * 4;
  if (tail_start + tid < n) sum += in[tail_start + tid];
  __shared__ T warp_sums[kV4Threads / kWarp];
  sum = warp_sum(sum);
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    T v = lane < blockDim.x / kWarp ? warp_sums[lane] : T(0);
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
  }
}

namespace {

template <typename T>
unsigned v4_resident_blocks() {
  static const unsigned blocks = [] {
    int device = 0, sms = 1, per_sm = 1;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_v4_optimized_kernel<T>,
                                                  kV4Threads, 0);
    const int total = (sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
    return static_cast<unsigned>(total);
  }();
  return blocks;
}

}  // namespace

template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  size_t blocks = (n + kV4Threads * kV4Unroll * 4 - 1) / (kV4Threads * kV4Unroll * 4);
  if (blocks > v4_resident_blocks<T>()) blocks = v4_resident_blocks<T>();
  if (blocks > kV4MaxBlocks) blocks = kV4MaxBlocks;
  if (blocks <= 1) {
    reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>(in, out, n);
    return;
  }
  reduce_v4_optimized_kernel<T><<<static_cast<unsigned>(blocks), kV4Threads, 0, stream>>>(
      in, workspace, n);
  reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>(workspace, out, blocks);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
