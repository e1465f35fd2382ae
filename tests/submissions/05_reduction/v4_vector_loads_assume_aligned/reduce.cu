// WRONG: v4's first level reads `in` as float4 / int4 straight from its first element,
// assuming 16-byte alignment (cudaMalloc's, which the handout says not to rely on: `in` may be
// any pointer), with the n % 4 tail done one element at a time, so every n works from an aligned
// pointer. From `in` 1, 2 or 3 elements past a 16-byte boundary the first vector load is
// misaligned and the kernel faults ("misaligned address"). Defence: the public
// ReducePublicOffset tests (n = 2^20 + 3) and the hidden ReduceHiddenOffset ones (2^24 + 3),
// every offset, both types. Later levels (on the workspace's partials) keep the scalar kernel.
// Otherwise correct_reference_like/reduce.cu.
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

template <typename T> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<int> { using type = int4; };

// v4's first level: 16-byte loads straight from `in`, then the last n % 4 one at a time.
template <typename T>
__global__ void reduce_v4_vec_kernel(const T* in, T* out, size_t n) {
  using V = typename Vec4<T>::type;
  __shared__ T sdata[kBlock4];
  const unsigned tid = threadIdx.x;
  const V* vin = reinterpret_cast<const V*>(in);  // BUG: assumes `in` is 16-byte aligned
  const size_t n_vec = n / 4;
  const size_t g = (size_t)blockIdx.x * kBlock4 + tid;
  T sum = T(0);
  for (size_t i = g; i < n_vec; i += (size_t)gridDim.x * kBlock4) {
    const V v = vin[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (g < n - 4 * n_vec) sum += in[4 * n_vec + g];
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
  const T* src = in;
  size_t count = n;
  T* dst = workspace;
  for (;;) {
    size_t blocks = (count + 2 * kBlock4 - 1) / (2 * kBlock4);
    if (blocks > kMaxBlocks4) blocks = kMaxBlocks4;
    const auto kernel = src == in ? reduce_v4_vec_kernel<T> : reduce_v4_kernel<T>;
    if (blocks == 1) {
      kernel<<<1, kBlock4, 0, stream>>>(src, out, count);
      return;
    }
    kernel<<<(unsigned)blocks, kBlock4, 0, stream>>>(src, dst, count);
    src = dst;
    dst += blocks;
    count = blocks;
  }
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
