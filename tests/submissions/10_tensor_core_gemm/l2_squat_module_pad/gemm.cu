// RED TEAM ROUND 37: the squat of l2_squat_cublas on a 64 MiB __device__ pad nothing else
// touches, released by the next call with applypriority evict_normal. Beaten as that case is:
// every persisting line is reset before the baseline's flush (graded on an H200 only with the
// fix: see cases.toml).
//
// Lab 10: matrix multiply on tensor cores. THIS is the file you edit (and the only one the
// grader takes).
//
// C[M x N] (float) = A[M x K] * B[K x N] (T = __half or __nv_bfloat16), row-major, every product
// and sum in FP32. M and N are multiples of 128, K a multiple of 32: no edges.
// v1_wmma: the WMMA API (nvcuda::wmma, fragments of 16 x 16 x 16), block tiles in shared memory.
// v2_mma: mma.sync.m16n8k16 through inline PTX, its fragments read with ldmatrix from a swizzled
//   shared memory that a cp.async pipeline of several stages fills.
// Read README.md in this folder first. Build and test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 10  (your grade)
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gemm.h"

namespace {

// Which C tile (tile_m, tile_n) block blockIdx.x computes, out of tiles_m x tiles_n. The grid is
// 1-D (M / 128 can pass 65535, the limit of gridDim.y), and the order groups kGroupM tile rows:
// they sweep the tile columns together, so the blocks running at one time share rows of A and
// columns of B in L2 instead of each streaming its own.
// (Given.)
constexpr int kGroupM = 8;
__device__ __forceinline__ void tile_of_block(int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int pid = blockIdx.x;
  const int per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);  // the last group may have fewer rows
  tile_m = first_m + (pid % per_group) % group_m;
  tile_n = (pid % per_group) / group_m;
}

// ============================================================================================
// v1: WMMA. A warp computes a 16 x 16 x 16 product with one wmma::mma_sync on fragments that
// wmma::load_matrix_sync reads from shared memory; how the elements sit in the fragments'
// registers is the API's business.

// Reads one 32-bit word of a 128-byte line with an L2 evict_last policy (the line then stays in L2
// ahead of lines of normal priority).
__device__ __forceinline__ uint32_t touch_keep(const void* p) {
  uint64_t pol;
  uint32_t x;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  asm volatile("ld.global.L2::cache_hint.b32 %0, [%1], %2;" : "=r"(x) : "l"(p), "l"(pol));
  return x;
}

// A scratch pad in the module's own memory (3/4 of an H100/H200 L2 fits with room to spare).
// Only the kernels of this file ever touch it.
constexpr size_t kPadBytes = size_t{64} << 20;
__device__ __align__(128) char g_pad[kPadBytes];

namespace v1 {
constexpr int BM = 128;  // block tile rows
constexpr int BN = 128;  // block tile columns
constexpr int BK = 32;   // slice depth
constexpr int WM = 64;   // warp tile rows
constexpr int WN = 32;   // warp tile columns
constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;  // 2 x 4 warps
constexpr int kThreads = 32 * kWarpsM * kWarpsN;     // 256
[[maybe_unused]] constexpr int kFragsM = WM / 16, kFragsN = WN / 16;  // 4 x 2 accumulator fragments per warp
// Rows of sA and sB padded by 8 elements (16 bytes): the 8 rows one fragment load reads at
// a time start 80 (sA) or 272 (sB) bytes apart, in 8 different groups of 4 banks. The strides
// stay multiples of 8 elements and the fragments' corners 32-byte aligned, as WMMA requires.
constexpr int kLdA = BK + 8;  // 40 elements
constexpr int kLdB = BN + 8;  // 136 elements
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
              "warp tiles of whole fragments");
static_assert((BM * BK / 8) % kThreads == 0 && (BK * BN / 8) % kThreads == 0,
              "every thread copies the same number of 16-byte chunks");
}  // namespace v1

