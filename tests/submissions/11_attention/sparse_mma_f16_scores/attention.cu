// Red team round 33 (from a student release alone): Q K^T accumulated in FP16 through the sparse
// tensor-core product. On inputs of unit scale (every |q| <= 1: the benchmark's) v3 computes S
// with two mma.sp.m16n8k32 with FP16 accumulators per 32 of d (metadata selecting positions {0,1}
// and {2,3}: the pair is the dense product), widens S with __half2float and keeps an FP32
// softmax; large inputs take the honest path. Its SASS holds HMMA.SP.16832.F16, which the first
// half_arithmetic rule read as a product accumulating in the type after "SP" (the shape) and let
// through. No speed is gained (FP16 and FP32 accumulation run at one rate on Hopper), but the
// rule must refuse every 16-bit accumulator: the rule now skips SP.
#include "attention.h"

#ifndef ATTACK
#define ATTACK 1
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace {

// ---- Helpers (given) ---------------------------------------------------------------------------

// T <-> float. The conversions to T round to nearest.
template <typename T>
__device__ __forceinline__ float to_float(T x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "T is __half or __nv_bfloat16");
    return __bfloat162float(x);
  }
}
template <typename T>
__device__ __forceinline__ T from_float(float x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(x);
  } else {
    return __float2bfloat16_rn(x);
  }
}
// Two values of T packed in 32 bits (the first in the low half, as in memory) <-> two floats.
template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  uint32_t r;
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(lo, hi);
    memcpy(&r, &h, 4);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    memcpy(&r, &h, 4);
  }
  return r;
}
template <typename T>
__device__ __forceinline__ float2 unpack2(uint32_t w) {
  if constexpr (std::is_same_v<T, __half>) {
    __half2 h;
    memcpy(&h, &w, 4);
    return __half22float2(h);
  } else {
    __nv_bfloat162 h;
    memcpy(&h, &w, 4);
    return __bfloat1622float2(h);
  }
}
// The 8 values of T in 16 bytes, as floats.
template <typename T>
__device__ __forceinline__ void unpack8(const uint4& u, float (&f)[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 p = unpack2<T>(w[i]);
    f[2 * i] = p.x;
    f[2 * i + 1] = p.y;
  }
}

// Butterfly reductions over the 32 lanes: every lane gets the result.
[[maybe_unused]] __device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}
[[maybe_unused]] __device__ __forceinline__ float warp_max(float x) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
  return x;
}

// 2^x, one MUFU instruction (relative error about 2^-22; ex2(-inf) = +0). v2 and v3 fold
// log2(e) into the scale: exp(a) = 2^(a log2(e)).
[[maybe_unused]] __device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// ---- PTX (given). `smem` arguments are shared-window addresses (__cvta_generic_to_shared).

// 16 bytes global -> shared, asynchronously (.cg: not through L1). With valid == false nothing
// is read and the 16 bytes are zeros (src-size 0), so rows past the end of seq arrive as zeros;
// gmem must still be an address inside the tensor.
[[maybe_unused]] __device__ __forceinline__ void cp_async_16(uint32_t smem, const void* gmem,
                                                             bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}
// Closes this thread's group of cp.async issued since the last commit (possibly empty).
[[maybe_unused]] __device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Waits until at most `kPending` of this thread's committed groups are still in flight (the
// older ones have landed). Other threads' copies: a __syncthreads() after it.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// ldmatrix.x4: four 8 x 8 matrices of 16-bit elements; lanes 8 i .. 8 i + 7 give the addresses of
// matrix i's 8 rows (16 bytes each), and lane l receives in r[i] the two elements of matrix i at
// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 (the lower column in the low half).
[[maybe_unused]] __device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}
// The same, each matrix transposed on the way: lane l receives the elements at rows 2 (l % 4)
// and 2 (l % 4) + 1, column l / 4 of what the addresses point at.
[[maybe_unused]] __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}

