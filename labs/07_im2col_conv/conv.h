// Lab 07 interface: forward convolution as matrix multiplication.
//
//   y[n][co][oh][ow] = bias[co] + sum over ci < C_in, i < K, j < K of
//                      w[co][ci][i][j] * x[n][ci][oh*S - P + i][ow*S - P + j]
//
// x is N x C_in x H x W, w is C_out x C_in x K x K, y is N x C_out x H_out x W_out, all NCHW
// float32 (row-major, the last index fastest); H_out = (H + 2P - K) / S + 1 and W_out likewise
// (integer division: the last input rows and columns may be left unused). An input index
// outside the image reads as zero (zero padding): it is never loaded. `bias` is nullptr (no
// bias) or C_out values.
//
// All pointers are device pointers. `workspace` holds conv_workspace_size(shape) floats, and
// what it holds on entry is garbage. A launcher enqueues everything on `stream` (kernels, and
// conv_sgemm calls on that same stream) and returns without synchronizing.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// The shape helpers below work in kernels too.
#if defined(__CUDACC__)
#define CONV_HD __host__ __device__
#else
#define CONV_HD
#endif

// The shape of one convolution. Sizes >= 1, pad >= 0, K <= H + 2P and K <= W + 2P.
struct ConvShape {
  int n, c_in, h, w;  // input: N images of C_in channels, H x W
  int c_out, k;       // filter: C_out x C_in x K x K
  int stride, pad;    // S and P, the same in both directions
};

CONV_HD constexpr int conv_h_out(const ConvShape& s) { return (s.h + 2 * s.pad - s.k) / s.stride + 1; }
CONV_HD constexpr int conv_w_out(const ConvShape& s) { return (s.w + 2 * s.pad - s.k) / s.stride + 1; }

// The unrolled (im2col) matrix of ONE image: C_in*K*K rows (row ci*K*K + i*K + j) by
// H_out*W_out columns (column oh*W_out + ow), row-major; `rows * cols` floats.
CONV_HD constexpr size_t conv_col_rows(const ConvShape& s) { return size_t(s.c_in) * s.k * s.k; }
CONV_HD constexpr size_t conv_col_cols(const ConvShape& s) { return size_t(conv_h_out(s)) * conv_w_out(s); }

// Floats of `workspace`: the unrolled matrices of all N images, then room for a
// C_out x N*H_out*W_out GEMM result (for a GEMM with the images folded into its columns,
// whose result then needs reordering into NCHW). Use what your wrapper needs of it.
CONV_HD constexpr size_t conv_workspace_size(const ConvShape& s) {
  return (conv_col_rows(s) + size_t(s.c_out)) * conv_col_cols(s) * size_t(s.n);
}

// ---- The GEMM this lab gives you (cuBLAS, true FP32, provided by the harness): the only way
// to reach a library from conv.cu. Row-major, C = A * B, A is M x K, B is K x N, C is M x N,
// all dense (leading dimensions K, N and N); it overwrites C. Enqueued on `stream`.
void conv_sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream);
// `batch` independent products C_b = A_b * B_b with A_b = A + b * stride_a (and likewise for B
// and C), strides in floats; stride_a = 0 uses the same A for every product.
void conv_sgemm_batched(const float* A, long long stride_a, const float* B, long long stride_b,
                        float* C, long long stride_c, int M, int N, int K, int batch,
                        cudaStream_t stream);

// ---- Defined in conv.cu (the file you edit).
// v1: explicit im2col into `workspace`, then conv_sgemm, bias, NCHW.
void conv_v1_im2col(const float* x, const float* w, const float* bias, float* y, ConvShape shape,
                    float* workspace, cudaStream_t stream);
// v2: implicit GEMM: a tiled GEMM over the virtual unrolled matrix; `workspace` unused.
void conv_v2_implicit_gemm(const float* x, const float* w, const float* bias, float* y,
                           ConvShape shape, float* workspace, cudaStream_t stream);

// Every version this lab grades, one row each: X(name, launcher). Tests and benchmarks loop
// over this table.
#define CONV_VARIANTS(X)                   \
  X(v1_im2col, conv_v1_im2col)             \
  X(v2_implicit_gemm, conv_v2_implicit_gemm)
