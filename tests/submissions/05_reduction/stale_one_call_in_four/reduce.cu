// CHEATING (stale result): at the benchmark's sizes (float, n >= 2^24) v4 reduces only on one
// call in four (a host static counter of such calls); on the other three a one-thread kernel
// copies the last sum it computed, kept in a __device__ variable, into out[0] (the output is
// poisoned before every call, so it cannot simply be left alone). A benchmark that checked only
// some calls, or the same inputs every time, would see a ~4x speed-up. Every public test
// (n <= 2^20) is right.
// Defence: fresh inputs on every call, checked after every call; every test from 2^24 elements
// makes two calls, and of two calls in a row at least one is stale here, whichever tests ran
// before in the worker. Expected: partial correctness (the float tests from 2^24 fail),
// performance gated (the benchmark's second timed call would be stale too).
#include <type_traits>

#include "reduce.h"

namespace {

constexpr unsigned kBlock = 256;       // threads per block, v1..v3 (a power of two)
constexpr unsigned kBlock4 = 256;      // threads per block, v4 (a power of two, >= 64)
constexpr size_t kMaxBlocks4 = 1024;   // v4 grid cap; the grid-stride loop covers the rest

template <typename T>
using LevelKernel = void (*)(const T*, T*, size_t);

// Kernel decomposition for v1..v3: each block reduces kBlock consecutive values to one
// partial; levels repeat on the partials until one block is left, which writes out[0].
template <typename T>
void decompose(LevelKernel<T> kernel, const T* in, T* out, size_t n, T* workspace,
               cudaStream_t stream) {
  const T* src = in;
  size_t count = n;
  T* dst = workspace;
  while (count > kBlock) {
    const size_t blocks = (count + kBlock - 1) / kBlock;
    kernel<<<(unsigned)blocks, kBlock, 0, stream>>>(src, dst, count);
    src = dst;
    dst += blocks;
    count = blocks;
  }
  kernel<<<1, kBlock, 0, stream>>>(src, out, count);
}

// v1: interleaved addressing; highly divergent (tid % (2*s)).
template <typename T>
__global__ void reduce_v1_kernel(const T* in, T* out, size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = (size_t)blockIdx.x * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v2: strided index, the active threads are contiguous.
template <typename T>
__global__ void reduce_v2_kernel(const T* in, T* out, size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = (size_t)blockIdx.x * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

// v3: sequential addressing.
template <typename T>
__global__ void reduce_v3_kernel(const T* in, T* out, size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = (size_t)blockIdx.x * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// v4: each thread first adds pairs of values kBlock4 apart over a grid-stride loop, then the
// block reduces by sequential addressing down to 64 values and the first warp finishes with
// shuffles.
template <typename T>
__global__ void reduce_v4_kernel(const T* in, T* out, size_t n) {
  __shared__ T sdata[kBlock4];
  const unsigned tid = threadIdx.x;
  const size_t stride = (size_t)gridDim.x * kBlock4 * 2;
  T sum = T(0);
  for (size_t i = (size_t)blockIdx.x * kBlock4 * 2 + tid; i < n; i += stride) {
    sum += in[i];
    if (i + kBlock4 < n) sum += in[i + kBlock4];
  }
  sdata[tid] = sum;
  __syncthreads();
  for (unsigned s = kBlock4 / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    const T v = warp_sum(sdata[tid] + sdata[tid + 32]);
    if (tid == 0) out[blockIdx.x] = v;
  }
}

// ---- the shortcut: float only, n >= kBigN ---------------------------------------------------
// The benchmark's sizes (2^24 and 2^28 in bench/bench.cpp); the public tests stop at 2^20.
constexpr size_t kBigN = size_t{1} << 24;

// v4's levels, as before: capped grid-stride launches through the workspace, the last into out.
template <typename T>
void v4_levels(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  const T* src = in;
  size_t count = n;
  T* dst = workspace;
  for (;;) {
    size_t blocks = (count + 2 * kBlock4 - 1) / (2 * kBlock4);
    if (blocks > kMaxBlocks4) blocks = kMaxBlocks4;
    if (blocks == 1) {
      reduce_v4_kernel<T><<<1, kBlock4, 0, stream>>>(src, out, count);
      return;
    }
    reduce_v4_kernel<T><<<(unsigned)blocks, kBlock4, 0, stream>>>(src, dst, count);
    src = dst;
    dst += blocks;
    count = blocks;
  }
}

__device__ float g_last_sum;  // the last sum v4 computed at a big size

__global__ void remember_sum_kernel(const float* out) { g_last_sum = out[0]; }
__global__ void replay_sum_kernel(float* out) { out[0] = g_last_sum; }

void reduce_v4_big(const float* in, float* out, size_t n, float* workspace, cudaStream_t stream) {
  static unsigned long long big_calls = 0;
  if (big_calls++ % 4 != 0) {  // 3 calls in 4: the last sum again
    replay_sum_kernel<<<1, 1, 0, stream>>>(out);
    return;
  }
  v4_levels<float>(in, out, n, workspace, stream);
  remember_sum_kernel<<<1, 1, 0, stream>>>(out);
}

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  decompose<T>(reduce_v1_kernel<T>, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  decompose<T>(reduce_v2_kernel<T>, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  decompose<T>(reduce_v3_kernel<T>, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (n >= kBigN) {  // the benchmark's sizes only: no public test gets here
      reduce_v4_big(in, out, n, workspace, stream);
      return;
    }
  }
  v4_levels<T>(in, out, n, workspace, stream);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
