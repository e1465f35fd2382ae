// Lab 05 interface: parallel reduction.
//
//   out[0] = in[0] + in[1] + ... + in[n - 1]
//
// Every version reduces the whole array by kernel decomposition: one launch reduces each
// block's slice of its input to one partial sum, written to `workspace`; the next launch
// reduces those partials the same way, and so on until one value is left, which the last
// launch writes to out[0]. There is no global barrier inside a launch: the end of a launch is
// the barrier between levels.
//
// All pointers are device pointers; n >= 1. `workspace` holds at least
// reduce_workspace_size(n) elements, and what it holds on entry is garbage (whatever an
// earlier call left there). The launcher enqueues everything on `stream` and returns without
// synchronizing. Each version exists for float and int (exact: int sums must be exact).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Elements of `workspace` for n inputs: room for every level of partial sums when each block
// reduces at least 64 elements.
inline constexpr size_t reduce_workspace_size(size_t n) { return n / 32 + 1024; }

// Defined in reduce.cu (the file you edit), for T = float and T = int.
template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);
template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);
template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);
template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher template). Tests and
// benchmarks loop over this table.
#define REDUCE_VARIANTS(X)                    \
  X(v1_interleaved, reduce_v1_interleaved)    \
  X(v2_strided, reduce_v2_strided)            \
  X(v3_sequential, reduce_v3_sequential)      \
  X(v4_optimized, reduce_v4_optimized)
