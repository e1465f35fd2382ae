// Lab 02 interface: register-tiled matrix multiply.
//
//   C[M x N] = A[M x K] * B[K x N]
//
// Row-major float32, all pointers are device pointers.
//
// THE SIZE PROMISE of this lab: M and N are multiples of MATMUL_SIZE_MULTIPLE (64), K is any
// integer >= 1. Every test and benchmark keeps it, so a block tile whose height and width
// divide 64 (64 x 64 with V = 4 and 16 x 16 threads, for example) covers C exactly: no partial
// tiles, no bounds guard needed. Lab 04 drops the promise.
//
// The launcher enqueues its kernel on `stream` and returns without synchronizing; the harness
// checks the launch and waits for it.
#pragma once

#include <cuda_runtime.h>

// M and N are multiples of this; K is any value >= 1.
#define MATMUL_SIZE_MULTIPLE 64

// Defined in matmul.cu (the file you edit).
void matmul_v2_register_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                              cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher). Tests and benchmarks loop
// over this table.
#define MATMUL_VARIANTS(X) X(v2_register_tiled, matmul_v2_register_tiled)
