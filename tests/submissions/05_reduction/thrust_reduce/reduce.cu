// CHEATING (vendor library): v4 is thrust::reduce(thrust::cuda::par.on(stream), in, in + n),
// which returns the sum to the host (it waits for the stream), then a one-thread kernel stores
// it in out[0]. v1..v3 are the reference's.
// Defence: the policy's include rule (<thrust/...>) and definition rule (thrust:: and cub::
// instantiations); it also imports copies and a stream synchronisation.
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>

#include "reduce.h"

namespace {

constexpr unsigned kBlock = 256;       // threads per block, v1..v3 (a power of two)

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
__global__ void store_kernel(T* out, T value) { *out = value; }

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
void reduce_v4_optimized(const T* in, T* out, size_t n, T*, cudaStream_t stream) {
  const T sum = thrust::reduce(thrust::cuda::par.on(stream), in, in + n, T(0));
  store_kernel<T><<<1, 1, 0, stream>>>(out, sum);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
