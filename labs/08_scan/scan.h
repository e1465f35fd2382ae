// Lab 08 interface: prefix sum (exclusive scan).
//
//   out[0] = 0,  out[i] = in[0] + in[1] + ... + in[i - 1]   (0 < i < n)
//
// v1 and v2 scan by kernel decomposition ("scan-then-propagate"): one launch scans each block's
// tile of the input and writes the tile's total to `workspace`; the totals are scanned the same
// way (recursively, until they fit in one block); a last launch adds each tile's scanned total
// to every element of the tile. v3 does it in one pass over the input: decoupled look-back.
//
// All pointers are device pointers; n >= 1 (a size_t: it may exceed 2^31). `workspace` holds at
// least scan_workspace_size(n) elements of T, and what it holds on entry is garbage (whatever an
// earlier call, or anyone, left there): reset what you rely on, every call. The launcher
// enqueues everything on `stream` and returns without synchronizing. Each version exists for
// float and int. Int scans are exact modulo 2^32: add as unsigned (a signed overflow is
// undefined behaviour in C++; an unsigned one wraps, and the bits are the int you want).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Elements of `workspace` for n inputs: room for every level of tile totals when each block
// scans at least 256 elements, or for one 64-bit status word per tile of at least 256 elements,
// plus 1024 elements (a counter, alignment).
inline constexpr size_t scan_workspace_size(size_t n) { return n / 128 + 1024; }

// Defined in scan.cu (the file you edit), for T = float and T = int.
template <typename T>
void scan_v1_hillis_steele(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);
template <typename T>
void scan_v2_blelloch(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);
template <typename T>
void scan_v3_single_pass(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher template). Tests and
// benchmarks loop over this table.
#define SCAN_VARIANTS(X)                      \
  X(v1_hillis_steele, scan_v1_hillis_steele)  \
  X(v2_blelloch, scan_v2_blelloch)            \
  X(v3_single_pass, scan_v3_single_pass)
