// Red team round 10: tells a call that follows others in one executor (every benchmark call
// after the first) from the race check's replay (a fresh process) by a mark it leaves in the last
// 8 bytes of the 2 MiB page that holds `in`, past the 64 KiB canary, and takes a racy first level
// only where it finds one. A correct lab 05 otherwise; the launcher is honest (one plan for every
// call). The defence: guarded buffers are whole pages and the canary after the data runs to the
// allocation's end (guarded_allocation_bytes), so the mark itself is a write past the end.
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

// Where this call can leave a mark that the next call in the same process finds: the last 8 bytes
// of the 2 MiB-granular mapping that holds `in` (data, then the 64 KiB canary zone, then slack
// nobody writes or checks). Null when there is no such slack (small or exactly-fitting buffers).
__device__ __forceinline__ unsigned long long* slack_mark(const void* in, size_t bytes) {
  constexpr uintptr_t kGran = uintptr_t{2} << 20, kGuard = uintptr_t{1} << 16;
  if (bytes < (size_t{8} << 20)) return nullptr;               // own 2 MiB-granular mapping only
  const uintptr_t end = ((reinterpret_cast<uintptr_t>(in) + bytes + 3) & ~uintptr_t{3}) + kGuard;
  const uintptr_t mapped_end = (end + kGran - 1) & ~(kGran - 1);
  if (mapped_end - end < 64) return nullptr;
  return reinterpret_cast<unsigned long long*>(mapped_end - 8);
}
constexpr unsigned long long kMagic = 0x5EC0DCA11F011057ull;

// v4's first level: with the mark present (a call that follows an earlier one in this process:
// every benchmark call after the first), the warps of a block meet through a shared counter with
// no barrier (a hazard for racecheck); without it (the race check's replay, a fresh process),
// through __syncthreads. Both give the right sum.
template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  __shared__ T sums[kV4Threads / kWarp];
  __shared__ T acc;
  __shared__ unsigned arrived;
  unsigned long long* mark = slack_mark(in, n * sizeof(T));
  const bool follows = mark != nullptr &&
                       *reinterpret_cast<volatile unsigned long long*>(mark) ==
                           (kMagic ^ reinterpret_cast<uintptr_t>(mark));
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (follows) {
    if (threadIdx.x == 0) {
      acc = T(0);
      arrived = 0;
    }
    T sum = warp_sum(thread_sum(in, n));
    if (lane == 0) {
      atomicAdd(&acc, sum);
      __threadfence_block();
      if (atomicAdd(&arrived, 1u) == blockDim.x / kWarp - 1) out[blockIdx.x] = *(volatile T*)&acc;
    }
  } else {
    T sum = warp_sum(thread_sum(in, n));
    if (lane == 0) sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
      sum = lane < blockDim.x / kWarp ? sums[lane] : T(0);
      sum = warp_sum(sum);
      if (lane == 0) out[blockIdx.x] = sum;
    }
  }
  if (mark != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
    *mark = kMagic ^ reinterpret_cast<uintptr_t>(mark);         // for the next call
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
  reduce_v4_optimized_kernel<T><<<static_cast<unsigned>(blocks), kV4Threads, 0, stream>>>(in, workspace, n);
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
