// RED TEAM ROUND 38: v1..v3 end their trees in one warp with no barrier (a real race that
// still sums right), in static global-namespace kernels named _ZN6labkit_v3f_scrub_shared_kernel
// and alike: demangled, such a name started like the executor's scrubs, which racecheck leaves
// out by a pattern (had the tool matched demangled names too, these kernels would go untracked).
// Beaten by the pattern naming the scrubs' mangled names exactly, anchored at both ends.
//
// Lab 05: parallel reduction.
//
// v1..v3: the lecture's trees in shared memory, one launch per level, but the last 32 elements
// of every tree are folded warp-synchronously (volatile shared memory, no barrier, no
// __syncwarp): the classic "unrolled last warp", which racecheck reports as shared-memory
// hazards on Volta and later. v4: grid-stride, shuffles, two launches.
#include "reduce.h"

#include <cstdint>

namespace {

constexpr unsigned kBlock = 256;

}  // namespace

// Non-template kernels in the global namespace (the policy lets a submission name its kernels
// anything outside labkit::, testing::, benchmark::). One per version and element type.
#define TREE_TAIL(T)                                                                        \
  if (tid < 32) {                                                                           \
    volatile T* v = sdata;                                                                  \
    v[tid] += v[tid + 32];                                                                  \
    v[tid] += v[tid + 16];                                                                  \
    v[tid] += v[tid + 8];                                                                   \
    v[tid] += v[tid + 4];                                                                   \
    v[tid] += v[tid + 2];                                                                   \
    v[tid] += v[tid + 1];                                                                   \
  }                                                                                         \
  if (tid == 0) out[blockIdx.x] = sdata[0];

#define LOAD(T)                                                                             \
  __shared__ T sdata[kBlock];                                                               \
  const unsigned tid = threadIdx.x;                                                         \
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;                      \
  sdata[tid] = i < n ? in[i] : T(0);                                                        \
  __syncthreads();

// v1: interleaved addressing down to 64 partials, then the racy last warp.
#define V1_BODY(T)                                                                          \
  LOAD(T)                                                                                   \
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {                                      \
    if (tid < s) sdata[tid] += sdata[tid + s];                            \
    __syncthreads();                                                                        \
  }                                                                                         \
  TREE_TAIL(T)

// v2: strided indices for the upper levels (folded halves so the racy tail sees the sum).
#define V2_BODY(T)                                                                          \
  LOAD(T)                                                                                   \
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {                                      \
    const unsigned index = tid;                                                             \
    if (index < s) sdata[index] += sdata[index + s];                                        \
    __syncthreads();                                                                        \
  }                                                                                         \
  TREE_TAIL(T)

#define V3_BODY(T)                                                                          \
  LOAD(T)                                                                                   \
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {                                      \
    if (tid < s) sdata[tid] += sdata[tid + s];                                              \
    __syncthreads();                                                                        \
  }                                                                                         \
  TREE_TAIL(T)

// The names: a plain C++ identifier that starts "_ZN6labkit" and holds "scrub_shared_kernel".
// Mangled, it is _Z<len>_ZN6labkit..._scrub_shared_kernelPKfPfm (no labkit:: scope: the policy's
// _harness_namespace_violations reads outer name "_ZN6labkit_..." and lets it pass); demangled,
// it is "_ZN6labkit_..._scrub_shared_kernel(float const*, float*, unsigned long)", which matches
// the racecheck exclusion regex ^_ZN6labkit.*scrub_(local|shared)_kernel if compute-sanitizer
// applies --kernel-name-exclude regex= to the demangled name as well as the mangled one.
static __global__ void _ZN6labkit_v1f_scrub_shared_kernel(const float* __restrict__ in,
                                                   float* __restrict__ out, size_t n) { V1_BODY(float) }
static __global__ void _ZN6labkit_v1i_scrub_shared_kernel(const int* __restrict__ in,
                                                   int* __restrict__ out, size_t n) { V1_BODY(int) }
static __global__ void _ZN6labkit_v2f_scrub_shared_kernel(const float* __restrict__ in,
                                                   float* __restrict__ out, size_t n) { V2_BODY(float) }
static __global__ void _ZN6labkit_v2i_scrub_shared_kernel(const int* __restrict__ in,
                                                   int* __restrict__ out, size_t n) { V2_BODY(int) }
static __global__ void _ZN6labkit_v3f_scrub_shared_kernel(const float* __restrict__ in,
                                                   float* __restrict__ out, size_t n) { V3_BODY(float) }
static __global__ void _ZN6labkit_v3i_scrub_shared_kernel(const int* __restrict__ in,
                                                   int* __restrict__ out, size_t n) { V3_BODY(int) }

namespace {

template <typename T> struct Kernels;
template <> struct Kernels<float> {
  static constexpr void (*v1)(const float*, float*, size_t) = _ZN6labkit_v1f_scrub_shared_kernel;
  static constexpr void (*v2)(const float*, float*, size_t) = _ZN6labkit_v2f_scrub_shared_kernel;
  static constexpr void (*v3)(const float*, float*, size_t) = _ZN6labkit_v3f_scrub_shared_kernel;
};
template <> struct Kernels<int> {
  static constexpr void (*v1)(const int*, int*, size_t) = _ZN6labkit_v1i_scrub_shared_kernel;
  static constexpr void (*v2)(const int*, int*, size_t) = _ZN6labkit_v2i_scrub_shared_kernel;
  static constexpr void (*v3)(const int*, int*, size_t) = _ZN6labkit_v3i_scrub_shared_kernel;
};

template <typename T>
void reduce_in_levels(void (*kernel)(const T*, T*, size_t), const T* in, T* out, size_t n,
                      T* workspace, cudaStream_t stream) {
  const T* level_in = in;
  T* level_out = workspace;
  size_t count = n;
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
  reduce_in_levels<T>(Kernels<T>::v1, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(Kernels<T>::v2, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(Kernels<T>::v3, in, out, n, workspace, stream);
}

// ---------------------------------------------------------------------------------------------
// v4: honest (grid-stride, 16-byte loads, shuffles, two launches).
// ---------------------------------------------------------------------------------------------

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

}  // namespace

template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
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
  const size_t tail_start = head + n_vec * 4;
  if (tail_start + tid < n) sum += in[tail_start + tid];
  __shared__ T warps[kV4Threads / kWarp];
  sum = warp_sum(sum);
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) warps[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    T v = lane < blockDim.x / kWarp ? warps[lane] : T(0);
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
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
  reduce_v4_optimized_kernel<T><<<static_cast<unsigned>(blocks), kV4Threads, 0, stream>>>(
      in, workspace, n);
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