template <typename T>
__global__ void __launch_bounds__(v1::kThreads, 2)
    gemm_v1_wmma_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                        int M, int N, int K, size_t keep_bytes) {
  using namespace v1;
  using namespace nvcuda;
  __shared__ __align__(128) T sA[BM * kLdA];  // sA[r * kLdA + k]: A[row0 + r][k0 + k]
  __shared__ __align__(128) T sB[BK * kLdB];  // sB[k * kLdB + c]: B[k0 + k][col0 + c]
  __shared__ __align__(128) float sC[kWarpsM * kWarpsN][16 * 16];  // one staging tile per warp

  int tile_m, tile_n;
  tile_of_block(M / BM, N / BN, tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;  // warp tile in the block
  // Lines of the pad that an earlier call marked go back to normal priority first.
  {
    const size_t lines = keep_bytes / 128;
    const size_t per = (lines + gridDim.x - 1) / gridDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * per;
    const size_t last = first + per < lines ? first + per : lines;
    for (size_t l = first + threadIdx.x; l < last; l += blockDim.x) {
      asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(g_pad + l * 128));
    }
  }

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int c = 0; c < (BM * BK / 8) / kThreads; ++c) {
      const int q = threadIdx.x + c * kThreads;
      const int r = q / (BK / 8), e = (q % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&sA[r * kLdA + e]) =
          *reinterpret_cast<const uint4*>(&A[static_cast<size_t>(row0 + r) * K + k0 + e]);
    }
#pragma unroll
    for (int c = 0; c < (BK * BN / 8) / kThreads; ++c) {
      const int q = threadIdx.x + c * kThreads;
      const int r = q / (BN / 8), e = (q % (BN / 8)) * 8;
      *reinterpret_cast<uint4*>(&sB[r * kLdB + e]) =
          *reinterpret_cast<const uint4*>(&B[static_cast<size_t>(k0 + r) * N + col0 + e]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) wmma::load_matrix_sync(a[i], sA + (wm0 + 16 * i) * kLdA + kk, kLdA);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) wmma::load_matrix_sync(b[j], sB + kk * kLdB + wn0 + 16 * j, kLdB);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(sC[warp], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int t = 0; t < 2; ++t) {
        const int idx = lane + 32 * t;        // 64 float4 in a 16 x 16 tile
        const int r = idx / 4, c4 = (idx % 4) * 4;
        const float4 val = *reinterpret_cast<const float4*>(&sC[warp][r * 16 + c4]);
        *reinterpret_cast<float4*>(&C[static_cast<size_t>(row0 + wm0 + 16 * i + r) * N + col0 + wn0 + 16 * j + c4]) = val;
      }
      __syncwarp();
    }
  }
  // The pad's share of this block, marked evict_last (see g_pad).
  {
    const size_t lines = keep_bytes / 128;
    const size_t per = (lines + gridDim.x - 1) / gridDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * per;
    const size_t last = first + per < lines ? first + per : lines;
    uint32_t sink = 0;
    for (size_t l = first + threadIdx.x; l < last; l += blockDim.x) {
      sink ^= touch_keep(g_pad + l * 128);
    }
    if (keep_bytes == 1 && sink == 0x9E3779B9u) C[0] = 0.0f;  // never: keeps the loads
  }
}

// The bytes worth keeping: what the GPU lets persist in L2 (three quarters of L2 where the
// property is not reported).
size_t resident_bytes() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return 0;
  return prop.persistingL2CacheMaxSize > 0 ? static_cast<size_t>(prop.persistingL2CacheMaxSize)
                                           : static_cast<size_t>(prop.l2CacheSize) / 4 * 3;
}

// ============================================================================================
// v2: mma.sync. The PTX below (given) is what WMMA compiles to, with the data movement in our
// hands: which thread holds which element, where the tiles sit in shared memory, when the next
// slices are copied.

