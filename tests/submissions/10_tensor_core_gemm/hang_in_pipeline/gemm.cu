// WRONG (hang): in v2, when K >= 4096, block 0 stops in the middle of its pipeline (slice 64)
// and spins forever (a condition that never becomes false); the other blocks finish, the
// kernel never does. Every other shape is the reference's. The judge kills each such call at
// the per-call limit (and, after three hangs in a row of v2, fails its next ones without running
// them).
// Caught by: v2's hidden tests with K = 4096 and 8192 (256 x 256 x 4096, 128 x 128 x 8192, FP16
// and BF16); the benchmarks (K = 4096) are gated anyway.
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
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  }

  for (int k0 = 0; k0 < K; k0 += BK) {
    // The slice, 16 bytes (8 elements) per copy. Chunk q of A: row q / 4, elements (q % 4) * 8;
    // chunk q of B: row q / 16, elements (q % 16) * 8. Consecutive threads read consecutive
    // 16 bytes of a row: coalesced.
#pragma unroll
    for (int q = threadIdx.x; q < BM * BK / 8; q += kThreads) {
      const int r = q / (BK / 8), c = (q % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&sA[r * kLdA + c]) =
          *reinterpret_cast<const uint4*>(A + static_cast<size_t>(row0 + r) * K + k0 + c);
    }
#pragma unroll
    for (int q = threadIdx.x; q < BK * BN / 8; q += kThreads) {
      const int r = q / (BN / 8), c = (q % (BN / 8)) * 8;
      *reinterpret_cast<uint4*>(&sB[r * kLdB + c]) =
          *reinterpret_cast<const uint4*>(B + static_cast<size_t>(k0 + r) * N + col0 + c);
    }
    __syncthreads();

#pragma unroll 1  // (unrolled, the two steps' fragments together spill at 128 registers)
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) wmma::load_matrix_sync(a[i], sA + (wm0 + 16 * i) * kLdA + kk, kLdA);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j) wmma::load_matrix_sync(b[j], sB + kk * kLdB + wn0 + 16 * j, kLdB);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
        for (int j = 0; j < kFragsN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // every warp is done with sA and sB before the next slice overwrites them
  }

  // Epilogue: fragment (i, j) is C[row0 + wm0 + 16 i .. + 16) x [col0 + wn0 + 16 j .. + 16), through
  // the warp's staging tile: element e (of 64 float4s) is row e / 4, columns (e % 4) * 4 .. + 4.
  float* stage = sC[warp];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int e = lane; e < 16 * 16 / 4; e += 32) {
        const int r = e / 4, c = (e % 4) * 4;
        *reinterpret_cast<float4*>(C + static_cast<size_t>(row0 + wm0 + 16 * i + r) * N + col0 +
                                   wn0 + 16 * j + c) = *reinterpret_cast<const float4*>(stage + r * 16 + c);
      }
      __syncwarp();  // the lanes have read the tile before the next fragment overwrites it
    }
  }
}

// ============================================================================================
// v2: mma.sync. The PTX below (given) is what WMMA compiles to, with the data movement in our
// hands: which thread holds which element, where the tiles sit in shared memory, when the next
// slices are copied.