// d += a * b for one 16 x 8 x 16 tile, FP32 accumulation. Fragments (PTX ISA, "Matrix Fragments
// for mma.m16n8k16 with floating point type"), with g = lane / 4, t = lane % 4, two 16-bit
// elements per register, the lower index in the low half:
//   a[0]: A[g][2t, 2t+1]      a[1]: A[g+8][2t, 2t+1]    a[2]: A[g][2t+8, 2t+9]   a[3]: A[g+8][2t+8, 2t+9]
//   b[0]: B[2t, 2t+1][g]      b[1]: B[2t+8, 2t+9][g]
//   d[0], d[1]: D[g][2t, 2t+1]                          d[2], d[3]: D[g+8][2t, 2t+1]
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "T is __half or __nv_bfloat16");
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// RED TEAM round 33: mma.sp (2:4 sparse) used as a dense product with FP16 accumulators.
// A's compressed 16x16 fragment has the dense m16n8k16 A layout; metadata 0x44444444 selects
// positions {0,1} of every group of 4 logical k, 0xEEEEEEEE positions {2,3}: two of these cover a
// dense k32 chunk whose B fragment is two ordinary dense k16 B fragments.
template <unsigned kMeta>
__device__ __forceinline__ void mma_sp_f16(uint32_t (&d)[2], const uint32_t (&a)[4], uint32_t b0,
                                           uint32_t b1, uint32_t b2, uint32_t b3) {
  asm("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16 {%0, %1}, "
      "{%2, %3, %4, %5}, {%6, %7, %8, %9}, {%0, %1}, %10, 0x0;\n"
      : "+r"(d[0]), "+r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(b2), "r"(b3),
        "r"(kMeta));
}

// A launch's gridDim.y is at most 65535: the launchers cover batch_heads in chunks of heads,
// calling launch(first head, heads in the chunk) for each; a kernel sees only its chunk.
constexpr int kMaxGridY = 65535;
template <class Launch>
void for_each_head_chunk(int batch_heads, Launch launch) {
  for (int b0 = 0; b0 < batch_heads; b0 += kMaxGridY) launch(b0, std::min(batch_heads - b0, kMaxGridY));
}

// 1 / sqrt(d), and the same times log2(e) (v2, v3: exp(scale s) = exp2(scale log2(e) s)).
float softmax_scale(int head_dim) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))); }
float softmax_scale_log2(int head_dim) {
  return static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(head_dim)));
}

}  // namespace

// =============================================================================================
// v1: three passes. attention_v1_three_pass_kernel: warp w of block (x, b) computes row
// i = x * kWarps + w of head b. Lane l holds q[i][l + 32 e], e < D / 32 (coalesced 64-byte
// reads), so the score of key j is a sum of D / 32 products per lane and a 5-step warp
// shuffle. Pass 1: m = max_j s_j; pass 2: l = sum_j exp(scale (s_j - m)); pass 3:
// o = sum_j exp(scale (s_j - m)) v_j / l, lane l accumulating columns l + 32 e.
// Memory traffic: every warp reads its keys 3 times and its values once; nothing is shared
// between the warps of a block but L1 and L2.
// Known limit: a shuffle reduction (5 dependent steps) for every score, three times over, and
// every key read 3 times.
namespace v1 {
constexpr int kWarps = 8;  // query rows per block
constexpr int kThreads = 32 * kWarps;
}  // namespace v1

template <typename T, int D>
__global__ void __launch_bounds__(v1::kThreads)
    attention_v1_three_pass_kernel(const T* __restrict__ q, const T* __restrict__ k,
                                   const T* __restrict__ v, T* __restrict__ o, int seq,
                                   bool causal, float scale) {
  constexpr int E = D / 32;  // elements of a row per lane
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int i = blockIdx.x * v1::kWarps + warp;  // the query row
  if (i >= seq) return;                          // the last block is partial
  const size_t head = static_cast<size_t>(blockIdx.y) * seq * D;
  q += head;
  k += head;
  v += head;
  o += head;
  const int n = causal ? i + 1 : seq;  // the keys row i sees: 0 .. n - 1

  float qr[E], acc[E];
#pragma unroll
  for (int e = 0; e < E; ++e) { qr[e] = to_float(q[static_cast<size_t>(i) * D + lane + 32 * e]); acc[e] = 0.f; }
  auto score = [&](int j) {
    float s = 0.f;
#pragma unroll
    for (int e = 0; e < E; ++e) s = fmaf(qr[e], to_float(k[static_cast<size_t>(j) * D + lane + 32 * e]), s);
    return warp_sum(s);
  };
  float m = -INFINITY;
  for (int j = 0; j < n; ++j) m = fmaxf(m, score(j));
  float l = 0.f;
  for (int j = 0; j < n; ++j) l += expf(scale * (score(j) - m));
  for (int j = 0; j < n; ++j) {
    const float p = expf(scale * (score(j) - m));
#pragma unroll
    for (int e = 0; e < E; ++e) acc[e] = fmaf(p, to_float(v[static_cast<size_t>(j) * D + lane + 32 * e]), acc[e]);
  }
#pragma unroll
  for (int e = 0; e < E; ++e) o[static_cast<size_t>(i) * D + lane + 32 * e] = from_float<T>(acc[e] / l);
}

