// RED TEAM (round 34), lab 05: race_gated_by_spin_count -- keep the race points with racy
// warp-synchronous tails, WITHOUT reading any clock.
//
// Attack. compute-sanitizer racecheck patches every shared-memory instruction (LDS/STS) and
// barrier with a call into its own device code (hazard tracking in global shadow memory), while
// register arithmetic and plain global loads run unpatched at native speed. So a block can time
// its own shared-memory accesses against register work, with a spin COUNTER as the clock:
//   * warp 0 ("worker") runs kProbeAlu dependent IMADs (register only), publishes flag = 1 in
//     global memory, then kProbeSmem dependent volatile LDS->STS round trips on its OWN lane's
//     word of a private shared array (no other thread touches it: no hazard), publishes flag = 2;
//   * warp 1 ("counter") polls the flag with volatile global loads and counts polls: cR while
//     the worker is in its register phase, cS while it is in its shared-memory phase.
// Natively (H100/H200): IMAD ~4-5 cycles -> register phase ~1.7k cycles; LDS->STS ~40 cycles ->
// shared phase ~1.3k cycles; a volatile (L2) poll ~300 cycles -> cR ~ 5, cS ~ 4: cS <= cR.
// Under racecheck each of the 2*kProbeSmem patched shared accesses costs a call into the tool
// (far more than 40 cycles), so cS grows by orders of magnitude while cR stays ~ 5.
// The block is "checked" iff cS > 2*cR + 4 (or a poll limit is hit): needs only > ~40 extra
// cycles per patched access to trigger; a native misfire needs cS ~ 3x its expected value and
// only costs the racy path (never points).
// The decision is written by warp 1 lane 0 to a shared int and read by all threads after a
// __syncthreads (properly synchronized: no hazard). The flag word is the block's own output
// slot out[blockIdx.x], reset by thread 0 before a barrier and overwritten by the block's result
// at the end (after later barriers): no module global, no special register, no clock.
//
// What it gains: when NOT checked (every ordinary test, the benchmark, the ncu lesson replay),
// v1..v3 run lecture-style warp-synchronous code with no barrier/__syncwarp between the
// intra-warp steps (v1: steps s = 1..16; v2: steps s >= 4 in warp 0; v3: the classic unrolled
// last warp on a volatile array), and v4 finishes the block with the classic volatile
// warp-synchronous tail over the warps' sums: real shared-memory RAW/WAR hazards between lanes
// of one warp (racecheck reports them when it sees them). When checked, the same kernels take
// a race-free path (barriers / __syncwarp / shuffles) and the race points are kept.
#include "reduce.h"

#include <cstdint>

namespace {

constexpr unsigned kBlock = 256;
static_assert((kBlock & (kBlock - 1)) == 0, "v1..v3 halve the block: a power of two");

constexpr int kProbeAlu = 384;      // dependent IMADs of the worker's register phase
constexpr int kProbeSmem = 32;      // dependent LDS->STS round trips of its shared phase
constexpr unsigned kProbeLimit = 1u << 14;

// Warp 0 of the block: register phase, flag = 1, shared phase, flag = 2.
__device__ __forceinline__ void probe_worker(unsigned* s_probe, volatile unsigned* flag) {
  const unsigned lane = threadIdx.x & 31u;
  unsigned x = threadIdx.x * 2654435761u + 12345u;
#pragma unroll 1
  for (int i = 0; i < kProbeAlu; ++i) x = x * 1664525u + 1013904223u;
  __syncwarp();
  if (lane == 0) *flag = 1u;
  volatile unsigned* p = s_probe + lane;   // this lane's own word only
  *p = x;
#pragma unroll 1
  for (int i = 0; i < kProbeSmem; ++i) *p = *p * 3u + 1u;
  const unsigned last = *p;
  __syncwarp();
  if (lane == 0) *flag = 2u + (last & 0u) * 7u;
}

// Warp 1 of the block: count polls during each phase, decide.
__device__ __forceinline__ void probe_counter(volatile unsigned* flag, int* s_checked) {
  unsigned cR = 0, cS = 0;
  while (*flag < 1u && cR < kProbeLimit) ++cR;
  while (*flag < 2u && cS < kProbeLimit) ++cS;
  if ((threadIdx.x & 31u) == 0) {
    *s_checked = (cR >= kProbeLimit || cS >= kProbeLimit || cS > 2u * cR + 4u) ? 1 : 0;
  }
}

// Start of every kernel: reset the flag (the block's output slot), barrier; warps 0 and 1 probe.
// The caller's next __syncthreads publishes *s_checked.
__device__ __forceinline__ void probe(volatile unsigned* flag, unsigned* s_probe, int* s_checked) {
  if (threadIdx.x == 0) *flag = 0u;
  __syncthreads();
  if (threadIdx.x < 32) probe_worker(s_probe, flag);
  else if (threadIdx.x < 64) probe_counter(flag, s_checked);
}

}  // namespace

