// Lab 03 interface: shared-memory tiled matrix multiply with a cooperative fetch.
//
//   C[M x N] = A[M x K] * B[K x N]
//
// Row-major float32, all pointers are device pointers. The launcher enqueues its kernel on
// `stream` and returns without synchronizing; the harness checks the launch and waits for it.
//
// THE SIZE PROMISE of this lab (every test keeps it; lab 04 drops it):
//   M and N are multiples of kMatmulMultipleMN = 128, K is a multiple of kMatmulMultipleK = 8,
//   and all three are >= those multiples.
// So a kernel whose block tile L divides 128 and whose slice depth S divides 8 never meets a
// partial tile, and needs no bounds guards. The reference uses L = 128, S = 8, V = 8.
#pragma once

#include <cuda_runtime.h>

inline constexpr int kMatmulMultipleMN = 128;  // M % 128 == 0 and N % 128 == 0
inline constexpr int kMatmulMultipleK = 8;     // K % 8 == 0

// Defined in matmul.cu (the file you edit).
void matmul_v3_smem_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                          cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher). Tests and benchmarks loop
// over this table.
#define MATMUL_VARIANTS(X) X(v3_smem_tiled, matmul_v3_smem_tiled)
