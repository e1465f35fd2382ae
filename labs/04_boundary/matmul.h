// Lab 04 interface: lab 03's shared-memory tiled matmul for any size, and an optimized version.
//
//   C[M x N] = A[M x K] * B[K x N]
//
// Row-major float32, all pointers are device pointers, ANY M, N, K >= 1: not multiples of any
// tile, smaller than one tile, tall-skinny (M >> N) and wide-short (N >> M). The launcher
// enqueues its kernels on `stream` and returns without synchronizing; the harness checks the
// launch and waits for it.
#pragma once

#include <cuda_runtime.h>

// Defined in matmul.cu (the file you edit).
// v4: lab 03's kernel (block tile L x L, slices of depth S, thread tile V x V) with guarded
// loads that zero-fill past the edges and guarded stores.
void matmul_v4_boundary(const float* A, const float* B, float* C, int M, int N, int K,
                        cudaStream_t stream);
// v5: as fast as you can make it, still for any M, N, K (graded for bonus points only).
void matmul_v5_optimized(const float* A, const float* B, float* C, int M, int N, int K,
                         cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher). Tests and benchmarks loop
// over this table.
#define MATMUL_VARIANTS(X)                  \
  X(v4_boundary, matmul_v4_boundary)        \
  X(v5_optimized, matmul_v5_optimized)
