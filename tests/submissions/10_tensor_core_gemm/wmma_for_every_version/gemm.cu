// RED TEAM (round 35), lab 10: wmma_for_every_version -- 80 of 100 points without the lab's subject (v2).
//
// Mechanism. Variants are judged by their outputs only: nothing checks that gemm_v2_mma issues
// mma.sync, ldmatrix or cp.async (lab 10's policy forbids no instruction and requires none; the
// one SASS-based rule, the lesson, only asks every kernel to hold an HMMA, which WMMA compiles
// to). So this file writes only v1 (the handout's WMMA kernel, the TODO's steps: ~40 lines) and
// gemm_v2_mma's launcher calls gemm_v1_wmma. Expected on an H100/H200: public 30 + hidden 35 +
// races 10 (v1's kernel has its two barriers per slice: race-free) + lesson 5 (the only kernel
// holds HMMA.16816.F32) = 80/100; the perf entries score ~0 (WMMA at 0.15-0.21 of cuBLAS, floor
// 0.2: the FP16 entry might clear the floor by a hair: 0 bands). The whole mma.sync / ldmatrix /
// swizzle / cp.async pipeline -- the lab's subject -- is never written.
// What would close it: per-variant SASS requirements (v2's kernel must contain LDGSTS: WMMA
// also compiles to LDSM (measured: LDSM.16.M88.4 / MT88.4 in this file's v1), so only cp.async
// tells them apart -- or at least "v2's plan launches a kernel v1's plan does not"), or gating the
// correctness points of a variant on the variant being distinct (a kernel name per variant in
// the saved plans). Cheap variant: make the v2 correctness groups count only if v2's kernel
// contains LDSM + LDGSTS + HMMA (like the lesson's counter, per variant).
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
                        int M, int N, int K) {
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

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  const int tid = threadIdx.x;
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const int q = tid + p * kThreads;
      const int r = q / (BK / 8), c = q % (BK / 8);
      *reinterpret_cast<uint4*>(&sA[r * kLdA + c * 8]) =
          *reinterpret_cast<const uint4*>(A + static_cast<size_t>(row0 + r) * K + k0 + c * 8);
      const int k = q / (BN / 8), cb = q % (BN / 8);
      *reinterpret_cast<uint4*>(&sB[k * kLdB + cb * 8]) =
          *reinterpret_cast<const uint4*>(B + static_cast<size_t>(k0 + k) * N + col0 + cb * 8);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
        wmma::load_matrix_sync(a[i], sA + (wm0 + 16 * i) * kLdA + kk, kLdA);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
        wmma::load_matrix_sync(b[j], sB + kk * kLdB + wn0 + 16 * j, kLdB);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(sC[warp], acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int q = 0; q < 2; ++q) {
        const int idx = lane + 32 * q, r = idx / 4, c4 = idx % 4;
        *reinterpret_cast<float4*>(C + static_cast<size_t>(row0 + wm0 + 16 * i + r) * N + col0 +
                                   wn0 + 16 * j + c4 * 4) =
            *reinterpret_cast<const float4*>(&sC[warp][r * 16 + c4 * 4]);
      }
      __syncwarp();
    }
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

}  // namespace

// ---------------------------------------------------------------------------------------------
// The launchers (given): a 1-D grid of (M / 128) x (N / BN) blocks.

template <typename T>
void gemm_v1_wmma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  using namespace v1;
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;  // an empty C: nothing to write
  gemm_v1_wmma_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

// v2 is never written: its launcher runs the WMMA kernel of v1.
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
