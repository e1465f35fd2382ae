// CORRECT (slow): v2 on the CUDA cores instead of the tensor cores: the 16-bit inputs are widened
// to float in shared memory and multiplied with FP32 FMAs (a 128 x 128 block tile, slices of
// 16, 8 x 8 outputs per thread), summed in k order: each product is exact in float, the sums err
// by a random walk far inside the bound. Right everywhere; but the CUDA cores' FP32 peak is
// about 1/15 of the tensor cores' FP16 and BF16 rate (67 of 989 TFLOP/s on an H200), so no
// FP32 kernel can reach the performance floor: no performance points. v1 is the reference's.
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
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
// v2, on the CUDA cores: FP32 FMAs, no tensor core. Block tile 128 x 128, slices of depth 16
// widened to float in shared memory (A transposed, so that a thread's 8 rows are contiguous),
// 256 threads in 16 x 16, each owning 8 x 8 of C in registers (64 accumulators). Per slice
// element each thread reads 8 floats of A and 8 of B (four float4) for 64 FMAs.

namespace v2 {
constexpr int BM = 128;  // block tile rows
constexpr int BN = 128;  // block tile columns
constexpr int BK = 16;   // slice depth
constexpr int TM = 8;    // rows per thread
constexpr int TN = 8;    // columns per thread
constexpr int kThreadsN = BN / TN;                   // 16 threads across
constexpr int kThreads = (BM / TM) * kThreadsN;      // 256
static_assert(BM * BK / 8 == kThreads && BK * BN / 8 == kThreads,
              "every thread copies one 16-byte chunk of A and one of B per slice");
}  // namespace v2

template <typename T>
__device__ __forceinline__ float widen(T x) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(x);
  } else {
    return __bfloat162float(x);
  }
}

template <typename T>
__global__ void __launch_bounds__(v2::kThreads)
    gemm_v2_simt_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                        int M, int N, int K) {
  using namespace v2;
  __shared__ __align__(16) float sA[BK][BM];  // sA[k][r] = A[row0 + r][k0 + k]
  __shared__ __align__(16) float sB[BK][BN];  // sB[k][c] = B[k0 + k][col0 + c]

  int tile_m, tile_n;
  tile_of_block(M / BM, N / BN, tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int tid = threadIdx.x;
  const int ty = tid / kThreadsN, tx = tid % kThreadsN;  // rows ty * TM .., columns tx * TN ..
  // The copies, one 16-byte chunk (8 elements) of each matrix per thread and slice: A's row
  // tid / 2, elements (tid % 2) * 8 ..; B's row tid / 16, elements (tid % 16) * 8 ... Rows are
  // 16-byte aligned (K and N are multiples of 32), and so is every chunk.
  const int a_r = tid / (BK / 8), a_c = (tid % (BK / 8)) * 8;
  const int b_r = tid / (BN / 8), b_c = (tid % (BN / 8)) * 8;
  const T* a_src = A + static_cast<size_t>(row0 + a_r) * K + a_c;  // + k0
  const T* b_src = B + static_cast<size_t>(b_r) * N + col0 + b_c;  // + k0 * N

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }

  for (int k0 = 0; k0 < K; k0 += BK) {
    const uint4 av = *reinterpret_cast<const uint4*>(a_src + k0);
    const uint4 bv = *reinterpret_cast<const uint4*>(b_src + static_cast<size_t>(k0) * N);
    T ae[8], be[8];
    memcpy(ae, &av, sizeof av);
    memcpy(be, &bv, sizeof bv);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      sA[a_c + e][a_r] = widen(ae[e]);
      sB[b_r][b_c + e] = widen(be[e]);
    }
    __syncthreads();

#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&sA[k][ty * TM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&sA[k][ty * TM + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&sB[k][tx * TN]);
      const float4 b1 = *reinterpret_cast<const float4*>(&sB[k][tx * TN + 4]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // every thread is done with the slice before the next overwrites it
  }

  // Row row0 + ty * TM + i, columns col0 + tx * TN .. + 8: two float4 (32-byte aligned).
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    float* crow = C + static_cast<size_t>(row0 + ty * TM + i) * N + col0 + tx * TN;
    *reinterpret_cast<float4*>(crow) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    *reinterpret_cast<float4*>(crow + 4) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
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
  gemm_v2_simt_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

// Both element types of every version (gemm.h's table).
#define LAB10_INSTANTIATE(name, fn)                                                          \
  template void fn<__half>(const __half*, const __half*, float*, int, int, int, cudaStream_t); \
  template void fn<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, \
                                  int, cudaStream_t);
GEMM_VARIANTS(LAB10_INSTANTIATE)
#undef LAB10_INSTANTIATE