namespace v2 {
// What every configuration shares: 128 rows of C per block, slices of depth 32, warps of 64 x 64.
constexpr int BM = 128;                        // block tile rows
constexpr int BK = 32;                         // slice depth (one stage holds one slice of A and one of B)
constexpr int WM = 64;                         // warp tile rows
constexpr int WN = 64;                         // warp tile columns
[[maybe_unused]] constexpr int kTilesM = WM / 16;  // mma tiles of 16 rows per warp: 4
[[maybe_unused]] constexpr int kTilesN = WN / 8;   // mma tiles of 8 columns per warp: 8
constexpr int kSteps = BK / 16;                // steps of 16 of depth per slice: 2
constexpr int kRowBytesA = BK * 2;             // 64: a row of a stage's A
constexpr int kStageBytesA = BM * kRowBytesA;  // 8 KiB
constexpr int kChunksPerRowA = BK / 8;         // 4 chunks of 16 bytes per row of A
static_assert(BK == 32, "the A swizzle is for rows of 4 chunks (two rows per 128 bytes)");
static_assert(BM % WM == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiles of whole ldmatrix.x4 loads");
static_assert((WN & (WN - 1)) == 0, "the B fragment addresses XOR the column chunk's bits");
static_assert(kSteps % 2 == 0,
              "the fragments of step ks sit in buffer ks % 2: a slice's first step in buffer 0");

// What the width of the block tile decides. N is promised a multiple of 128 only, so there are
// two instantiations of one kernel, and the launcher picks: Wide (128 x 256, the fast one) when
// 256 divides N, Narrow (128 x 128) otherwise, where a 256-wide tile in the last block column
// would reach 128 columns past N (Narrow also where a GPU cannot give a block Wide's shared
// memory). The copies of a slice go in passes of the block, one 16-byte chunk per thread: a pass
// covers kRowsPerPassA rows of A (kRowsPerPassB of B), a thread copies kPassesA chunks of A and
// kPassesB of B.
template <int BN_, int kStages_, int kMinBlocksPerSM_>
struct Config {
  static constexpr int BN = BN_;                              // block tile columns
  static constexpr int kStages = kStages_;                    // slices in shared memory
  static constexpr int kMinBlocksPerSM = kMinBlocksPerSM_;    // __launch_bounds__'s promise
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;  // 2 x BN / 64 warps
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kRowBytesB = BN * 2;                   // a row of a stage's B
  static constexpr int kStageBytesB = BK * kRowBytesB;
  static constexpr int kStageBytes = kStageBytesA + kStageBytesB;
  static constexpr int kSmemBytes = kStages * kStageBytes;    // past 48 KiB: the launcher opts in
  static constexpr int kRowsPerPassA = kThreads / kChunksPerRowA;  // rows of A per block pass
  static constexpr int kPassesA = BM / kRowsPerPassA;              // chunks of A per thread
  static constexpr int kChunksPerRowB = BN / 8;
  static constexpr int kRowsPerPassB = kThreads / kChunksPerRowB;  // rows of B per pass
  static constexpr int kPassesB = BK / kRowsPerPassB;              // chunks of B per thread
  static_assert(BN % WN == 0 && (BN & (BN - 1)) == 0 && BN >= 64,
                "B rows of whole 128-byte lines, a power of two (the XOR stays inside a row)");
  static_assert(kThreads % kChunksPerRowA == 0 && kPassesA * kRowsPerPassA == BM &&
                    kRowsPerPassA % 8 == 0,
                "a thread's chunks of A are whole passes, 8-row aligned (same swizzle each pass)");
  static_assert(kThreads % kChunksPerRowB == 0 && kPassesB * kRowsPerPassB == BK &&
                    kRowsPerPassB % 8 == 0,
                "a thread's chunks of B are whole passes, 8-row aligned (same swizzle each pass)");
  static_assert(kStages >= 2, "a pipeline");
  static_assert(kSmemBytes <= 227 * 1024, "the most shared memory a block can have (sm_90)");

  // B's swizzled layout (below): chunk c of row k of a stage's B.
  __device__ __forceinline__ static uint32_t b_offset(int k, int c) {
    return k * kRowBytesB + ((c ^ (k & 7)) << 4);
  }
};
// Config<BN, stages, blocks per SM>:
using Wide = Config<256, 6, 1>;    // 2 x 4 warps, 256 threads, 24 KiB a stage: 144 KiB, 1 block/SM
using Narrow = Config<128, 4, 2>;  // 2 x 2 warps, 128 threads, 16 KiB a stage: 64 KiB, 2 blocks/SM

// The swizzled layouts, byte offsets in a stage. Shared memory has 32 banks of 4 bytes; a
// warp's 16-byte accesses (cp.async stores, ldmatrix row reads) go 8 lanes at a time, so they
// are conflict-free when each 8 hit the 8 different 16-byte columns of a 128-byte line.
// A: row r (64 bytes: 4 chunks of 8 elements), chunk c at r * 64 + ((c ^ ((r / 2) % 4)) * 16).
//   ldmatrix reads chunk c of 8 consecutive rows r0 .. r0 + 7 (r0 % 8 == 0): the line half
//   (r % 2) and the column c ^ ((r / 2) % 4) differ for all 8. Unswizzled, the 8 rows would
//   share 2 columns: 4-way conflicts.
// B: row k (BN * 2 bytes: 512 for Wide, 256 for Narrow; BN / 8 chunks), chunk c at
//   k * BN * 2 + ((c ^ (k % 8)) * 16) (Config::b_offset): the XOR changes the low 3 bits of c,
//   so a chunk stays in its 128-byte line, and 8 consecutive rows at one c hit 8 different
//   columns (unswizzled, one: 8-way conflicts).
// The cp.async stores of 8 consecutive lanes cover a whole line (A: 2 rows of 4 chunks; B: 8
// chunks of a row), permuted within it by the XOR: conflict-free too.
[[maybe_unused]] __device__ __forceinline__ uint32_t a_offset(int r, int c) {
  return r * kRowBytesA + ((c ^ ((r >> 1) & 3)) << 4);
}
}  // namespace v2

// ---- PTX (given). `smem` arguments are shared-window addresses (__cvta_generic_to_shared).

// 16 bytes global -> shared, without passing through registers (nor L1: .cg). Asynchronous: the
// data is there after a cp.async.wait_group that covers its group.
[[maybe_unused]] __device__ __forceinline__ void cp_async_16(uint32_t smem, const void* gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem) : "memory");
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
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __half>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    static_assert(std::is_same_v<T, __nv_bfloat16>, "T is __half or __nv_bfloat16");
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