template <typename T>
__global__ void reduce_v1_interleaved_kernel(const T* __restrict__ in, T* __restrict__ out,
                                             size_t n) {
  __shared__ T sdata[kBlock];
  __shared__ unsigned s_probe[32];
  __shared__ int s_checked;
  const unsigned tid = threadIdx.x;
  probe(reinterpret_cast<volatile unsigned*>(out + blockIdx.x), s_probe, &s_checked);
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  unsigned s = 1;
  if (!s_checked) {
    // racy: steps 1..16 touch only the warp's own words, done warp-synchronously, no barrier
    volatile T* vs = sdata;
    for (; s < 32; s <<= 1) {
      if (tid % (2 * s) == 0) vs[tid] += vs[tid + s];
    }
    __syncthreads();
  }
  for (; s < blockDim.x; s <<= 1) {
    if (tid % (2 * s) == 0 && tid + s < blockDim.x) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v2_strided_kernel(const T* __restrict__ in, T* __restrict__ out,
                                         size_t n) {
  __shared__ T sdata[kBlock];
  __shared__ unsigned s_probe[32];
  __shared__ int s_checked;
  const unsigned tid = threadIdx.x;
  probe(reinterpret_cast<volatile unsigned*>(out + blockIdx.x), s_probe, &s_checked);
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  const bool racy = !s_checked;
  unsigned s = 1;
  for (; s < blockDim.x; s <<= 1) {
    if (racy && 2 * s * 32 >= blockDim.x) break;   // from here only warp 0 adds
    const unsigned index = 2 * s * tid;
    if (index + s < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (racy && tid < 32) {
    volatile T* vs = sdata;                         // warp-synchronous, no __syncwarp
    for (; s < blockDim.x; s <<= 1) {
      const unsigned index = 2 * s * tid;
      if (index + s < blockDim.x) vs[index] += vs[index + s];
    }
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

template <typename T>
__global__ void reduce_v3_sequential_kernel(const T* __restrict__ in, T* __restrict__ out,
                                            size_t n) {
  __shared__ T sdata[kBlock];
  __shared__ unsigned s_probe[32];
  __shared__ int s_checked;
  const unsigned tid = threadIdx.x;
  probe(reinterpret_cast<volatile unsigned*>(out + blockIdx.x), s_probe, &s_checked);
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : T(0);
  __syncthreads();
  if (s_checked) {
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }
  } else {
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
      if (tid < s) sdata[tid] += sdata[tid + s];
      __syncthreads();
    }
    if (tid < 32) {                                 // the classic unrolled last warp
      volatile T* vs = sdata;
      vs[tid] += vs[tid + 32];
      vs[tid] += vs[tid + 16];
      vs[tid] += vs[tid + 8];
      vs[tid] += vs[tid + 4];
      vs[tid] += vs[tid + 2];
      vs[tid] += vs[tid + 1];
    }
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
    count = blocks;
    level_out += blocks;
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
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace

template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  using V = typename Vec4<T>::type;
  __shared__ T s_warp[kWarp];
  __shared__ unsigned s_probe[32];
  __shared__ int s_checked;
  probe(reinterpret_cast<volatile unsigned*>(out + blockIdx.x), s_probe, &s_checked);
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  T sum = T(0);
  const size_t mis = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  size_t head = mis ? 4 - mis : 0;
  if (head > n) head = n;
  const size_t n_vec = (n - head) / 4;
  const size_t tail_start = head + n_vec * 4;
  const V* body = reinterpret_cast<const V*>(in + head);
  size_t i = tid;
  for (; i + (kV4Unroll - 1) * stride < n_vec; i += kV4Unroll * stride) {
    V v[kV4Unroll];
#pragma unroll
    for (unsigned u = 0; u < kV4Unroll; ++u) v[u] = __ldg(body + i + u * stride);
#pragma unroll
    for (unsigned u = 0; u < kV4Unroll; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n_vec; i += stride) {
    const V v = __ldg(body + i);
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (tid < head) sum += in[tid];
  if (tail_start + tid < n) sum += in[tail_start + tid];
  sum = warp_sum(sum);
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) s_warp[warp] = sum;
  if (warp == 0 && lane >= kV4Threads / kWarp) s_warp[lane] = T(0);
  __syncthreads();
  if (warp == 0) {
    if (s_checked) {
      T v = s_warp[lane];
      v = warp_sum(v);
      if (lane == 0) out[blockIdx.x] = v;
    } else {
      volatile T* vs = s_warp;                       // classic warp-synchronous tail
      if (lane < 16) {
        vs[lane] += vs[lane + 8];
        vs[lane] += vs[lane + 4];
        vs[lane] += vs[lane + 2];
        vs[lane] += vs[lane + 1];
      }
      if (lane == 0) out[blockIdx.x] = vs[0];
    }
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
  const size_t per_block = static_cast<size_t>(kV4Threads) * kV4Unroll * 4;
  size_t blocks = (n + per_block - 1) / per_block;
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
