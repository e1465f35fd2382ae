// Device-side fills used by the worker and the benchmark judge: counter-based random inputs
// (the same numbers labkit::uniform_f32 gives on the CPU) and 32-bit patterns (poison,
// canaries). Compiled by nvcc once, in labkit_cuda; callable from plain C++.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace labkit {

void fill_uniform_f32(float* out, size_t count, uint64_t seed, float lo, float hi,
                      cudaStream_t stream);
void fill_uniform_i32(int32_t* out, size_t count, uint64_t seed, int32_t lo, int32_t hi,
                      cudaStream_t stream);
// Writes `pattern` to every aligned 32-bit word of [out, out + bytes); bytes % 4 == 0.
void fill_pattern32(void* out, size_t bytes, uint32_t pattern, cudaStream_t stream);
// The reduce family's float inputs (labkit/ops/reduce_dist.hpp), n = count, from `seed`.
void fill_reduce_f32(float* out, size_t count, uint64_t seed, cudaStream_t stream);
// How many elements differ from what fill_reduce_f32 wrote with these arguments; synchronises.
uint64_t count_not_reduce_f32(const float* a, size_t count, uint64_t seed, cudaStream_t stream);
// The spmv family's x (labkit/ops/spmv_dist.hpp): uniform in [lo, hi) but for one planted
// column; and how many elements differ from it (synchronises).
void fill_spmv_x(float* out, size_t count, uint64_t seed, float lo, float hi, cudaStream_t stream);
uint64_t count_not_spmv_x(const float* a, size_t count, uint64_t seed, float lo, float hi,
                          cudaStream_t stream);
// The conv family's x (weights = false) or w (weights = true) (labkit/ops/conv_dist.hpp), the
// shift's segments `plane` elements long (H*W for x, K*K for w); and how many elements differ
// from it (synchronises).
void fill_conv_f32(float* out, size_t count, size_t plane, bool weights, uint64_t seed,
                   cudaStream_t stream);
uint64_t count_not_conv_f32(const float* a, size_t count, size_t plane, bool weights,
                            uint64_t seed, cudaStream_t stream);
// The sum of x[0..count) and of |x|, in double (a float sum's reference); synchronises.
struct SumAbs {
  double sum = 0;
  double abs_sum = 0;
};
SumAbs sum_abs_f64(const float* x, size_t count, cudaStream_t stream);
// out[i] = in[i] (or in[i]^2 when `square`) in double: the inputs of a double reference product.
void to_f64(const float* in, double* out, size_t count, bool square, cudaStream_t stream);
// The convolution's reference in double (a thread per output, no bias), NCHW: y[n][co][oh][ow]
// = sum over ci, i, j of w[co][ci][i][j] * x[n][ci][oh*stride - pad + i][ow*stride - pad + j],
// and sq[...] the same sum of (w x)^2 (the bound's, conv_bounds). For checking a benchmark's
// output; synchronises.
void conv_reference_f64(const float* x, const float* w, int n, int c_in, int h, int width,
                        int c_out, int k, int stride, int pad, double* y, double* sq,
                        cudaStream_t stream);
// fabs of every element, in place (the benchmark's |A|, |B| for the error bound).
void abs_f32(float* data, size_t count, cudaStream_t stream);
// One block of an empty kernel: the calibration worker's stand-in for a launcher (the launch
// and the wait for it are part of every timed call's overhead).
void launch_empty_kernel(cudaStream_t stream);
// How many elements differ from what fill_uniform_* wrote with these arguments, or between two
// buffers (32-bit words of `bytes`, bytes % 4 == 0); synchronises `stream`.
uint64_t count_not_uniform_f32(const float* a, size_t count, uint64_t seed, float lo, float hi,
                               cudaStream_t stream);
uint64_t count_not_uniform_i32(const int32_t* a, size_t count, uint64_t seed, int32_t lo,
                               int32_t hi, cudaStream_t stream);
uint64_t count_differences(const void* a, const void* b, size_t bytes, cudaStream_t stream);

}  // namespace labkit