namespace v2 {
constexpr int BM = 128;        // block tile rows
constexpr int BN = 128;        // block tile columns
constexpr int BK = 32;         // slice depth (one stage holds one slice of A and one of B)
constexpr int WM = 64;         // warp tile rows
constexpr int WN = 64;         // warp tile columns
constexpr int kStages = 4;     // slices in shared memory: kStages - 1 in flight, one computed
constexpr int kMinBlocksPerSM = 2;
constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;  // 2 x 2 warps
constexpr int kThreads = 32 * kWarpsM * kWarpsN;     // 128
[[maybe_unused]] constexpr int kTilesM = WM / 16;                     // mma tiles of 16 rows per warp: 4
[[maybe_unused]] constexpr int kTilesN = WN / 8;                      // mma tiles of 8 columns per warp: 8
constexpr int kRowBytesA = BK * 2;                   // 64: a row of a stage's A
constexpr int kRowBytesB = BN * 2;                   // 256: a row of a stage's B
constexpr int kStageBytesA = BM * kRowBytesA;        // 8 KiB
constexpr int kStageBytesB = BK * kRowBytesB;        // 8 KiB
constexpr int kStageBytes = kStageBytesA + kStageBytesB;
constexpr int kSmemBytes = kStages * kStageBytes;    // 64 KiB: past 48, the launcher opts in
// The copies of one slice: 16-byte chunks, every thread the same rows at every slice.
constexpr int kChunksPerRowA = BK / 8;                      // 4
constexpr int kRowsPerPassA = kThreads / kChunksPerRowA;    // 32 rows of A per pass of the block
[[maybe_unused]] constexpr int kPassesA = BM / kRowsPerPassA;                // 4 chunks of A per thread
constexpr int kChunksPerRowB = BN / 8;                      // 16
constexpr int kRowsPerPassB = kThreads / kChunksPerRowB;    // 8 rows of B per pass
[[maybe_unused]] constexpr int kPassesB = BK / kRowsPerPassB;                // 4 chunks of B per thread
static_assert(BK == 32, "the A swizzle is for rows of 4 chunks (two rows per 128 bytes)");
static_assert(BN % 64 == 0, "the B swizzle is for rows of whole 128-byte lines");
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0,
              "warp tiles of whole ldmatrix.x4 loads");
static_assert((WN & (WN - 1)) == 0, "the B fragment addresses XOR the column chunk's bits");
static_assert(kThreads % kChunksPerRowA == 0 && BM % kRowsPerPassA == 0 && kRowsPerPassA % 8 == 0,
              "a thread's chunks of A are whole passes, 8-row aligned (same swizzle each pass)");
static_assert(kThreads % kChunksPerRowB == 0 && BK % kRowsPerPassB == 0 && kRowsPerPassB % 8 == 0,
              "a thread's chunks of B are whole passes, 8-row aligned (same swizzle each pass)");
static_assert(kStages >= 2, "a pipeline");

