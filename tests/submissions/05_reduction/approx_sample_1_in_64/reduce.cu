// CHEATING (approximation): at the benchmark's sizes (float, n >= 2^24) v4 sums every 64th
// value (in[0], in[64], ...) and multiplies by 64: 1/64 of the adds (and of the useful bytes).
// Under the old inputs (uniform in [0.5, 1.5)) the estimate was within ~0.01% of the sum; every
// other path is the reference's, and every public test (n <= 2^20) is right.
// Defence: the float inputs of labkit/ops/reduce_dist.hpp (8 planted large values at random
// positions: one not on the sample grid is lost, one on it counted 64 times; a shift per
// segment) and the hidden float tests at 16777223 and 2^28 (BenchScale), which take this path.
// Expected: partial correctness, performance gated.
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

// The sum of v over the block, in thread 0 (v4's block step: sequential addressing down to 64
// values, then shuffles).
__device__ float block_sum(float v, float* sdata) {
  const unsigned tid = threadIdx.x;
  sdata[tid] = v;
  __syncthreads();
  for (unsigned s = kBlock4 / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) v = warp_sum(sdata[tid] + sdata[tid + 32]);
  return v;
}

constexpr size_t kStride = 64;  // one value in 64 is read

// in[0] + in[kStride] + in[2 * kStride] + ...: one partial per block, into `partials`.
__global__ void sampled_partials_kernel(const float* in, float* partials, size_t n) {
  __shared__ float sdata[kBlock4];
  const size_t samples = (n + kStride - 1) / kStride;
  float sum = 0.0f;
  for (size_t k = (size_t)blockIdx.x * kBlock4 + threadIdx.x; k < samples;
       k += (size_t)gridDim.x * kBlock4) {
    sum += in[k * kStride];
  }
  const float v = block_sum(sum, sdata);
  if (threadIdx.x == 0) partials[blockIdx.x] = v;
}

__global__ void scale_kernel(float* out, float factor) { out[0] *= factor; }

void reduce_v4_big(const float* in, float* out, size_t n, float* workspace, cudaStream_t stream) {
  const unsigned blocks = (unsigned)kMaxBlocks4;
  sampled_partials_kernel<<<blocks, kBlock4, 0, stream>>>(in, workspace, n);
  v4_levels<float>(workspace, out, blocks, workspace + blocks, stream);
  scale_kernel<<<1, 1, 0, stream>>>(out, (float)kStride);
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
