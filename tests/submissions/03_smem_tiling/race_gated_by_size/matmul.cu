// RED TEAM (round 34), lab 03: race_gated_by_size -- the race verdict covers one small shape.
//
// Attack. The race check replays one graded call at "a product of a few blocks and phases, at a
// shape only the hidden tests name" (grading.toml). This kernel keeps each warp's A slice
// private (warp w computes rows 16w..16w+15 of the 128x128 tile and fetches exactly those A rows)
// and B's slice cooperative and double-buffered. On grids of >= 64 blocks (M * N >= 2^20: the
// 4096^3 benchmark, any large hidden test) the warp's stores of its A slice and its reads of it
// are separated by nothing: an intra-warp read-after-write shared-memory hazard in every phase
// of every warp, right natively only because a converged warp executes its STS before its LDS.
// On smaller grids (the race check, the public tests up to 512^2 = 16 blocks) a __syncthreads()
// separates them and racecheck finds nothing. Only gridDim is read: no device rule applies.
// Confidence: high, provided the hidden race shape has fewer than 64 blocks ("a few blocks").
#include "matmul.h"

namespace {

constexpr int L = 128;
constexpr int S = 8;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = L / kWarps;   // 16
static_assert(kMatmulMultipleMN % L == 0 && kMatmulMultipleK % S == 0, "size promise");

// Racy from this many blocks on (M * N >= 1024 * 1024): the 4096^3 benchmark (1024 blocks) and
// any large hidden test. The race check is "a product of a few blocks and phases" (grading.toml).
constexpr unsigned kRacyFromBlocks = 64;

}  // namespace

__global__ void __launch_bounds__(kThreads, 2)
    matmul_v3_smem_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(16) float sA[kWarps][S][kRowsPerWarp];
  __shared__ __align__(16) float sB[2][S][L];
  (void)M;
  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31;
  const int row0 = blockIdx.y * L, col0 = blockIdx.x * L;

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
  __syncthreads();                                   // sB[0] is visible
  const bool racy = gridDim.x * gridDim.y >= kRacyFromBlocks;

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
