// Lab 01 interface: naive matrix multiply.
//
//   C[M x N] = A[M x K] * B[K x N]
//
// Row-major float32, all pointers are device pointers, any M, N, K >= 1.
// The launcher enqueues its kernel on `stream` and returns without synchronizing;
// the harness checks the launch and waits for it.
#pragma once

#include <cuda_runtime.h>

// Defined in matmul.cu (the file you edit).
void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher). Tests and benchmarks loop
// over this table.
#define MATMUL_VARIANTS(X) X(v1_naive, matmul_v1_naive)
