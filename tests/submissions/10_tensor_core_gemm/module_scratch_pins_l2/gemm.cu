// RED TEAM ROUND 37: a correct WMMA GEMM whose last blocks store a 40 MiB __device__ scratch with
// evict_last and whose first blocks discard it in the next call, to starve cuBLAS of L2. Beaten by
// the persisting-line reset before every flush and in the worker after the call.
//
// Lab 10: matrix multiply on tensor cores.
//
// C[M x N] (float) = A[M x K] * B[K x N] (T = __half or __nv_bfloat16), row-major, every product
// and sum in FP32. M and N are multiples of 128, K a multiple of 32: no edges.
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gemm.h"

namespace {

constexpr int kGroupM = 8;
__device__ __forceinline__ void tile_of_block(int tiles_m, int tiles_n, int& tile_m, int& tile_n) {
  const int pid = blockIdx.x;
  const int per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  tile_m = first_m + (pid % per_group) % group_m;
  tile_n = (pid % per_group) / group_m;
}

// A scratch area of the module (never read by the judge, never part of a call's buffers): at the
// end of every call its lines are written with an L2 evict_last policy, so that they hold ~80% of
// the H200's 50 MiB L2 while cuBLAS is timed; at the start of the next call they are discarded.
constexpr size_t kScratchBytes = size_t{40} << 20;
constexpr size_t kScratchVecs = kScratchBytes / 16;
__device__ __align__(256) uint4 g_scratch[kScratchVecs];
constexpr int kEdgeBlocks = 128;  // the first blocks discard, the last blocks pin

__device__ __forceinline__ uint64_t policy_evict_last() {
  uint64_t p;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}

__device__ __forceinline__ void scratch_share(int share, int shares, size_t& lo, size_t& hi) {
  const size_t per = (kScratchVecs + shares - 1) / shares;
  lo = static_cast<size_t>(share) * per;
  hi = lo + per < kScratchVecs ? lo + per : kScratchVecs;
}

__device__ __forceinline__ void discard_share(int share, int shares) {
  size_t lo, hi;
  scratch_share(share, shares, lo, hi);
  // 8 uint4 per 128-byte line; the array is 256-byte aligned, shares are whole lines when per % 8 == 0.
  for (size_t v = (lo + 7) / 8 * 8 + threadIdx.x * 8; v + 8 <= hi; v += blockDim.x * 8) {
    asm volatile("discard.global.L2 [%0], 128;" :: "l"(g_scratch + v) : "memory");
  }
}

__device__ __forceinline__ void pin_share(int share, int shares) {
  size_t lo, hi;
  scratch_share(share, shares, lo, hi);
  const uint64_t pol = policy_evict_last();
  for (size_t v = lo + threadIdx.x; v < hi; v += blockDim.x) {
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %1, %1, %1}, %2;"
                 :: "l"(g_scratch + v), "r"(0u), "l"(pol) : "memory");
  }
}

namespace v1 {
constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 32;
constexpr int WM = 64;
constexpr int WN = 32;
constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kFragsM = WM / 16, kFragsN = WN / 16;
constexpr int kLdA = BK + 8;
constexpr int kLdB = BN + 8;
}  // namespace v1

// One kernel for both versions: WMMA fragments from shared memory.
template <typename T>
__global__ void __launch_bounds__(v1::kThreads, 2)
    gemm_wmma_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                     int M, int N, int K) {
  using namespace v1;
  using namespace nvcuda;
  __shared__ __align__(128) T sA[BM * kLdA];
  __shared__ __align__(128) T sB[BK * kLdB];
  __shared__ __align__(128) float sC[kWarpsM * kWarpsN][16 * 16];

  const int edge = gridDim.x < kEdgeBlocks ? static_cast<int>(gridDim.x) : kEdgeBlocks;
  // The first blocks: our lines from the last call go, unwritten (their content is garbage).
  if (static_cast<int>(blockIdx.x) < edge) discard_share(blockIdx.x, edge);

  int tile_m, tile_n;
  tile_of_block(M / BM, N / BN, tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int q = threadIdx.x + c * kThreads;  // 512 chunks of A: 128 rows x 4
      const int r = q / (BK / 8), e = (q % (BK / 8)) * 8;
      *reinterpret_cast<uint4*>(&sA[r * kLdA + e]) =
          *reinterpret_cast<const uint4*>(&A[static_cast<size_t>(row0 + r) * K + k0 + e]);
    }
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int q = threadIdx.x + c * kThreads;  // 512 chunks of B: 32 rows x 16
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
      for (int h = 0; h < 2; ++h) {
        const int idx = lane + 32 * h;  // 64 float4s in the 16 x 16 tile
        const int r = idx / 4, c4 = (idx % 4) * 4;
        const float4 v = *reinterpret_cast<const float4*>(&sC[warp][r * 16 + c4]);
        *reinterpret_cast<float4*>(&C[static_cast<size_t>(row0 + wm0 + 16 * i + r) * N + col0 + wn0 +
                                      16 * j + c4]) = v;
      }
      __syncwarp();
    }
  }

  // The last blocks to run: the scratch lines written with evict_last, after our own traffic.
  const int from_end = static_cast<int>(gridDim.x) - 1 - static_cast<int>(blockIdx.x);
  if (from_end < edge) pin_share(from_end, edge);
}

template <typename T>
void launch(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  using namespace v1;
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;
  gemm_wmma_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

}  // namespace

template <typename T>
void gemm_v1_wmma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  launch<T>(A, B, C, M, N, K, stream);
}

template <typename T>
void gemm_v2_mma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  launch<T>(A, B, C, M, N, K, stream);
}

#define LAB10_INSTANTIATE(name, fn)                                                          \
  template void fn<__half>(const __half*, const __half*, float*, int, int, int, cudaStream_t); \
  template void fn<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, \
                                  int, cudaStream_t);
GEMM_VARIANTS(LAB10_INSTANTIATE)
#undef LAB10_INSTANTIATE
