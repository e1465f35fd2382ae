// RED TEAM (round 34), lab 03: race_gated_by_spin_count -- keep the race points with a tile
// loop that drops a barrier, WITHOUT reading any clock.
//
// Attack, part 1 (telling the race check's replay apart without a clock). compute-sanitizer
// racecheck patches every shared-memory access (LDS/STS) and barrier with a call into its own
// device code; register math and plain global loads stay native. Each block times its own
// shared-memory accesses against register work with a spin COUNTER as the clock:
//   * warp 0 runs kProbeAlu dependent IMADs (registers only), publishes flag = 1 (a volatile
//     global store), then kProbeSmem dependent volatile LDS->STS round trips on its own lane's
//     word of a private shared array (no other thread touches it: no hazard), publishes flag = 2;
//   * warp 1 polls the flag with volatile global loads and counts polls: cR during the register
//     phase, cS during the shared phase.
// Natively (H100/H200): register phase ~384 x ~7 cycles ~ 2.7k cycles, shared phase ~32 x ~40
// ~ 1.3k cycles, a poll ~300+ cycles -> cR ~ 8, cS ~ 4. Under racecheck the 64 patched shared
// accesses each cost a call into the tool: cS explodes while cR does not change. "Checked" iff
// cS > 2 cR + 4 (or the poll limit is hit). The verdict goes from warp 1 lane 0 to a shared int
// read by all after the prologue's __syncthreads (properly synchronized). The flag word is C's
// first element of the block's own tile, overwritten with the result at the end (after many
// barriers): no module global, no special register, no clock: the device rule passes it.
//
// Attack, part 2 (the race). Warp w computes rows 16w..16w+15 of the 128x128 block tile (all 128
// columns), so it reads only the A rows it fetches itself: A's slice is kept per warp
// (sA[w][k][m]) and fetched by that warp, B's slice is cooperative and double-buffered (one
// __syncthreads per slice). When not checked, the warp's store of its A slice and its reads of
// it are separated by NOTHING (no __syncwarp, no __syncthreads): lanes read A elements other
// lanes of the warp just stored -- a real read-after-write shared-memory hazard in every
// phase of every warp, which racecheck reports (intra-warp hazards since Volta). It computes
// the right product natively only because a converged warp executes its STS before its LDS
// (warp-synchronous programming). When checked, a __syncthreads() sits between them and the
// replay is hazard-free (racecheck reports intra-warp hazards as WARNINGs, which fail the check,
// so the racy path must never run there).
#include "matmul.h"

namespace {

constexpr int L = 128;
constexpr int S = 8;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = L / kWarps;   // 16
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0, "size promise");

constexpr int kProbeAlu = 384;
constexpr int kProbeSmem = 32;
constexpr unsigned kProbeLimit = 1u << 14;

__device__ __forceinline__ void probe_worker(unsigned* s_probe, volatile unsigned* flag) {
  const unsigned lane = threadIdx.x & 31u;
  unsigned x = threadIdx.x * 2654435761u + 12345u;
#pragma unroll 1
  for (int i = 0; i < kProbeAlu; ++i) x = x * 1664525u + 1013904223u;
  __syncwarp();
  if (lane == 0) *flag = 1u;
  volatile unsigned* p = s_probe + lane;
  *p = x;
#pragma unroll 1
  for (int i = 0; i < kProbeSmem; ++i) *p = *p * 3u + 1u;
  const unsigned last = *p;
  __syncwarp();
  if (lane == 0) *flag = 2u + (last & 0u) * 7u;
}

__device__ __forceinline__ void probe_counter(volatile unsigned* flag, int* s_checked) {
  unsigned cR = 0, cS = 0;
  while (*flag < 1u && cR < kProbeLimit) ++cR;
  while (*flag < 2u && cS < kProbeLimit) ++cS;
  if ((threadIdx.x & 31u) == 0) {
    *s_checked = (cR >= kProbeLimit || cS >= kProbeLimit || cS > 2u * cR + 4u) ? 1 : 0;
  }
}

}  // namespace