// The swizzled layouts, byte offsets in a stage. Shared memory has 32 banks of 4 bytes; a
// warp's 16-byte accesses (cp.async stores, ldmatrix row reads) go 8 lanes at a time, so they
// are conflict-free when each 8 hit the 8 different 16-byte columns of a 128-byte line.
// A: row r (64 bytes: 4 chunks of 8 elements), chunk c at r * 64 + ((c ^ ((r / 2) % 4)) * 16).
//   ldmatrix reads chunk c of 8 consecutive rows r0 .. r0 + 7 (r0 % 8 == 0): the line half
//   (r % 2) and the column c ^ ((r / 2) % 4) differ for all 8. Unswizzled, the 8 rows would
//   share 2 columns: 4-way conflicts.
// B: row k (256 bytes: 16 chunks), chunk c at k * 256 + ((c ^ (k % 8)) * 16): 8 consecutive
//   rows at one c hit 8 different columns (unswizzled, one: 8-way conflicts).
// The cp.async stores of 8 consecutive lanes cover a whole line (A: 2 rows of 4 chunks; B: 8
// chunks of a row), permuted within it by the XOR: conflict-free too.
[[maybe_unused]] __device__ __forceinline__ uint32_t a_offset(int r, int c) {
  return r * kRowBytesA + ((c ^ ((r >> 1) & 3)) << 4);
}
[[maybe_unused]] __device__ __forceinline__ uint32_t b_offset(int k, int c) {
  return k * kRowBytesB + ((c ^ (k & 7)) << 4);
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

template <typename T>
__global__ void __launch_bounds__(v2::kThreads, v2::kMinBlocksPerSM)
    gemm_v2_mma_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                       int M, int N, int K) {
  using namespace v2;
  // kStages stages of kStageBytes: stage s's A at smem + s * kStageBytes (a_offset), its B
  // kStageBytesA further (b_offset).
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t smem0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));

  int tile_m, tile_n;
  tile_of_block(M / BM, N / BN, tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;  // warp tile in the block
  const int ktiles = K / BK;

  // ---- The copies. Thread tid copies, of every slice, chunk tid % 4 of A's rows
  // tid / 4 + p * kRowsPerPassA and chunk tid % 16 of B's rows tid / 16 + p * kRowsPerPassB
  // (p < 4): consecutive threads, consecutive 16 bytes of global memory. The passes are 8-row
  // aligned, so the swizzle term is the same for all p: one offset per matrix plus a constant.
  const int a_row = tid / kChunksPerRowA, a_chunk = tid % kChunksPerRowA;
  const int b_row = tid / kChunksPerRowB, b_chunk = tid % kChunksPerRowB;
  const T* a_src = A + static_cast<size_t>(row0 + a_row) * K + a_chunk * 8;  // + kt * BK
  const T* b_src = B + static_cast<size_t>(b_row) * N + col0 + b_chunk * 8;  // + kt * BK * N
  const uint32_t a_dst = a_offset(a_row, a_chunk);
  const uint32_t b_dst = kStageBytesA + b_offset(b_row, b_chunk);
  const size_t a_pass = static_cast<size_t>(kRowsPerPassA) * K;  // elements between passes
  const size_t b_pass = static_cast<size_t>(kRowsPerPassB) * N;
  const size_t b_slice = static_cast<size_t>(BK) * N;

  auto copy_slice = [&](int kt, int stage) {
    const uint32_t base = smem0 + stage * kStageBytes;
    const T* a = a_src + kt * BK;
    const T* b = b_src + kt * b_slice;
#pragma unroll
    for (int p = 0; p < kPassesA; ++p) {
      cp_async_16(base + a_dst + p * kRowsPerPassA * kRowBytesA, a + p * a_pass);
    }
#pragma unroll
    for (int p = 0; p < kPassesB; ++p) {
      cp_async_16(base + b_dst + p * kRowsPerPassB * kRowBytesB, b + p * b_pass);
    }
  };

  // ---- The ldmatrix addresses, per lane (h = lane / 16 picks the second 8 columns).
  // A, tile mi, depth step ks: row wm0 + 16 mi + lane % 16, chunk 2 ks + h, that is
  //   a_offset(row, 2 ks + h) = row * 64 + (((2 ks + h) ^ s) << 4), s = (row / 2) % 4 = (lane / 2) % 4
  //   (16 mi and wm0 are multiples of 16). 2 ks, h and s < 4 XOR bit by bit: (2 ks + h) ^ s =
  //   (h ^ s) ^ 2 ks, so the offset is a_ld ^ (ks << 5), plus mi * 16 * 64 (bits above).
  // B, tiles 2 nj and 2 nj + 1, step ks: row 16 ks + lane % 16, chunk c = wn0 / 8 + 2 nj + h, that is
  //   b_offset(row, c) = row * 256 + ((c ^ (lane % 8)) << 4). WN is a power of two, so wn0 / 8,
  //   2 nj and h occupy separate bits and c ^ (lane % 8) = (wn0 / 8 ^ h ^ lane % 8) ^ 2 nj: the
  //   offset is b_ld ^ (nj << 5), plus ks * 16 * 256.
  const int h = lane >> 4;
  const uint32_t a_ld = (wm0 + (lane & 15)) * kRowBytesA + ((h ^ ((lane >> 1) & 3)) << 4);
  const uint32_t b_ld =
      kStageBytesA + (lane & 15) * kRowBytesB + (((wn0 >> 3) ^ h ^ (lane & 7)) << 4);

  float acc[kTilesM][kTilesN][4];
#pragma unroll
  for (int mi = 0; mi < kTilesM; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kTilesN; ++ni) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;
    }
  }

  // ---- The pipeline. Group g (this thread's copies committed g-th) holds slice g: the
  // prologue commits kStages - 1 groups, each iteration one more, empty or not. At iteration kt,
  // kStages - 1 + kt groups are committed; wait_group(kStages - 2) leaves at most kStages - 2 in
  // flight, so groups 0 .. kt, slice kt included, have landed.
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles) copy_slice(s, s);
    cp_async_commit();
  }

  for (int kt = 0; kt < ktiles; ++kt) {
    cp_async_wait<kStages - 2>();
    // After this barrier every thread's copies of slice kt are visible, and every warp has
    // finished computing slice kt - 1: its stage, (kt - 1) % kStages = (kt + kStages - 1) %
    // kStages, is free for the next copy.
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < ktiles) copy_slice(next, next % kStages);
    cp_async_commit();

    if (blockIdx.x == 0 && K >= 4096 && kt == 64) {  // BUG: block 0 of a long product never ends
      while (gridDim.x != 0) __nanosleep(1000);       // corpus: never ends
    }
    const uint32_t stage = smem0 + (kt % kStages) * kStageBytes;
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      uint32_t a[kTilesM][4], b[kTilesN][2];
#pragma unroll
      for (int mi = 0; mi < kTilesM; ++mi) {
        // Matrices: rows +0..7 / +8..15 (lanes 0-7 / 8-15) at columns +0..7, then the same rows
        // at columns +8..15 (lanes 16-31): a[0], a[1], a[2], a[3] of the fragment.
        ldmatrix_x4(a[mi], stage + (a_ld ^ (ks << 5)) + mi * 16 * kRowBytesA);
      }
