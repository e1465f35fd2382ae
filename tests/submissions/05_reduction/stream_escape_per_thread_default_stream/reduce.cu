// Lab 05: parallel reduction.
//
// Red-team case "stream_escape_per_thread_default_stream".
// Every launcher puts one empty kernel on the `stream` it is given and ALL of its real work on
// cudaStreamPerThread, a stream token the executor accepts (Executor::stream_of) although the
// rules say "enqueue on stream". The capture test (LaunchesOnTheGivenStream: the call recorded
// into a graph from `stream`, cudaStreamCaptureModeGlobal) does not catch it: a launch on the
// per-thread stream during a global-mode capture of another non-blocking stream is legal and
// runs eagerly (measured on the H200: no error, graph of 1 node, right output), so the graph
// holds the empty kernel and the output is right. In the benchmark, the executor's events
// (worker_event_ms, the time floor "never trusted alone") only see the empty kernel.
#include "reduce.h"

#include <cstdint>

namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kWarp = 32;

// What the launchers put on the `stream` they are given: one empty block, so that the capture
// test's graph is not empty ("the launcher put no work on its stream").
__global__ void token_kernel() {}

// Where the real work goes: the per-thread default stream, a token the executor accepts
// (Executor::stream_of) and that is ordered neither with the tests' non-blocking stream nor
// with the benchmark's blocking one.
const cudaStream_t kWork = cudaStreamPerThread;

template <typename T>
__global__ void __launch_bounds__(kBlock)
tree_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = size_t{blockIdx.x} * kBlock + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = kBlock / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
void levels(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  token_kernel<<<1, kWarp, 0, stream>>>();
  const T* level_in = in;
  T* level_out = workspace;
  size_t count = n;
  while (count > kBlock) {
    const size_t blocks = (count + kBlock - 1) / kBlock;
    tree_kernel<T><<<static_cast<unsigned>(blocks), kBlock, 0, kWork>>>(level_in, level_out, count);
    level_in = level_out;
    count = blocks;
    level_out += blocks;
  }
  tree_kernel<T><<<1, kBlock, 0, kWork>>>(level_in, out, count);
}

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
  token_kernel<<<1, kWarp, 0, stream>>>();
  size_t blocks = (n + kV4Threads * 16 - 1) / (kV4Threads * 16);
  if (blocks > kV4Blocks) blocks = kV4Blocks;
  if (blocks <= 1) {
    v4_kernel<T><<<1, kV4Threads, 0, kWork>>>(in, out, n);
    return;
  }
  v4_kernel<T><<<static_cast<unsigned>(blocks), kV4Threads, 0, kWork>>>(in, workspace, n);
  v4_kernel<T><<<1, kV4Threads, 0, kWork>>>(workspace, out, blocks);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
