// WRONG: v4 gives each thread 8 values (blockDim apart, each guarded by i < n) instead of a
// grid-stride loop, and sizes the grid as max(1, count / (256 * 8)) (floor): the last
// count % 2048 values are dropped once count >= 2048. Right up to n = 2047 and for 4096 and
// 1048576; n = 100003 drops 1699 values, the repeat test's 300007 drops 999; 4097, 65537,
// 268435457 drop one value and 16777223 drops seven (seen by the float tolerance at 4097, by
// the exact int sums unless the lost ints are 0).
// Caught by: MatchesReference/v4_optimized at n 4097 and 100003, the repeat test, the stream
// test (n = 100000 drops 1696). v1..v3 are correct.
#include "reduce.h"

namespace {

constexpr unsigned kBlock = 256;       // threads per block, v1..v3 (a power of two)
constexpr unsigned kBlock4 = 256;      // threads per block, v4 (a power of two, >= 64)
constexpr unsigned kPerThread4 = 8;    // v4: values per thread

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

// v4: each thread first adds kPerThread4 values kBlock4 apart, then the
// block reduces by sequential addressing down to 64 values and the first warp finishes with
// shuffles.
template <typename T>
__global__ void reduce_v4_kernel(const T* in, T* out, size_t n) {
  __shared__ T sdata[kBlock4];
  const unsigned tid = threadIdx.x;
  const size_t base = (size_t)blockIdx.x * kBlock4 * kPerThread4 + tid;
  T sum = T(0);
  for (unsigned j = 0; j < kPerThread4; ++j) {
    const size_t i = base + (size_t)j * kBlock4;
    if (i < n) sum += in[i];
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
    size_t blocks = count / (kBlock4 * kPerThread4);  // BUG: floor: drops count % 2048 values
    if (blocks == 0) blocks = 1;
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

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
