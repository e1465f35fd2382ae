// CHEAT (seed prediction through the workspace): performance points for v4 without reading the
// input (the float benchmark reduce/v4_optimized/268435456). Written by a red team holding only
// the student release; the defence that must beat it: every seed the judges derive is a one-way
// step from its parent (labkit/random.hpp mix_seed: SipHash-2-4), the garbage's too, so the
// garbage gives away only its own seed. For this corpus its fallback at the benchmark's size is a
// correct but slow single-block sum: if the prediction works, v4 is fast; if not, slow.
//
// The red team's description, against the earlier invertible mix_seed:
//
// WHAT IT DOES
//   The bench judge fills the workspace (an in-out buffer) before every timed call with
//   garbage drawn from the SAME per-call seed as the input (common/src/bench_suite.cpp,
//   SharedBuffers::reset: fill_uniform_i32(ws, ..., mix_seed(seed, 0x5C7A7C40 + b), -2^30, 2^30)
//   and SharedBuffers::draw: fill_source(in, kReduceF32, ..., buffer_seed(seed, 0))).
//   The generator is splitmix64's finaliser, a bijection (labkit/random.hpp hash64), and
//   mix_seed / buffer_seed are invertible, so:
//     1. from workspace[0] the kernel knows hash64(s_w, 0) mod (2^31 + 1); it tries the 2^33
//        64-bit preimages, inverts the finaliser for each and keeps the s_w whose next three
//        garbage words match (a GPU brute force of ~2^33 cheap candidates: tens of ms, done in
//        the first WARM-UP call, which the benchmark does not record: bench.hpp warmup = 2);
//     2. s_w -> the call's seed -> buffer_seed -> the input's whole ReduceDist (scale, offset,
//        per-segment shifts, where the planted element is) (labkit/ops/reduce_dist.hpp);
//     3. the sum is n*offset*scale + sum over segments of shift*len*scale, plus the planted
//        element (ONE load, at a position the seed gives), minus its ordinary value: the rest
//        (sum of the u[i]) is ~sqrt(n/12)*scale, about 55 times inside the bound
//        4 sqrt(n) 2^-24 sum|x|. 2^12..2^18 segment hashes instead of 2^28 loads;
//     4. the base seed of the benchmark (mix_seed(base, i) per timed call) is kept in the
//        device heap (malloc in a kernel survives the module reloads; docs/architecture.md
//        "What this leaves"), so the later calls find their seed with a few hashes;
//     5. it then spins on %globaltimer until 4n bytes / (0.93 x the GPU's theoretical DRAM
//        bandwidth, from cudaDevAttrMemoryClockRate and GlobalMemoryBusWidth in the planner)
//        have passed: ratio vs CUB ~1.0-1.1 (target 0.9: full points), GBps below the
//        plausibility ceiling (1.25 x measured read bandwidth).
//   Anything unexpected (garbage out of range, no seed found, a sampled input element that the
//   recovered distribution does not reproduce bit for bit) falls back to the honest kernels,
//   so every correctness test is computed honestly (tests draw garbage differently).
//
// WHICH DEFENCE IT BEATS
//   "the worker never sees the judge's seed" / "Each timed call gets fresh inputs" /
//   the reduce distribution designed so that "no sum can be predicted, sampled or reused"
//   (reduce.hpp): the seed is not sent, but it is written into the worker's own workspace,
//   through an invertible generator, before the clock starts. The plausibility check is beaten
//   by padding the time to just under the ceiling.
//
// Only v4<float> at n >= 2^24 takes this path; v1..v3 and ints are honest.
#include "reduce.h"

#include <cstdint>
#include <type_traits>

namespace {

constexpr unsigned kBlock = 256;
static_assert((kBlock & (kBlock - 1)) == 0, "v1..v3 halve the block: a power of two");

}  // namespace

