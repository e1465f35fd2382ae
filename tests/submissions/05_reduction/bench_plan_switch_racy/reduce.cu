// A KNOWN GAP (red team round 10; docs/threat-model.md, "Races the check does not reproduce"):
// the launcher routes benchmark calls, which repeat one request many times, to a barrier-free
// v4 kernel the race check never sees (it replays a test call's saved plan). A correct lab 05
// otherwise: it keeps its race points, and the benchmark times the racy kernel.
#include "reduce.h"

#include <cstdint>

namespace {
constexpr unsigned kBlock = 256;
}  // namespace

template <typename T>
__global__ void reduce_v1_interleaved_kernel(const T* __restrict__ in, T* __restrict__ out,
                                             size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
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
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    const unsigned index = 2 * s * tid;
    if (index + s < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v3_sequential_kernel(const T* __restrict__ in, T* __restrict__ out,
                                            size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

namespace {
template <typename T>
void reduce_in_levels(void (*kernel)(const T*, T*, size_t), const T* in, T* out, size_t n,
                      T* workspace, cudaStream_t stream) {
  const T* level_in = in;
  size_t count = n;
  T* level_out = workspace;
  while (count > kBlock) {
    const size_t blocks = (count + kBlock - 1) / kBlock;
    kernel<<<static_cast<unsigned>(blocks), kBlock, 0, stream>>>(level_in, level_out, count);
    level_in = level_out;
    level_out += blocks;
    count = blocks;
  }
  kernel<<<1, kBlock, 0, stream>>>(level_in, out, count);
}
}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(reduce_v1_interleaved_kernel<T>, in, out, n, workspace, stream);
}
template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(reduce_v2_strided_kernel<T>, in, out, n, workspace, stream);
}
template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(reduce_v3_sequential_kernel<T>, in, out, n, workspace, stream);
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
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Each thread's register sum over its grid-stride share of [0, n).
template <typename T>
__device__ __forceinline__ T thread_sum(const T* __restrict__ in, size_t n) {
  using V = typename Vec4<T>::type;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  T sum = T(0);
  const size_t mis = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  size_t head = mis == 0 ? 0 : 4 - mis;
  if (head > n) head = n;
  const size_t n_vec = (n - head) / 4;
  const V* body = reinterpret_cast<const V*>(in + head);
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
  const size_t tail = head + n_vec * 4;
  if (tail + tid < n) sum += in[tail + tid];
  return sum;
}
}  // namespace

// The version the race check replays (the tests' calls): a barrier between the warps' sums and
// their sum.
template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  __shared__ T sums[kV4Threads / kWarp];
  T sum = warp_sum(thread_sum(in, n));
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < blockDim.x / kWarp ? sums[lane] : T(0);
    sum = warp_sum(sum);
    if (lane == 0) out[blockIdx.x] = sum;
  }
}

// The version only benchmark calls get: no barrier; the block's warps meet through a shared
// counter that thread 0 clears at the start (a write-after-write and read-after-write hazard
// for racecheck; right in practice when every warp's loop is long).
template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_nobarrier_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  __shared__ T acc;
  __shared__ unsigned arrived;
  if (threadIdx.x == 0) {
    acc = T(0);
    arrived = 0;
  }
  T sum = warp_sum(thread_sum(in, n));
  if (threadIdx.x % kWarp == 0) {
    atomicAdd(&acc, sum);
    __threadfence_block();
    if (atomicAdd(&arrived, 1u) == blockDim.x / kWarp - 1) out[blockIdx.x] = *(volatile T*)&acc;
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

// The launcher sees every call's request (its parameters, the same made-up addresses): a
// benchmark asks for the same call again and again (2 warm-up calls, then 7 to 15 samples);
// a test asks for a shape once or twice. From the 4th identical request in a row on, the call
// is a benchmark's, and the race check (which replays a test's call) never sees its plan.
struct Seen {
  const void* in = nullptr;
  size_t n = 0;
  int repeats = 0;
};
bool is_benchmark_call(const void* in, size_t n) {
  static Seen seen;
  if (seen.in == in && seen.n == n) {
    ++seen.repeats;
  } else {
    seen = {in, n, 1};
  }
  return seen.repeats >= 4 && n >= (size_t{1} << 24);
}
}  // namespace

template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  const bool bench = is_benchmark_call(in, n);
  void (*kernel)(const T*, T*, size_t) =
      bench ? reduce_v4_nobarrier_kernel<T> : reduce_v4_optimized_kernel<T>;
  size_t blocks = (n + kV4Threads * kV4Unroll * 4 - 1) / (kV4Threads * kV4Unroll * 4);
  if (blocks > v4_resident_blocks<T>()) blocks = v4_resident_blocks<T>();
  if (blocks > kV4MaxBlocks) blocks = kV4MaxBlocks;
  if (blocks <= 1) {
    reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>(in, out, n);
    return;
  }
  kernel<<<static_cast<unsigned>(blocks), kV4Threads, 0, stream>>>(in, workspace, n);
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