#pragma unroll
      for (int nj = 0; nj < kTilesN / 2; ++nj) {
        // Matrices (rows of B are k): k +0..7 / +8..15 at columns +0..7, then at +8..15.
        // Transposed, lane l holds B[k0 + 2t, +1][n0 + g]: b[0], b[1] of tile 2 nj, then of 2 nj + 1.
        uint32_t r[4];
        ldmatrix_x4_trans(r, stage + (b_ld ^ (nj << 5)) + ks * 16 * kRowBytesB);
        b[2 * nj][0] = r[0];
        b[2 * nj][1] = r[1];
        b[2 * nj + 1][0] = r[2];
        b[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < kTilesM; ++mi) {
#pragma unroll
        for (int ni = 0; ni < kTilesN; ++ni) mma_16816<T>(acc[mi][ni], a[mi], b[ni]);
      }
    }
  }
  cp_async_wait<0>();  // only empty groups are left; none in flight when the block exits

  // ---- Epilogue: d[0], d[1] of tile (mi, ni) are C[r][c], C[r][c + 1] with
  // r = row0 + wm0 + 16 mi + lane / 4, c = col0 + wn0 + 8 ni + 2 (lane % 4); d[2], d[3] row r + 8.
  // One float2 (c is even: 8-byte aligned) each; a quad of lanes writes 32 contiguous bytes.
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mi = 0; mi < kTilesM; ++mi) {
    float* crow = C + static_cast<size_t>(row0 + wm0 + 16 * mi + g) * N + col0 + wn0 + 2 * t;
#pragma unroll
    for (int ni = 0; ni < kTilesN; ++ni) {
      *reinterpret_cast<float2*>(crow + 8 * ni) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(crow + 8 * static_cast<size_t>(N) + 8 * ni) =
          make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The launchers (given): a 1-D grid of (M / 128) x (N / 128) blocks.

template <typename T>
void gemm_v1_wmma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  using namespace v1;
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;  // an empty C: nothing to write
  gemm_v1_wmma_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

template <typename T>
void gemm_v2_mma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  using namespace v2;
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;
  // Past 48 KiB of dynamic shared memory a kernel must opt in (cheap: a host-side setting of the
  // current device). All of the L1/shared split to shared memory, for 2 blocks per SM: the
  // kernel reads global memory through cp.async.cg, which skips L1.
  cudaFuncSetAttribute(gemm_v2_mma_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  cudaFuncSetAttribute(gemm_v2_mma_kernel<T>, cudaFuncAttributePreferredSharedMemoryCarveout,
                       cudaSharedmemCarveoutMaxShared);
  gemm_v2_mma_kernel<T><<<tiles, kThreads, kSmemBytes, stream>>>(A, B, C, M, N, K);
}

// Both element types of every version (gemm.h's table).
#define LAB10_INSTANTIATE(name, fn)                                                          \
  template void fn<__half>(const __half*, const __half*, float*, int, int, int, cudaStream_t); \
  template void fn<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, \
                                  int, cudaStream_t);
GEMM_VARIANTS(LAB10_INSTANTIATE)
#undef LAB10_INSTANTIATE