template <typename T, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocksPerSM)
    gemm_v2_mma_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                       int M, int N, int K) {
  using namespace v2;
  constexpr int BN = Cfg::BN, kStages = Cfg::kStages, kWarpsN = Cfg::kWarpsN;
  constexpr int kRowBytesB = Cfg::kRowBytesB, kStageBytes = Cfg::kStageBytes;
  // kStages stages of kStageBytes: stage s's A at smem + s * kStageBytes (a_offset), its B
  // kStageBytesA further (Cfg::b_offset).
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));

  int tile_m, tile_n;
  tile_of_block(M / BM, N / BN, tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;  // warp tile in the block
  const int tid = threadIdx.x, ktiles = K / BK;

  // ---- TODO(student) BEGIN ---------------------------------------------------------------
  // 1. The copies. Slice kt of A is A[row0 .. row0 + BM) x [kt BK .. kt BK + BK): BM rows of 4
  //    chunks of 16 bytes; thread tid copies chunk tid % 4 of rows tid / 4 + p *
  //    Cfg::kRowsPerPassA (p < Cfg::kPassesA) with cp_async_16 to smem0 + stage * kStageBytes +
  //    a_offset(row, chunk). Slice kt of B, B[kt BK .. + BK) x [col0 .. col0 + BN): chunk
  //    tid % Cfg::kChunksPerRowB of rows tid / Cfg::kChunksPerRowB + p * Cfg::kRowsPerPassB, to
  //    ... + kStageBytesA + Cfg::b_offset(row, chunk). Work out the global pointers and the
  //    offsets once, before the loop: only kt and the stage change.
  // 2. Fragments, per 16 of depth (step ks = 0, 1 of a slice), warp tile WM x WN = kTilesM x
  //    kTilesN mma tiles of 16 x 8:
  //    A fragments: one ldmatrix_x4 per 16 rows: lane l gives the address of row
  //      r = wm0 + 16 mi + l % 16, chunk c = 2 ks + l / 16 (stage + a_offset(r, c)): its 4
  //      matrices are then a[0..3] of mma_16816's comment (rows +0 / +8, columns +0 / +8).
  //    B fragments: one ldmatrix_x4_trans per 16 columns (two mma tiles of 8): lane l gives row
  //      k = 16 ks + l % 16, chunk c = (wn0 + 16 nj) / 8 + l / 16 (stage + kStageBytesA +
  //      Cfg::b_offset(k, c)); r[0], r[1] are b[0], b[1] of tile 2 nj, r[2], r[3] those of
  //      tile 2 nj + 1 (the .trans turns rows of B into the "col" layout the mma wants).
  //    Then mma_16816<T>(acc[mi][ni], a[mi], b[ni]) for every mi, ni: float acc[4][8][4].
  //    A lambda that loads the fragments of (stage, ks) into arrays passed by reference helps.
  // 3. The pipeline, one barrier per slice, fragments double-buffered in registers
  //    (uint32_t a[2][kTilesM][4], b[2][kTilesN][2]: buffer ks % 2 for step ks):
  //      slices 0 .. kStages - 2 into stages 0 .. kStages - 2, a cp_async_commit() after each
  //      (commit even when there is no slice to copy: the counting below wants one group per
  //      slice number); cp_async_wait<kStages - 2>(); __syncthreads(); fragments of slice 0,
  //      step 0 into buffer 0;
  //      for kt = 0 .. ktiles - 1, stage kt % kStages:
  //        step 0: fragments of step 1 into buffer 1; copy slice kt + kStages - 1 (if <
  //                ktiles) into stage (kt + kStages - 1) % kStages, cp_async_commit();
  //                the mma of buffer 0
  //        step 1: cp_async_wait<kStages - 2>()  this thread's copies of slice kt + 1 landed
  //                __syncthreads()               everyone's have; and everyone has read all
  //                                              of slice kt (step 1 is in registers)
  //                fragments of slice kt + 1, step 0, into buffer 0 (past the last slice:
  //                a stale stage, never used); the mma of buffer 1
  //      cp_async_wait<0>() at the end.
  //    (Simpler first: per slice copy, commit, cp_async_wait<0>(), __syncthreads(), both
  //    steps, __syncthreads(). README.md, "Steps".)
  // 4. Epilogue: acc[mi][ni][0], [1] are C[r][c], C[r][c + 1] with r = row0 + wm0 + 16 mi +
  //    lane / 4 and c = col0 + wn0 + 8 ni + 2 (lane % 4); [2], [3] those of row r + 8. One
  //    float2 store each.
  (void)A; (void)B; (void)C; (void)smem0; (void)row0; (void)col0; (void)lane;  // placeholder:
  (void)wm0; (void)wn0; (void)ktiles; (void)kStages; (void)kRowBytesB;         // remove these
  (void)kStageBytes; (void)tid;                                                // three lines
  // ---- TODO(student) END -----------------------------------------------------------------
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The launchers (given): a 1-D grid of (M / 128) x (N / BN) blocks.

template <typename T>
void gemm_v1_wmma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  using namespace v1;
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;  // an empty C: nothing to write
  const size_t ab = kPadBytes;
  const size_t want = resident_bytes();
  gemm_v1_wmma_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K, want < ab ? want : ab);
}

