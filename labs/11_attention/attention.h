// Lab 11 interface: attention, forward.
//
//   O[b][i] = sum_j P[b][i][j] V[b][j],   P[b][i][:] = softmax_j( Q[b][i] . K[b][j] / sqrt(d) )
//
// for b in [0, batch_heads) and i, j in [0, seq). Causal: query i sees only keys j <= i (the
// others' scores are -infinity: weight 0). Q, K, V and O are [batch_heads][seq][head_dim],
// row-major and contiguous, in T = __half (FP16) or __nv_bfloat16 (BF16); head_dim (d) is 64 or
// 128; seq is any count from 1 up (no edges promised). Every dot product, exponential, sum and
// weighted sum is in FP32; only the output (and, in v3, P on its way into the tensor cores) is
// rounded to T. Scores can be large (|s| past 88, where expf overflows): a softmax must subtract
// the row's maximum.
//
// v1 computes each query row's softmax the textbook way, in three passes over the keys: the
// maximum score, then the sum of exp(s - max), then the weighted sum of V. v2 makes one pass:
// an online softmax keeps a running maximum and sum and rescales what it has summed when the
// maximum grows. v3 is the fused, tiled attention (FlashAttention's idea): a block owns a tile of
// queries, streams tiles of K and V through shared memory, multiplies on tensor cores (mma.sync)
// and keeps the online softmax in registers, never writing P anywhere.
//
// All pointers are device pointers, 16-byte aligned. O holds garbage on entry: write every
// element. The launcher enqueues everything on `stream` and returns without synchronizing. Each
// version exists for __half and __nv_bfloat16.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

// Defined in attention.cu (the file you edit), for T = __half and T = __nv_bfloat16.
template <typename T>
void attention_v1_three_pass(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                             int head_dim, bool causal, cudaStream_t stream);
template <typename T>
void attention_v2_online(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                         int head_dim, bool causal, cudaStream_t stream);
template <typename T>
void attention_v3_flash(const T* q, const T* k, const T* v, T* o, int batch_heads, int seq,
                        int head_dim, bool causal, cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher template). Tests and
// benchmarks loop over this table.
#define ATTENTION_VARIANTS(X)                   \
  X(v1_three_pass, attention_v1_three_pass)     \
  X(v2_online, attention_v2_online)             \
  X(v3_flash, attention_v3_flash)