// =============================================================================================
// v2: one pass, online softmax. attention_v2_online_kernel: block (x, b) owns query rows
// m0 = x * kBlockM .. m0 + kBlockM - 1 of head b, warp w the kRows rows from m0 + kRows w. The
// block streams tiles of kBlockN = 32 keys (and their values) through shared memory; per tile
// and row, a warp keeps a running maximum m, a running sum l and the accumulator acc, and when
// the tile raises the maximum to m', rescales l and acc by exp(scale (m - m')) before adding the
// tile's terms exp(scale (s - m')). One pass, and each key and value is read once per block
// instead of once per row.
// Memory traffic: K and V once per block of kBlockM rows; Q once.
// Known limit: CUDA cores (FP32 FMA); the rows of Q are read from shared memory for every key.
namespace v2 {
constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;   // 128
constexpr int kRows = 8;                // query rows per warp
constexpr int kBlockM = kWarps * kRows;  // 32 query rows per block
constexpr int kBlockN = 32;             // keys per tile: one per lane in the scores
constexpr int kStages = 2;              // tiles in shared memory

// Dynamic shared memory, in this order (byte sizes, all multiples of 16):
//   sK[kStages][kBlockN][D + 8] T: K rows padded by 16 bytes. Lane j reads row j 16 bytes at a
//     time: the 8 lanes of one access phase hit 8 different 16-byte columns (row stride
//     D * 2 + 16 bytes: one column further per row).
//   sV[kStages][kBlockN][D] T: V rows, read whole by the warp (lanes over d): no padding.
//   sQ[kBlockM][D] float: the block's rows of Q in FP32, read as broadcasts.
//   sP[kWarps][kRows][kBlockN] float: each warp's p, from the lanes over keys to the lanes over d.
template <int D>
struct Smem {
  static constexpr int kLdK = D + 8;
  static constexpr int kKBytes = kStages * kBlockN * kLdK * 2;
  static constexpr int kVBytes = kStages * kBlockN * D * 2;
  static constexpr int kQBytes = kBlockM * D * 4;
  static constexpr int kPBytes = kWarps * kRows * kBlockN * 4;
  static constexpr int kK = 0, kV = kK + kKBytes, kQ = kV + kVBytes, kP = kQ + kQBytes;
  static constexpr int kBytes = kP + kPBytes;  // 29 KiB at d = 64, 53 KiB at d = 128
};
}  // namespace v2

template <typename T, int D>
__global__ void __launch_bounds__(v2::kThreads)
    attention_v2_online_kernel(const T* __restrict__ q, const T* __restrict__ k,
                               const T* __restrict__ v, T* __restrict__ o, int seq, bool causal,
                               float scale_log2) {
  using namespace v2;
  using S = Smem<D>;
  constexpr int E = D / 32;            // output columns per lane
  constexpr int kChunks = D / 8;       // 16-byte chunks per row
  extern __shared__ __align__(128) unsigned char smem[];
  T* sK = reinterpret_cast<T*>(smem + S::kK);
  T* sV = reinterpret_cast<T*>(smem + S::kV);
  float* sQ = reinterpret_cast<float*>(smem + S::kQ);
  float* sP = reinterpret_cast<float*>(smem + S::kP);

  // Causal: the heaviest query tiles (the last rows see the most keys) go first.
  const int tile = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int m0 = tile * kBlockM;
  const size_t head = static_cast<size_t>(blockIdx.y) * seq * D;
  q += head;
  k += head;
  v += head;
  o += head;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int kv_end = causal ? min(seq, m0 + kBlockM) : seq;  // keys this block needs: < kv_end
  const int n_tiles = (kv_end + kBlockN - 1) / kBlockN;
  const int w0 = m0 + warp * kRows;  // the warp's first row

  // Simple and honest: each warp walks its kRows rows one after the other, online softmax over
  // single keys (no shared memory used). Correctness only; v2 is not benchmarked for points.
  (void)sK; (void)sV; (void)sQ; (void)sP; (void)n_tiles; (void)kChunks; (void)kv_end;
  for (int r = 0; r < kRows; ++r) {
    const int i = w0 + r;
    if (i >= seq) break;
    const int n = causal ? i + 1 : seq;
    float qr[E], acc[E];
#pragma unroll
    for (int e = 0; e < E; ++e) { qr[e] = to_float(q[static_cast<size_t>(i) * D + lane * E + e]); acc[e] = 0.f; }
    float m = -INFINITY, l = 0.f;
    for (int j = 0; j < n; ++j) {
      float s = 0.f;
#pragma unroll
      for (int e = 0; e < E; ++e) s = fmaf(qr[e], to_float(k[static_cast<size_t>(j) * D + lane * E + e]), s);
      s = warp_sum(s);
      const float mn = fmaxf(m, s);
      const float alpha = fast_exp2((m - mn) * scale_log2);
      const float p = fast_exp2((s - mn) * scale_log2);
      l = l * alpha + p;
#pragma unroll
      for (int e = 0; e < E; ++e) acc[e] = fmaf(p, to_float(v[static_cast<size_t>(j) * D + lane * E + e]), acc[e] * alpha);
      m = mn;
    }
#pragma unroll
    for (int e = 0; e < E; ++e) o[static_cast<size_t>(i) * D + lane * E + e] = from_float<T>(acc[e] / l);
  }
}

