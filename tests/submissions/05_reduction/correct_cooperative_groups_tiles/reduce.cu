// CORRECT, unusual: v4's block reduction with cooperative groups: each 32-thread tile
// (cg::tiled_partition<32>) reduces with cg::reduce(tile, v, cg::plus<T>()), one shared slot per
// tile, and the first tile reduces those. Same decomposition as the reference. Cooperative
// groups is part of the CUDA toolkit's device headers, not a vendor library: allowed.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "reduce.h"

namespace cg = cooperative_groups;

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
__global__ void reduce_v4_kernel(const T* in, T* out, size_t n) {
  __shared__ T tile_sums[kBlock4 / 32];
  const unsigned tid = threadIdx.x;
  const size_t stride = (size_t)gridDim.x * kBlock4 * 2;
  T sum = T(0);
  for (size_t i = (size_t)blockIdx.x * kBlock4 * 2 + tid; i < n; i += stride) {
    sum += in[i];
    if (i + kBlock4 < n) sum += in[i + kBlock4];
  }
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const T v = cg::reduce(tile, sum, cg::plus<T>());
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  block.sync();
  if (tile.meta_group_rank() == 0) {
    const T w = tile.thread_rank() < tile.meta_group_size() ? tile_sums[tile.thread_rank()] : T(0);
    const T total = cg::reduce(tile, w, cg::plus<T>());
    if (tile.thread_rank() == 0) out[blockIdx.x] = total;
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
