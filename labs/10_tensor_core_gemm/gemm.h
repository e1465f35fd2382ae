// Lab 10 interface: matrix multiply on tensor cores, 16-bit inputs, 32-bit accumulation.
//
//   C[M x N] = A[M x K] * B[K x N]     row-major; A and B in T, C in float
//
// T is __half (FP16) or __nv_bfloat16 (BF16). Every product and every sum is accumulated in
// FP32: the tests' bound is FP32's (a kernel that accumulates in 16 bits fails it). Sizes: M and
// N are multiples of 128, K a multiple of 32 (this lab's promise: no edges). v1 multiplies with
// the WMMA API (nvcuda::wmma fragments of 16 x 16 x 16); v2 with mma.sync.m16n8k16 fed by
// ldmatrix from shared memory that a cp.async pipeline fills (the reference: 128 x 256 x 32
// block tiles of 8 warps, 6 stages, 128 x 128 where N is not a multiple of 256).
//
// All pointers are device pointers, 16-byte aligned. C holds garbage on entry: write every
// element. The launcher enqueues everything on `stream` and returns without synchronizing. Each
// version exists for __half and __nv_bfloat16.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// Defined in gemm.cu (the file you edit), for T = __half and T = __nv_bfloat16.
template <typename T>
void gemm_v1_wmma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream);
template <typename T>
void gemm_v2_mma(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher template). Tests and
// benchmarks loop over this table.
#define GEMM_VARIANTS(X)        \
  X(v1_wmma, gemm_v1_wmma)      \
  X(v2_mma, gemm_v2_mma)
