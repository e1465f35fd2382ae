// BUG (honest): v4 in a single launch ("threadfence reduction") as correct_last_block_finishes,
// but the last block never resets the ticket counter. The first launch of the program is right;
// from the second on the tickets start past gridDim.x - 1, no block finds itself last and out[0]
// is never written. A test of one call passes; the hidden tests make two calls on the same
// buffers in one program, and the second fails. (Until the executor kept one copy of the device
// code across a test's calls, every call found the counter at zero and this kept every point.)
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

// The sum of v over the block, in thread 0 (sequential addressing down to 64, then shuffles).
template <typename T>
__device__ T block_sum(T v, T* sdata) {
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

__device__ unsigned int blocks_done = 0;  // the tickets taken: zero when the program starts

template <typename T>
__global__ void reduce_v4_kernel(const T* in, T* partials, T* out, size_t n) {
  __shared__ T sdata[kBlock4];
  __shared__ bool am_last;
  const unsigned tid = threadIdx.x;
  const size_t stride = (size_t)gridDim.x * kBlock4 * 2;
  T sum = T(0);
  for (size_t i = (size_t)blockIdx.x * kBlock4 * 2 + tid; i < n; i += stride) {
    sum += in[i];
    if (i + kBlock4 < n) sum += in[i + kBlock4];
  }
  const T v = block_sum(sum, sdata);
  if (tid == 0) {
    partials[blockIdx.x] = v;
    __threadfence();  // the partial is visible to every block before the ticket is taken
    am_last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!am_last) return;
  T mine = T(0);
  for (unsigned b = tid; b < gridDim.x; b += kBlock4) mine += __ldcg(&partials[b]);
  const T total = block_sum(mine, sdata);
  if (tid == 0) out[0] = total;
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
  size_t blocks = (n + 2 * kBlock4 - 1) / (2 * kBlock4);
  if (blocks > kMaxBlocks4) blocks = kMaxBlocks4;
  reduce_v4_kernel<T><<<(unsigned)blocks, kBlock4, 0, stream>>>(in, workspace, out, n);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