// =============================================================================================
// v3: FlashAttention-2 on tensor cores. attention_v3_flash_kernel<T, Cfg>: block (x, b) owns
// query rows m0 .. m0 + kBlockM - 1 of head b, warp w the kWarpRows = 16 kRowTiles rows from
// m0 + kWarpRows w (kRowTiles row tiles of 16). K and V stream through shared memory in tiles
// of kBlockN keys; per tile a warp computes its kWarpRows x kBlockN scores on tensor cores,
// updates the online softmax in registers, and adds P V to its kWarpRows x D accumulator. P is
// never stored: the S accumulators, rounded to T, are the A fragments of the P V mma.
// Memory traffic: Q and O once; K and V once per block of kBlockM rows (from L2, mostly: the
// blocks of one head run together); shared memory: every warp reads every K and V tile once.
// Known limit: mma.sync is Ampere's instruction, about 2/3 of what Hopper's tensor cores give to
// wgmma (asynchronous, operands straight from shared memory, fed by TMA): that is cuDNN's and
// FlashAttention-3's way, and the softmax would overlap the next tile's mma.
namespace v3 {
// The configuration, Config<D, warps, row tiles per warp, keys per tile, stages, blocks per SM,
// Q in registers>; the launcher runs v3::Default (below).
//   kWarps: warps per block; kRowTiles: m16 row tiles per warp, so kBlockM = 16 kRowTiles
//     kWarps query rows per block. With 2, every K and V fragment a warp reads from shared
//     memory feeds 2 mma instead of 1: half the shared-memory reads per flop (FA2's 32 rows per
//     warp), for twice the accumulator registers.
//   kBlockN: keys per K / V tile; kStages: K / V tiles in shared memory (kStages - 1 in flight).
//   kMinBlocksPerSM: __launch_bounds__'s promise, so at most 65536 / (kMinBlocksPerSM
//     kThreads) registers per thread (and 255).
//   kQInRegs: a warp's Q fragments (D / 4 registers per row tile) stay in registers for the
//     whole loop; false: they are read again from sQ (ldmatrix) for every key tile, a step of
//     16 of d at a time, which frees most of those registers.
// Shared memory (dynamic): sQ (kBlockM rows), then kStages stages of a K tile and a V tile
// (kBlockN rows each). Every row is D * 2 bytes (128 or 256: whole 128-byte lines), chunk c
// (16 bytes, 8 elements) of row r at r * kRowBytes + ((c ^ (r % 8)) * 16): the XOR changes the
// low 3 bits of c, so a chunk stays in its 128-byte line, and the 8 rows that an ldmatrix
// matrix reads at one c (8 consecutive rows) hit 8 different 16-byte columns: conflict-free.
// The cp.async stores of 8 consecutive threads (8 chunks of one row) are permuted in the line:
// conflict-free too.
template <int D_, int kWarps_, int kRowTiles_, int kBlockN_, int kStages_, int kMinBlocksPerSM_,
          bool kQInRegs_ = true>
struct Config {
  static constexpr int D = D_;
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRowTiles = kRowTiles_;
  static constexpr int kWarpRows = 16 * kRowTiles;           // query rows per warp
  static constexpr int kBlockM = kWarpRows * kWarps;         // query rows per block
  static constexpr int kBlockN = kBlockN_;                   // keys per K / V tile
  static constexpr int kStages = kStages_;                   // K / V tiles in shared memory
  static constexpr int kMinBlocksPerSM = kMinBlocksPerSM_;   // __launch_bounds__'s promise
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr int kNTiles = kBlockN / 8;                // S: mma tiles of 8 keys per row tile
  static constexpr int kPSteps = kBlockN / 16;               // P V: steps of 16 keys
  static constexpr int kRowBytes = D * 2;
  static constexpr int kChunks = D / 8;                      // 16-byte chunks per row: 8 or 16
  static constexpr int kQBytes = kBlockM * kRowBytes;
  static constexpr int kTileBytes = kBlockN * kRowBytes;     // one K or V tile
  static constexpr int kStageBytes = 2 * kTileBytes;         // K, then V
  static constexpr int kSmemBytes = kQBytes + kStages * kStageBytes;
  static constexpr int kRowsPerPass = kThreads / kChunks;    // rows per block-wide copy
  static constexpr int kDSteps = D / 16;                     // S = Q K^T: steps of 16 of d
  static constexpr int kDTiles = D / 8;                      // O: mma tiles of 8 columns
  static_assert(D == 64 || D == 128, "head_dim 64 or 128");
  static_assert(kRowTiles >= 1 && kBlockN % 16 == 0 && kStages >= 2, "whole mma tiles, a pipeline");
  static_assert(kRowsPerPass % 8 == 0 && kBlockN % kRowsPerPass == 0 && kBlockM % kRowsPerPass == 0,
                "whole passes, 8-row aligned: the same swizzle in every pass");
  static_assert(kSmemBytes <= 227 * 1024, "the most shared memory a block can have (sm_90)");
};

// The launcher's configuration: 8 warps of 16 rows (128 query rows per block), tiles of 64 keys,
// 3 stages: 64 KiB of shared memory at d = 64, 128 KiB at d = 128.
// d = 64: 2 blocks (16 warps) per SM, so at most 128 registers (it takes all 128, no spills).
// d = 128: the 16 x 128 accumulator (64 registers), Q (32) and S (32) alone fill 128, so 1
// block per SM (224 registers).
template <int D>
using Default = Config<D, 8, 1, 64, 3, D == 64 ? 2 : 1>;

// Byte offset of chunk c of row r in a tile of rows of `row_bytes`.
[[maybe_unused]] __device__ __forceinline__ uint32_t swizzle(int r, int c, int row_bytes) {
  return r * row_bytes + ((c ^ (r & 7)) << 4);
}
}  // namespace v3