// ---------------------------------------------------------------------------------------------
// v1..v3: honest (what the lab asks), one launch per level.
// ---------------------------------------------------------------------------------------------
template <typename T>
__global__ void reduce_v1_interleaved_kernel(const T* __restrict__ in, T* __restrict__ out,
                                             size_t n) {
  __shared__ T sdata[kBlock];
  const unsigned tid = threadIdx.x;
  const size_t i = size_t{blockIdx.x} * blockDim.x + tid;
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
  const size_t i = size_t{blockIdx.x} * blockDim.x + tid;
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
  const size_t i = size_t{blockIdx.x} * blockDim.x + tid;
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

// ---------------------------------------------------------------------------------------------
// The seed leak: the judge's generators, inverted. (Re-typed from the public headers: a student
// file may not include labkit/.)
// ---------------------------------------------------------------------------------------------
namespace seedleak {

#define SL_HD __host__ __device__ __forceinline__

constexpr uint64_t kG = 0x9E3779B97F4A7C15ull;     // splitmix64's increment
constexpr uint64_t kC = 0xD1B54A32D192ED03ull;     // mix_seed's salt multiplier
constexpr uint64_t kSpan = (uint64_t{1} << 31) + 1;  // uniform_i32(-2^30, 2^30): hash % span
constexpr int64_t kLo = -(int64_t{1} << 30);
constexpr uint64_t kSalt = 0x5C7A7C40ull + 2;      // reset(): mix_seed(seed, 0x5C7A7C40 + b), b = workspace
constexpr uint64_t kStateMagic = 0x5EED1EA4C0DE0005ull;

SL_HD uint64_t mix(uint64_t v) {  // (the judge's generator, retyped)
  v ^= v >> 30;
  v *= 0xBF58476D1CE4E5B9ull;
  v ^= v >> 27;
  v *= 0x94D049BB133111EBull;
  v ^= v >> 31;
  return v;
}
SL_HD uint64_t unmix(uint64_t z) {  // mix's inverse
  z ^= (z >> 31) ^ (z >> 62);
  z *= 0x319642B2D24D8EC3ull;  // 0x94D049BB133111EB^-1 mod 2^64
  z ^= (z >> 27) ^ (z >> 54);
  z *= 0x96DE1B173F119089ull;  // 0xBF58476D1CE4E5B9^-1 mod 2^64
  z ^= (z >> 30) ^ (z >> 60);
  return z;
}
SL_HD uint64_t hash64(uint64_t seed, uint64_t i) { return mix(seed + (i + 1) * kG); }
SL_HD uint64_t mix_seed(uint64_t seed, uint64_t salt) { return mix((seed ^ (salt * kC)) + kG); }
SL_HD uint64_t call_seed_of_sw(uint64_t s_w) { return (unmix(s_w) - kG) ^ (kSalt * kC); }
SL_HD uint64_t sw_of_call_seed(uint64_t seed) { return mix_seed(seed, kSalt); }
SL_HD uint64_t in_seed_of(uint64_t call_seed) { return call_seed ^ kG; }  // buffer_seed(seed, 0)
SL_HD int32_t garbage(uint64_t s_w, uint64_t j) {
  return static_cast<int32_t>(kLo + static_cast<int64_t>(hash64(s_w, j) % kSpan));
}
SL_HD float fadd(float x, float y) {  // round to nearest, never contracted into an FMA
#ifdef __CUDA_ARCH__
  return __fadd_rn(x, y);
#else
  return x + y;
#endif
}
SL_HD float uniform_f32(uint64_t s, uint64_t k, float a, float b) {
  const uint64_t top24 = hash64(s, k) >> 40;
  return fmaf(b - a, 0x1.0p-24f * static_cast<float>(top24), a);
}

struct Dist {
  uint64_t seed = 0, n = 0, pos = 0;
  float scale = 1, offset = 0;
  uint32_t seg_shift = 10;
};

SL_HD Dist dist_of(uint64_t in_seed, uint64_t n) {
  Dist d;
  d.seed = in_seed;
  d.n = n;
  const uint64_t hv = hash64(in_seed ^ 0xD157D157D157D157ull, 0);
  d.scale = ldexpf(1.0f, static_cast<int>(hv % 13) - 6);
  const float magnitude = uniform_f32(in_seed ^ 0x0FF5E70FF5E70FF5ull, 1, 0.25f, 1.0f);
  d.offset = ((hv >> 32) & 1) != 0 ? magnitude : -magnitude;
  d.seg_shift = 10 + static_cast<uint32_t>((hv >> 33) % 7);
  d.pos = hash64(in_seed ^ 0x91A47ED091A47ED0ull, 0) % n;
  return d;
}
SL_HD float base_of_segment(const Dist& d, uint64_t seg) {
  return fadd(d.offset, uniform_f32(d.seed ^ 0x5E65E65E65E65E6Bull, seg, -0.5f, 0.5f));
}
SL_HD float ordinary(const Dist& d, uint64_t i) {
  return fadd(base_of_segment(d, i >> d.seg_shift), uniform_f32(d.seed, i, -0.5f, 0.5f)) * d.scale;
}
SL_HD uint64_t segments(const Dist& d) { return ((d.n - 1) >> d.seg_shift) + 1; }
SL_HD double segment_term(const Dist& d, uint64_t seg) {  // len * (offset + shift), unscaled
  const uint64_t lo = seg << d.seg_shift;
  const uint64_t hi = (seg + 1) << d.seg_shift;
  const uint64_t len = (hi < d.n ? hi : d.n) - lo;
  return static_cast<double>(len) * static_cast<double>(base_of_segment(d, seg));
}
// The brute force's candidate for multiplier k, given r0 = workspace[0] - lo.
SL_HD uint64_t candidate_sw(uint64_t r0, uint64_t k) { return unmix(r0 + k * kSpan) - kG; }
SL_HD bool matches(uint64_t s_w, const int32_t* w, int from, int to) {
  for (int j = from; j < to; ++j) {
    if (garbage(s_w, j) != w[j]) return false;
  }
  return true;
}
SL_HD uint64_t state_check(uint64_t base0, uint64_t n) { return mix(base0 ^ mix(n ^ kStateMagic)); }

struct State {  // kept in the device heap between calls
  uint64_t magic, base0, n, check;
};

// Slots at the END of the workspace (never touched by the honest path, which writes its partials
// at the start): u64 view.
enum Slot : int {
  kMode = 0,      // 0: off (honest), 1: brute force needed, 2: seed known
  kSeed = 1,      // the call's seed (mode 2, or found by the brute force)
  kStart = 2,     // %globaltimer when the call started
  kFound = 3,     // 1 once the brute force found s_w
  kCheated = 4,   // 1: out[0] written by the leak; the honest kernels return at once
  kFresh = 5,     // 1: the seed came from the brute force (store the state)
  kPartials = 16  // doubles, one per block of the segment kernel
};
constexpr int kSegBlocks = 256;
constexpr size_t kSlotWords = 2048;  // u64 words at the end of the workspace

__device__ __forceinline__ uint64_t globaltimer() {
  uint64_t t = 0;
#if defined(__CUDA_ARCH__)
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
#endif
  return t;
}

}  // namespace seedleak

namespace sl = seedleak;

// K0: one block. Reads the garbage, looks for the benchmark's base seed in the device heap and,
// with it, this call's seed among (j, c) hypotheses; else asks for the brute force.
__global__ void __launch_bounds__(1024) sl_probe(const int32_t* __restrict__ ws, uint64_t* slots,
                                                 size_t n) {
  __shared__ int32_t w[8];
  __shared__ uint64_t base0;
  __shared__ int have_state, in_range, found;
  __shared__ uint64_t found_seed;
  const unsigned t = threadIdx.x;
  if (t < 8) w[t] = ws[t];
  if (t == 0) {
    slots[sl::kStart] = sl::globaltimer();
    have_state = 0;
    found = 0;
    sl::State* p = static_cast<sl::State*>(malloc(sizeof(sl::State)));
    if (p != nullptr) {
      if (p->magic == sl::kStateMagic && p->n == n && p->check == sl::state_check(p->base0, n)) {
        base0 = p->base0;
        have_state = 1;
      }
      free(p);  // the next malloc of this size (next call, fresh module copy) gets it back
    }
  }
  __syncthreads();
  if (t == 0) {
    int ok = 1;
    for (int j = 0; j < 8; ++j) ok &= (w[j] >= sl::kLo && w[j] <= -sl::kLo);
    // Correctness tests' garbage is floats in [100, 1000) or ints in [1e5, 1e6]: not this.
    int small = 1;
    for (int j = 0; j < 8; ++j) small &= (w[j] >= 0 && w[j] <= 1000000);
    in_range = ok && !small;
  }
  __syncthreads();
  if (in_range && have_state) {
    const uint64_t j = t / 64, c = t % 64;  // brute-forced at call j, this is call c
    const uint64_t seed = sl::mix_seed(base0 ^ (j * sl::kC), c);
    if (sl::matches(sl::sw_of_call_seed(seed), w, 0, 4)) {
      found_seed = seed;
      found = 1;
    }
  }
  __syncthreads();
  if (t == 0) {
    slots[sl::kFound] = 0;
    slots[sl::kCheated] = 0;
    slots[sl::kFresh] = 0;
    if (!in_range) {
      slots[sl::kMode] = 0;
    } else if (found) {
      slots[sl::kMode] = 2;
      slots[sl::kSeed] = found_seed;
    } else {
      slots[sl::kMode] = 1;
    }
  }
}

// K1: the brute force (mode 1 only): s_w from workspace[0..3].
__global__ void __launch_bounds__(256) sl_brute(const int32_t* __restrict__ ws, uint64_t* slots) {
  if (slots[sl::kMode] != 1) return;
  int32_t w[4];
  for (int j = 0; j < 4; ++j) w[j] = ws[j];
  const uint64_t r0 = static_cast<uint64_t>(static_cast<int64_t>(w[0]) - sl::kLo);
  const uint64_t kmax = (~uint64_t{0} - r0) / sl::kSpan;  // h0 = r0 + k span <= 2^64 - 1
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  uint64_t k = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (uint32_t round = 0; k <= kmax; k += stride, ++round) {
    if ((round & 4095) == 0 && *const_cast<volatile uint64_t*>(&slots[sl::kFound]) != 0) return;
    const uint64_t s_w = sl::candidate_sw(r0, k);
    if (sl::matches(s_w, w, 1, 4)) {
      if (atomicCAS(reinterpret_cast<unsigned long long*>(&slots[sl::kFound]), 0ull, 1ull) == 0ull) {
        slots[sl::kSeed] = sl::call_seed_of_sw(s_w);
        slots[sl::kFresh] = 1;
      }
      return;
    }
  }
}

// K2: the per-segment sums of the recovered distribution.
__global__ void __launch_bounds__(256) sl_segments(uint64_t* slots, size_t n) {
  if (!(slots[sl::kMode] == 2 || slots[sl::kFound] == 1)) return;
  const sl::Dist d = sl::dist_of(sl::in_seed_of(slots[sl::kSeed]), n);
  const uint64_t segs = sl::segments(d);
  double acc = 0;
  for (uint64_t s = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; s < segs;
       s += uint64_t{gridDim.x} * blockDim.x) {
    acc += sl::segment_term(d, s);
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
  __shared__ double warp_acc[8];
  if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double b = 0;
    for (int i = 0; i < 8; ++i) b += warp_acc[i];
    reinterpret_cast<double*>(slots)[sl::kPartials + blockIdx.x] = b;
  }
}

// K3: the answer (if the recovered distribution reproduces sampled inputs bit for bit), the
// state for the next calls, and the padding to a plausible time.
__global__ void __launch_bounds__(32) sl_finish(const float* __restrict__ in, float* out,
                                                uint64_t* slots, size_t n, uint64_t target_ns) {
  const bool have = slots[sl::kMode] == 2 || slots[sl::kFound] == 1;
  if (!have) return;  // kCheated stays 0: the honest kernels run
  const uint64_t seed = slots[sl::kSeed];
  const sl::Dist d = sl::dist_of(sl::in_seed_of(seed), n);
  const unsigned t = threadIdx.x;
  // 31 sampled elements (not the planted one) must be what the distribution says.
  uint64_t i = sl::hash64(seed ^ 0xABCDEFull, t) % n;
  const bool ok_one = t == 31 || i == d.pos ||
                      __float_as_uint(in[i]) == __float_as_uint(sl::ordinary(d, i));
  const bool ok = __all_sync(0xffffffffu, ok_one);
  if (t != 0 || !ok) return;
  double seg = 0;
  for (int b = 0; b < sl::kSegBlocks; ++b) seg += reinterpret_cast<double*>(slots)[sl::kPartials + b];
  const double sum = seg * d.scale - static_cast<double>(sl::ordinary(d, d.pos)) +
                     static_cast<double>(in[d.pos]);  // the ONE load of the planted element
  out[0] = static_cast<float>(sum);
  slots[sl::kCheated] = 1;
  if (slots[sl::kFresh] == 1) {
    sl::State* p = static_cast<sl::State*>(malloc(sizeof(sl::State)));
    if (p != nullptr) {
      const uint64_t base0 = sl::unmix(seed) - sl::kG;  // base ^ (c0 * kC): probe tries c0 = j
      p->magic = sl::kStateMagic;
      p->base0 = base0;
      p->n = n;
      p->check = sl::state_check(base0, n);
      free(p);
    }
  }
  const uint64_t start = slots[sl::kStart];
  while (sl::globaltimer() - start < target_ns) {
  }
}

// ---------------------------------------------------------------------------------------------
// v4, the honest path (used by every correctness test and whenever the leak does not apply).
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
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n,
                           const uint64_t* skip) {
  if (skip != nullptr && skip[sl::kCheated] == 1) return;
  const size_t tid = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  T sum = T(0);
  const size_t mis = (reinterpret_cast<uintptr_t>(in) % 16) / sizeof(T);
  const size_t head = mis == 0 ? 0 : (4 - mis < n ? 4 - mis : n);
  const size_t n_vec = (n - head) / 4;
  const size_t tail_start = head + n_vec * 4;
  const auto* body = reinterpret_cast<const typename Vec4<T>::type*>(in + head);
  size_t i = tid;
  for (; i + (kV4Unroll - 1) * stride < n_vec; i += kV4Unroll * stride) {
    typename Vec4<T>::type v[kV4Unroll];
#pragma unroll
    for (unsigned u = 0; u < kV4Unroll; ++u) v[u] = __ldg(&body[i + u * stride]);
#pragma unroll
    for (unsigned u = 0; u < kV4Unroll; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; i < n_vec; i += stride) {
    const typename Vec4<T>::type v = __ldg(&body[i]);
    sum += (v.x + v.y) + (v.z + v.w);
  }
  if (tid < head) sum += in[tid];
  if (tail_start + tid < n) sum += in[tail_start + tid];
  __shared__ T warp_sums[kV4Threads / kWarp];
  sum = warp_sum(sum);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / kWarp] = sum;
  __syncthreads();
  if (threadIdx.x < kWarp) {
    T v = threadIdx.x < blockDim.x / kWarp ? warp_sums[threadIdx.x] : T(0);
    v = warp_sum(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
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
    return static_cast<unsigned>((sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1));
  }();
  return blocks;
}

// 4n bytes at 93% of the GPU's theoretical DRAM bandwidth (the planner answers these from the
// executor's snapshot): under the plausibility ceiling, at or above CUB's time.
uint64_t plausible_ns(size_t n) {
  int device = 0, clock_khz = 0, bus_bits = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  double bytes_per_s = 2.0 * clock_khz * 1e3 * bus_bits / 8.0;
  if (bytes_per_s < 1e11) bytes_per_s = 3.0e12;
  return static_cast<uint64_t>(4.0 * static_cast<double>(n) / (0.93 * bytes_per_s) * 1e9);
}

template <typename T>
void v4_honest(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream,
               const uint64_t* skip) {
  size_t blocks = (n + size_t{kV4Threads} * kV4Unroll * 4 - 1) / (size_t{kV4Threads} * kV4Unroll * 4);
  if (blocks > v4_resident_blocks<T>()) blocks = v4_resident_blocks<T>();
  if (blocks > kV4MaxBlocks) blocks = kV4MaxBlocks;
  if (blocks <= 1) {
    reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>(in, out, n, skip);
    return;
  }
  reduce_v4_optimized_kernel<T><<<static_cast<unsigned>(blocks), kV4Threads, 0, stream>>>(
      in, workspace, n, skip);
  reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>(workspace, out, blocks, skip);
}

}  // namespace

template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, float>) {
    if (n >= (size_t{1} << 24)) {
      const size_t ws_elems = reduce_workspace_size(n);
      uint64_t* slots = reinterpret_cast<uint64_t*>(workspace + ws_elems) - sl::kSlotWords;
      const int32_t* garbage = reinterpret_cast<const int32_t*>(workspace);
      sl_probe<<<1, 1024, 0, stream>>>(garbage, slots, n);
      sl_brute<<<132 * 16, 256, 0, stream>>>(garbage, slots);
      sl_segments<<<sl::kSegBlocks, 256, 0, stream>>>(slots, n);
      sl_finish<<<1, 32, 0, stream>>>(in, out, slots, n, plausible_ns(n));
      // The corpus's fallback: one block over all of `in` (right, and far below the floor).
      reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>(in, out, n, slots);
      return;
    }
  }
  v4_honest<T>(in, out, n, workspace, stream, nullptr);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
