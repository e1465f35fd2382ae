// Lab 10 submission (red team B, case lesson_dead_hmma).
//
// Neither version multiplies on tensor cores: both widen the 16-bit inputs to float in shared
// memory and run an FP32 FMA GEMM on the CUDA cores (products exact, sums in FP32: far inside
// the tests' bound, race-free). The "tensor cores" lesson (5 points) reads HMMA instructions out
// of each kernel's machine code; each kernel here carries exactly one mma.sync that does no work:
//   v1's kernel: behind a branch no call takes (K < 0), so it never runs;
//   v2's kernel: runs once per warp on all-zero fragments and adds its zero result into one
//                accumulator, so the tensor pipe is really used (a dynamic "did it issue any
//                HMMA" check would pass too) while it contributes nothing to C.
#include <cuda_runtime.h>
#include <mma.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gemm.h"

namespace {

constexpr int BM = 128, BN = 128, BK = 16;
constexpr int TM = 8, TN = 8;
constexpr int kThreads = (BM / TM) * (BN / TN);  // 256

template <typename T>
__device__ __forceinline__ float widen(T v) {
  if constexpr (std::is_same<T, __half>::value) {
    return __half2float(v);
  } else {
    return __bfloat162float(v);
  }
}

// One mma.sync.m16n8k16 with FP32 accumulation (HMMA.16816.F32[.BF16]) on the given fragments.
template <typename T>
__device__ __forceinline__ void one_mma(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                        uint32_t b0, uint32_t b1, float (&d)[4]) {
  if constexpr (std::is_same<T, __half>::value) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// C = A * B on the CUDA cores: 128 x 128 block tile, 8 x 8 outputs per thread, slices of 16.
// `acc` comes in (v2 seeds it with the tensor cores' zero).
template <typename T>
__device__ __forceinline__ void fma_gemm_body(const T* __restrict__ A, const T* __restrict__ B,
                                              float* __restrict__ C, int M, int N, int K,
                                              float (&acc)[TM][TN]) {
  __shared__ float sA[BK][BM + 4];
  __shared__ float sB[BK][BN + 4];
  const int tiles_n = N / BN;
  const int tile_m = blockIdx.x / tiles_n, tile_n = blockIdx.x % tiles_n;
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
    for (int p = 0; p < (BM * BK) / kThreads; ++p) {
      const int idx = threadIdx.x + p * kThreads;
      const int r = idx / BK, c = idx % BK;
      sA[c][r] = widen(A[static_cast<size_t>(row0 + r) * K + k0 + c]);
    }
#pragma unroll
    for (int p = 0; p < (BK * BN) / kThreads; ++p) {
      const int idx = threadIdx.x + p * kThreads;
      const int r = idx / BN, c = idx % BN;
      sB[r][c] = widen(B[static_cast<size_t>(k0 + r) * N + col0 + c]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = sA[k][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = sB[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      C[static_cast<size_t>(row0 + ty * TM + i) * N + col0 + tx * TN + j] = acc[i][j];
  (void)M;
}

// v1: the tensor-core instruction sits behind a branch that is never taken.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gemm_v1_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                   int M, int N, int K) {
  if (K < 0) {  // gemm.h promises K >= 32: never
    const uint32_t* a = reinterpret_cast<const uint32_t*>(A);
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    one_mma<T>(a[threadIdx.x], a[threadIdx.x + 32], a[threadIdx.x + 64], a[threadIdx.x + 96],
               a[threadIdx.x + 128], a[threadIdx.x + 160], d);
    C[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
    return;
  }
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  fma_gemm_body<T>(A, B, C, M, N, K, acc);
}

// v2: one real mma.sync per warp, on zero fragments; its (zero) result seeds acc[0][0].
template <typename T>
__global__ void __launch_bounds__(kThreads)
    gemm_v2_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                   int M, int N, int K) {
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  const uint32_t z = static_cast<uint32_t>(M) & 0u;  // 0, in a register
  one_mma<T>(z, z, z, z, z, z, d);
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  acc[0][0] = d[0];  // 0 * 0 + 0: exactly 0
  fma_gemm_body<T>(A, B, C, M, N, K, acc);
}

}  // namespace

template <typename T>
void gemm_v1_wmma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;
  gemm_v1_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

template <typename T>
void gemm_v2_mma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const unsigned tiles = static_cast<unsigned>(M / BM) * static_cast<unsigned>(N / BN);
  if (tiles == 0) return;
  gemm_v2_kernel<T><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

#define LAB10_INSTANTIATE(name, fn)                                                          \
  template void fn<__half>(const __half*, const __half*, float*, int, int, int, cudaStream_t); \
  template void fn<__nv_bfloat16>(const __nv_bfloat16*, const __nv_bfloat16*, float*, int, int, \
                                  int, cudaStream_t);
GEMM_VARIANTS(LAB10_INSTANTIATE)
#undef LAB10_INSTANTIATE