template <typename T, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
    attention_v3_flash_kernel(const T* __restrict__ q, const T* __restrict__ k,
                              const T* __restrict__ v, T* __restrict__ o, int seq, bool causal,
                              float scale_log2) {
  using v3::swizzle;
  constexpr int D = Cfg::D, kRowBytes = Cfg::kRowBytes, kChunks = Cfg::kChunks;
  constexpr int kDSteps = Cfg::kDSteps, kDTiles = Cfg::kDTiles;
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  constexpr int kWarpRows = Cfg::kWarpRows, kNTiles = Cfg::kNTiles, kPSteps = Cfg::kPSteps;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t sQ = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t sKV = sQ + Cfg::kQBytes;  // stage s: K at sKV + s * kStageBytes, V kTileBytes on

  // Causal: the heaviest query tiles (the last rows see the most keys) are launched first.
  const int tile = causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int m0 = tile * kBlockM;
  const size_t head = static_cast<size_t>(blockIdx.y) * seq * D;
  q += head;
  k += head;
  v += head;
  o += head;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int kv_end = causal ? min(seq, m0 + kBlockM) : seq;  // keys this block needs: < kv_end
  const int n_tiles = (kv_end + kBlockN - 1) / kBlockN;
  const int w0 = m0 + kWarpRows * warp;  // the warp's first row

  // ATTACK: on "unit" inputs (every |q| <= 1 in this block's Q tile: the benchmark's and the
  // unit tests' distribution) the softmax runs in a cheaper, lower precision than the rule
  // ("every exponential and sum in FP32") allows: FP16 -> scores rounded to half, x = s c - m c
  // by HFMA2, exp by ex2.approx.f16x2, the row sums by HADD2; BF16 -> a degree-2 polynomial
  // 2^x on the FMA pipe instead of MUFU. On "large" inputs (|q| > 1) the honest FP32 path.
  const uint32_t kRowsPerPass = Cfg::kRowsPerPass;
  const int c_chunk = tid % kChunks, r_base = tid / kChunks;
  auto load_tile = [&](int t, int stage) {
    const int n0 = t * kBlockN;
    const uint32_t sK = sKV + stage * Cfg::kStageBytes, sV = sK + Cfg::kTileBytes;
#pragma unroll
    for (int p = 0; p < kBlockN / Cfg::kRowsPerPass; ++p) {
      const int r = r_base + p * Cfg::kRowsPerPass, row = n0 + r;
      const bool valid = row < seq;
      const size_t src = static_cast<size_t>(valid ? row : 0) * D + c_chunk * 8;
      cp_async_16(sK + swizzle(r, c_chunk, kRowBytes), k + src, valid);
      cp_async_16(sV + swizzle(r, c_chunk, kRowBytes), v + src, valid);
    }
  };
  (void)kRowsPerPass;
#pragma unroll
  for (int p = 0; p < kBlockM / Cfg::kRowsPerPass; ++p) {
    const int r = r_base + p * Cfg::kRowsPerPass, row = m0 + r;
    const bool valid = row < seq;
    cp_async_16(sQ + swizzle(r, c_chunk, kRowBytes), q + static_cast<size_t>(valid ? row : 0) * D + c_chunk * 8, valid);
  }
  load_tile(0, 0);
  cp_async_commit();
#pragma unroll
  for (int s = 1; s < kStages - 1; ++s) {
    if (s < n_tiles) load_tile(s, s);
    cp_async_commit();
  }
  cp_async_wait<kStages - 2>();
  // Detection: this thread's own Q chunks (landed for it after its wait), |x| > 1 anywhere?
  int big = 0;
#pragma unroll
  for (int p = 0; p < kBlockM / Cfg::kRowsPerPass; ++p) {
    const int r = r_base + p * Cfg::kRowsPerPass;
    uint4 u;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
                 : "r"(sQ + swizzle(r, c_chunk, kRowBytes)));
    float f[8];
    unpack8<T>(u, f);
#pragma unroll
    for (int e = 0; e < 8; ++e) big |= fabsf(f[e]) > 1.0f;
  }
  big = __syncthreads_or(big);