__global__ void __launch_bounds__(kThreads, 2)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float sA[kWarps][S][kRowsPerWarp];
  __shared__ __align__(16) float sB[2][S][L];
  __shared__ unsigned s_probe[32];
  __shared__ int s_checked;
  (void)M;
  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31;
  const int row0 = blockIdx.y * L, col0 = blockIdx.x * L;

  volatile unsigned* flag = reinterpret_cast<volatile unsigned*>(C + (size_t)row0 * N + col0);
  if (tid == 0) *flag = 0u;
  __syncthreads();
  if (warp == 0) probe_worker(s_probe, flag);
  else if (warp == 1) probe_counter(flag, &s_checked);

  // This warp's A rows: lane -> (m = lane / 2, k4 = (lane % 2) * 4), one float4 per slice.
  const int am = lane >> 1, ak = (lane & 1) * 4;
  const float* a_src = A + (size_t)(row0 + warp * kRowsPerWarp + am) * K + ak;
  // B's slice, cooperative: tid -> (k = tid / 32, c4 = (tid % 32) * 4), one float4 per slice.
  const int bk = tid >> 5, bc = (tid & 31) * 4;
  const float* b_src = B + (size_t)bk * N + col0 + bc;
  // This thread's 8 x 8 outputs: rows 16 warp + 8 ry + y, cols 8 rx + x.
  const int ry = lane >> 4, rx = lane & 15;

  float4 ra = *reinterpret_cast<const float4*>(a_src);
  float4 rb = *reinterpret_cast<const float4*>(b_src);
  *reinterpret_cast<float4*>(&sB[0][bk][bc]) = rb;
  __syncthreads();                                   // sB[0] and s_checked are visible
  const bool racy = !s_checked;

  float c[8][8];
#pragma unroll
  for (int y = 0; y < 8; ++y)
#pragma unroll
    for (int x = 0; x < 8; ++x) c[y][x] = 0.f;

  const int tiles = K / S;
  for (int t = 0; t < tiles; ++t) {
    sA[warp][ak + 0][am] = ra.x;
    sA[warp][ak + 1][am] = ra.y;
    sA[warp][ak + 2][am] = ra.z;
    sA[warp][ak + 3][am] = ra.w;
    // The barrier the racy path leaves out. Checked: a block barrier (block-uniform branch), not
    // __syncwarp, which ptxas lowers to a bare NOP on a converged sm_90 path.
    if (!racy) __syncthreads();
    asm volatile("" ::: "memory");
    const bool more = t + 1 < tiles;
    if (more) {
      ra = *reinterpret_cast<const float4*>(a_src + (size_t)(t + 1) * S);
      rb = *reinterpret_cast<const float4*>(b_src + (size_t)(t + 1) * S * N);
    }
    const int buf = t & 1;
#pragma unroll
    for (int ki = 0; ki < S; ++ki) {
      const float4 a0 = *reinterpret_cast<const float4*>(&sA[warp][ki][ry * 8]);
      const float4 a1 = *reinterpret_cast<const float4*>(&sA[warp][ki][ry * 8 + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&sB[buf][ki][rx * 8]);
      const float4 b1 = *reinterpret_cast<const float4*>(&sB[buf][ki][rx * 8 + 4]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int y = 0; y < 8; ++y)
#pragma unroll
        for (int x = 0; x < 8; ++x) c[y][x] += a[y] * b[x];
    }
    if (more) *reinterpret_cast<float4*>(&sB[buf ^ 1][bk][bc]) = rb;
    __syncthreads();
  }

#pragma unroll
  for (int y = 0; y < 8; ++y) {
    float* dst = C + (size_t)(row0 + warp * kRowsPerWarp + ry * 8 + y) * N + col0 + rx * 8;
    *reinterpret_cast<float4*>(dst) = make_float4(c[y][0], c[y][1], c[y][2], c[y][3]);
    *reinterpret_cast<float4*>(dst + 4) = make_float4(c[y][4], c[y][5], c[y][6], c[y][7]);
  }
}

void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream) {
  dim3 block(kThreads);
  dim3 grid(N / L, M / L);
  matmul_v3_smem_tiled_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