namespace {
// One configuration of v2. Past 48 KiB of dynamic shared memory a kernel must opt in (cheap: a
// host-side setting of the current device), each instantiation for itself. All of the L1/shared
// split to shared memory: the kernel reads global memory through cp.async.cg, which skips L1.
template <typename T, class Cfg>
void launch_v2(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const unsigned tiles = static_cast<unsigned>(M / v2::BM) * static_cast<unsigned>(N / Cfg::BN);
  if (tiles == 0) return;
  cudaFuncSetAttribute(gemm_v2_mma_kernel<T, Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       Cfg::kSmemBytes);
  cudaFuncSetAttribute(gemm_v2_mma_kernel<T, Cfg>, cudaFuncAttributePreferredSharedMemoryCarveout,
                       cudaSharedmemCarveoutMaxShared);
  gemm_v2_mma_kernel<T, Cfg><<<tiles, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(A, B, C, M, N, K);
}
}  // namespace

// N is a multiple of 128, not necessarily of 256: the 128 x 256 tiles (Wide) when they divide N,
// else 128 x 128 tiles (Narrow, the same kernel): no block reads or writes past N, and the kernel
// has no edge code. Narrow also on a GPU whose blocks cannot have Wide's 144 KiB of shared memory
// (compute capability 8.6 and 8.9 allow 99 KiB).
template <typename T>
void gemm_v2_mma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  gemm_v1_wmma<T>(A, B, C, M, N, K, stream);
}

// Both element types of every version (gemm.h's table).
#define LAB10_INSTANTIATE(name, fn)                                                          \
  template void fn<__half>(const __half*, const __half*, float*, int, int, int, cudaStream_t); \
  template void fn<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, \
                                  int, cudaStream_t);
GEMM_VARIANTS(LAB10_INSTANTIATE)
#undef LAB10_INSTANTIATE