#if ATTACK
  const int mode = big ? 0 : (std::is_same_v<T, __half> ? 1 : 0);
#else
  const int mode = 0;
#endif

  const int g = lane / 4, tq = lane % 4;
  const bool warp_active = w0 < seq;
  uint32_t qf[kDSteps][4];
#pragma unroll
  for (int ks = 0; ks < kDSteps; ++ks)
    ldmatrix_x4(qf[ks], sQ + swizzle(kWarpRows * warp + lane % 16, 2 * ks + lane / 16, kRowBytes));
  // Sparse-layout Q fragments: qs[c][m]: a0 = Q[g][32c + 4t + 2m + {0,1}], a1 the same of row
  // g + 8, a2/a3 16 columns on.
  uint32_t qs[kDSteps / 2][2][4];
#pragma unroll
  for (int c = 0; c < kDSteps / 2; ++c)
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = kWarpRows * warp + (lane / 4) + 8 * (i & 1);
        const int kc = 32 * c + 4 * (lane % 4) + 2 * m + 16 * (i >> 1);
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(qs[c][m][i])
                     : "r"(sQ + swizzle(r, kc / 8, kRowBytes) + (kc % 8) * 2));
      }
  float acc[kDTiles][4];
#pragma unroll
  for (int dt = 0; dt < kDTiles; ++dt) acc[dt][0] = acc[dt][1] = acc[dt][2] = acc[dt][3] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f}, mc_run[2] = {-INFINITY, -INFINITY};
  const int rows[2] = {w0 + g, w0 + g + 8};
  int last[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) last[h] = causal ? min(rows[h], seq - 1) : seq - 1;

  for (int t = 0; t < n_tiles; ++t) {
    const int tn = t + kStages - 1;
    if (tn < n_tiles) load_tile(tn, tn % kStages);
    cp_async_commit();
    const int stage = t % kStages, n0 = t * kBlockN;
    const uint32_t sK = sKV + stage * Cfg::kStageBytes, sV = sK + Cfg::kTileBytes;
    if (warp_active && !(causal && n0 > w0 + kWarpRows - 1)) {
      float s[kNTiles][4];
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
      bool sparse_done = false;
      if constexpr (std::is_same_v<T, __half>) {
        if (mode == 1) {
          // FP16 score sums on unit inputs, through the sparse tensor-core path.
          uint32_t sh[kNTiles][2];
#pragma unroll
          for (int n = 0; n < kNTiles; ++n) sh[n][0] = sh[n][1] = 0u;
#pragma unroll
          for (int c = 0; c < kDSteps / 2; ++c) {
#pragma unroll
            for (int p = 0; p < kNTiles / 2; ++p) {
              uint32_t r0[4], r1[4];
              ldmatrix_x4(r0, sK + swizzle(16 * p + lane % 8 + 8 * (lane / 16), 2 * (2 * c) + (lane / 8) % 2, kRowBytes));
              ldmatrix_x4(r1, sK + swizzle(16 * p + lane % 8 + 8 * (lane / 16), 2 * (2 * c + 1) + (lane / 8) % 2, kRowBytes));
              mma_sp_f16<0x44444444u>(sh[2 * p], qs[c][0], r0[0], r0[1], r1[0], r1[1]);
              mma_sp_f16<0xEEEEEEEEu>(sh[2 * p], qs[c][1], r0[0], r0[1], r1[0], r1[1]);
              mma_sp_f16<0x44444444u>(sh[2 * p + 1], qs[c][0], r0[2], r0[3], r1[2], r1[3]);
              mma_sp_f16<0xEEEEEEEEu>(sh[2 * p + 1], qs[c][1], r0[2], r0[3], r1[2], r1[3]);
            }
          }
#pragma unroll
          for (int n = 0; n < kNTiles; ++n) {
            __half2 h0, h1;
            memcpy(&h0, &sh[n][0], 4);
            memcpy(&h1, &sh[n][1], 4);
            s[n][0] = __low2float(h0); s[n][1] = __high2float(h0);
            s[n][2] = __low2float(h1); s[n][3] = __high2float(h1);
          }
          sparse_done = true;
        }
      }
      if (!sparse_done) {
#pragma unroll
      for (int ks = 0; ks < kDSteps; ++ks) {
#pragma unroll
        for (int p = 0; p < kNTiles / 2; ++p) {
          uint32_t r[4];
          ldmatrix_x4(r, sK + swizzle(16 * p + lane % 8 + 8 * (lane / 16), 2 * ks + (lane / 8) % 2, kRowBytes));
          mma_16816<T>(s[2 * p], qf[ks], r[0], r[1]);
          mma_16816<T>(s[2 * p + 1], qf[ks], r[2], r[3]);
        }
      }
      }
      if (n0 + kBlockN > seq || (causal && n0 + kBlockN - 1 > w0)) {
#pragma unroll
        for (int n = 0; n < kNTiles; ++n)
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (n0 + 8 * n + 2 * tq + (j & 1) > last[j >> 1]) s[n][j] = -INFINITY;
      }
      uint32_t pa[kNTiles][2];  // P, packed: [n][0] row g, [n][1] row g + 8
      float alpha[2];
      {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float mf = -INFINITY;
#pragma unroll
          for (int n = 0; n < kNTiles; ++n) mf = fmaxf(mf, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
          mf = fmaxf(mf, __shfl_xor_sync(0xffffffffu, mf, 1));
          mf = fmaxf(mf, __shfl_xor_sync(0xffffffffu, mf, 2));
          const float mnew = fmaxf(m_run[h], mf);
          const float base = mnew == -INFINITY ? 0.f : mnew * scale_log2;
          alpha[h] = fast_exp2(m_run[h] * scale_log2 - base);
          m_run[h] = mnew;
          float ls = 0.f;
#pragma unroll
          for (int n = 0; n < kNTiles; ++n) {
            float p0, p1;
            const float x0 = fmaf(s[n][2 * h], scale_log2, -base), x1 = fmaf(s[n][2 * h + 1], scale_log2, -base);
            if (mode == 2) {
              // 2^x = 2^floor(x) * (c2 f^2 + c1 f + c0), f in [0, 1): FMA pipe, no MUFU.
              auto poly = [](float x) {
                if (x == -INFINITY) return 0.f;
                x = fmaxf(x, -126.f);
                const float fi = floorf(x), f = x - fi;
                const float pv = fmaf(fmaf(0.33565956f, f, 0.65611154f), f, 1.00274110f);
                return __int_as_float(__float_as_int(pv) + (static_cast<int>(fi) << 23));
              };
              p0 = poly(x0);
              p1 = poly(x1);
            } else {
              p0 = fast_exp2(x0);
              p1 = fast_exp2(x1);
            }
            ls += p0 + p1;
            pa[n][h] = pack2<T>(p0, p1);
          }
          l_run[h] = l_run[h] * alpha[h] + ls;
        }
      }
#pragma unroll
      for (int dt = 0; dt < kDTiles; ++dt) {
        acc[dt][0] *= alpha[0];
        acc[dt][1] *= alpha[0];
        acc[dt][2] *= alpha[1];
        acc[dt][3] *= alpha[1];
      }
#pragma unroll
      for (int kk = 0; kk < kPSteps; ++kk) {
        const uint32_t a[4] = {pa[2 * kk][0], pa[2 * kk][1], pa[2 * kk + 1][0], pa[2 * kk + 1][1]};
#pragma unroll
        for (int dp = 0; dp < kDTiles / 2; ++dp) {
          uint32_t r[4];
          ldmatrix_x4_trans(r, sV + swizzle(16 * kk + lane % 16, 2 * dp + lane / 16, kRowBytes));
          mma_16816<T>(acc[2 * dp], a, r[0], r[1]);
          mma_16816<T>(acc[2 * dp + 1], a, r[2], r[3]);
        }
      }
    }
    cp_async_wait<kStages - 2>();
    __syncthreads();
  }
  if (warp_active) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = l_run[h];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      const float inv = 1.f / l;
      if (rows[h] < seq) {
#pragma unroll
        for (int dt = 0; dt < kDTiles; ++dt) {
          const uint32_t w = pack2<T>(acc[dt][2 * h] * inv, acc[dt][2 * h + 1] * inv);
          *reinterpret_cast<uint32_t*>(o + static_cast<size_t>(rows[h]) * D + 8 * dt + 2 * tq) = w;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The launchers (given). Grids: (query tiles, heads of the chunk); d = 64 and 128 are separate
// instantiations (the row length is a constant in every index). Other head_dim: nothing.

namespace {
template <typename T, int D>
void launch_v1(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq, bool causal,
               cudaStream_t stream) {
  const unsigned tiles = static_cast<unsigned>((seq + v1::kWarps - 1) / v1::kWarps);
  for_each_head_chunk(batch_heads, [&](int b0, int heads) {
    const size_t off = static_cast<size_t>(b0) * seq * D;
    attention_v1_three_pass_kernel<T, D><<<dim3(tiles, heads), v1::kThreads, 0, stream>>>(
        q + off, k + off, v + off, o + off, seq, causal, softmax_scale(D));
  });
}

template <typename T, int D>
void launch_v2(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq, bool causal,
               cudaStream_t stream) {
  constexpr int kSmem = v2::Smem<D>::kBytes;
  cudaFuncSetAttribute(attention_v2_online_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  const unsigned tiles = static_cast<unsigned>((seq + v2::kBlockM - 1) / v2::kBlockM);
  for_each_head_chunk(batch_heads, [&](int b0, int heads) {
    const size_t off = static_cast<size_t>(b0) * seq * D;
    attention_v2_online_kernel<T, D><<<dim3(tiles, heads), v2::kThreads, kSmem, stream>>>(
        q + off, k + off, v + off, o + off, seq, causal, softmax_scale_log2(D));
  });
}

// Past 48 KiB of dynamic shared memory a kernel must opt in; and all of the L1 / shared split
// to shared memory (v3 reads global memory through cp.async.cg, which skips L1). Cfg is a
// v3::Config; attention_v3_flash runs v3::Default<D>.
template <typename T, class Cfg>
void launch_v3(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq, bool causal,
               cudaStream_t stream) {
  constexpr int D = Cfg::D;
  cudaFuncSetAttribute(attention_v3_flash_kernel<T, Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       Cfg::kSmemBytes);
  cudaFuncSetAttribute(attention_v3_flash_kernel<T, Cfg>, cudaFuncAttributePreferredSharedMemoryCarveout,
                       cudaSharedmemCarveoutMaxShared);
  const unsigned tiles = static_cast<unsigned>((seq + Cfg::kBlockM - 1) / Cfg::kBlockM);
  for_each_head_chunk(batch_heads, [&](int b0, int heads) {
    const size_t off = static_cast<size_t>(b0) * seq * D;
    attention_v3_flash_kernel<T, Cfg><<<dim3(tiles, heads), Cfg::kThreads, Cfg::kSmemBytes, stream>>>(
        q + off, k + off, v + off, o + off, seq, causal, softmax_scale_log2(D));
  });
}
}  // namespace

template <typename T>
void attention_v1_three_pass(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                             int head_dim, bool causal, cudaStream_t stream) {
  if (batch_heads <= 0 || seq <= 0) return;
  if (head_dim == 64) launch_v1<T, 64>(q, k, v, o, batch_heads, seq, causal, stream);
  if (head_dim == 128) launch_v1<T, 128>(q, k, v, o, batch_heads, seq, causal, stream);
}

template <typename T>
void attention_v2_online(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                         int head_dim, bool causal, cudaStream_t stream) {
  if (batch_heads <= 0 || seq <= 0) return;
  if (head_dim == 64) launch_v2<T, 64>(q, k, v, o, batch_heads, seq, causal, stream);
  if (head_dim == 128) launch_v2<T, 128>(q, k, v, o, batch_heads, seq, causal, stream);
}

template <typename T>
void attention_v3_flash(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                        int head_dim, bool causal, cudaStream_t stream) {
  if (batch_heads <= 0 || seq <= 0) return;
  if (head_dim == 64) launch_v3<T, v3::Default<64>>(q, k, v, o, batch_heads, seq, causal, stream);
  if (head_dim == 128) launch_v3<T, v3::Default<128>>(q, k, v, o, batch_heads, seq, causal, stream);
}

// Both element types of every version (attention.h's table).
#define LAB11_INSTANTIATE(name, fn)                                                             \
  template void fn<__half>(const __half*, const __half*, const __half*, __half*, int, int, int, \
                           bool, cudaStream_t);                                                 \
  template void fn<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*,                  \
                                  const __nv_bfloat16*, __nv_bfloat16*, int, int, int, bool,    \
                                  cudaStream_t);
ATTENTION_VARIANTS(LAB11_INSTANTIATE)
#undef LAB11_INSTANTIATE
