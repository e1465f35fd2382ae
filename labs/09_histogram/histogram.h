// Lab 09 interface: histogram.
//
//   bins[b] = how many i in [0, n) have in[i] == b,   for b in [0, num_bins)
//
// For bytes (T = unsigned char) num_bins is 256: every byte value is a bin. For ints (T = int)
// num_bins is given at run time, 1 <= num_bins <= 2^20, and every in[i] is in [0, num_bins).
// v1 counts with one global atomic per element; v2 privatises: each block counts into a
// histogram in shared memory and adds it to `bins` once; v3 is your fastest (the reference: a
// shared-memory histogram replicated so that the lanes of a warp never share a bank, fed by
// 16-byte loads).
//
// All pointers are device pointers; n >= 1 (a size_t: it may exceed 2^31). What `bins` holds on
// entry is garbage: zero it, every call (cudaMemsetAsync on `stream` is allowed). The launcher
// enqueues everything on `stream` and returns without synchronizing. Each version exists for
// unsigned char and int.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Defined in histogram.cu (the file you edit), for T = unsigned char and T = int.
template <typename T>
void histogram_v1_global_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream);
template <typename T>
void histogram_v2_shared_atomics(const T* in, unsigned int* bins, size_t n, int num_bins,
                                 cudaStream_t stream);
template <typename T>
void histogram_v3_replicated(const T* in, unsigned int* bins, size_t n, int num_bins,
                             cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher template). Tests and
// benchmarks loop over this table.
#define HISTOGRAM_VARIANTS(X)                             \
  X(v1_global_atomics, histogram_v1_global_atomics)       \
  X(v2_shared_atomics, histogram_v2_shared_atomics)       \
  X(v3_replicated, histogram_v3_replicated)
