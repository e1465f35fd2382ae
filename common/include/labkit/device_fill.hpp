// Device-side fills used by the worker and the benchmark judge: counter-based random inputs
// (the same numbers labkit::uniform_f32 gives on the CPU) and 32-bit patterns (poison,
// canaries); and the judges' references of the labs' sums. Compiled by nvcc once; callable from
// plain C++. None of their kernels computes what a lab asks (docs/release.md, "Judge-side
// kernels").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "labkit/protocol.hpp"

namespace labkit {

void fill_uniform_f32(float* out, size_t count, uint64_t seed, float lo, float hi,
                      cudaStream_t stream);
// uniform_f32 rounded to IEEE half (bf16 = false) or bfloat16 (labkit/half.hpp: uniform_16),
// as 16-bit words; and how many elements differ from it (synchronises).
void fill_uniform_16(void* out, bool bf16, size_t count, uint64_t seed, float lo, float hi,
                     cudaStream_t stream);
uint64_t count_not_uniform_16(const void* a, bool bf16, size_t count, uint64_t seed, float lo,
                              float hi, cudaStream_t stream);
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
// The histogram family's values (labkit/ops/histogram_dist.hpp), bytes or int32, distribution
// `dist`, in [0, bins); and how many elements differ from them (synchronises).
void fill_histogram_values(void* out, bool bytes, size_t count, uint64_t seed, uint32_t dist,
                           uint32_t bins, cudaStream_t stream);
uint64_t count_not_histogram_values(const void* a, bool bytes, size_t count, uint64_t seed,
                                    uint32_t dist, uint32_t bins, cudaStream_t stream);
// The judges' references (device_reference.cu, in labkit only: CUB's device-wide algorithms,
// no hand-written reduction). The sum of x[0..count) and of |x|, in double (a float sum's
// reference); synchronises.
struct SumAbs {
  double sum = 0;
  double abs_sum = 0;
};
SumAbs sum_abs_f64(const float* x, size_t count, cudaStream_t stream);
// row_ptr of count - 1 rows sharing nnz entries evenly: out[i] = floor(i * nnz / (count - 1));
// and how many elements differ from it (synchronises).
void fill_row_ptr_even(int32_t* out, size_t count, uint64_t nnz, cudaStream_t stream);
uint64_t count_not_row_ptr_even(const int32_t* a, size_t count, uint64_t nnz, cudaStream_t stream);
// y = A x's reference for a CSR matrix (32-bit indices, rows up to nnz = 2^31 - 1): per row, the
// sum of a x and of |a x| in double, into ref[rows] and abs_ref[rows] (device), by CUB's
// segmented reduction (device_reference.cu); synchronises.
void spmv_reference_f64(const int32_t* row_ptr, const int32_t* col_idx, const float* values,
                        const float* x, int64_t rows, double* ref, double* abs_ref,
                        cudaStream_t stream);
// The exact sum of x[0..count) in 64 bits (an int sum's reference; device_reference.cu);
// synchronises.
int64_t sum_i32_i64(const int32_t* x, size_t count, cudaStream_t stream);
// A generated source (protocol::Source, not kArena) into `out`: `count` elements drawn from
// `seed` (and lo, hi where the source has a range); and how many elements of `a` differ from
// what it draws (synchronises). Throws std::invalid_argument for kArena.
// `plane`: the conv sources' shift segment (H*W of x, K*K of w; bench_suite's conv_plane).
void fill_source(void* out, protocol::Source source, size_t count, uint64_t seed, double lo,
                 double hi, cudaStream_t stream, size_t plane = 0);
uint64_t count_not_source(const void* a, protocol::Source source, size_t count, uint64_t seed,
                          double lo, double hi, cudaStream_t stream, size_t plane = 0);
// out[i] = in[i] (or in[i]^2 when `square`) in double: the inputs of a double reference product.
void to_f64(const float* in, double* out, size_t count, bool square, cudaStream_t stream);
// The same from 16-bit floats (IEEE half, or bfloat16 when bf16).
void to_f64_16(const void* in, bool bf16, double* out, size_t count, bool square,
               cudaStream_t stream);
// fabs of every element, in place (the benchmark's |A|, |B| for the error bound).
void abs_f32(float* data, size_t count, cudaStream_t stream);
// One block of an empty kernel: the calibration worker's stand-in for a launcher (the launch
// and the wait for it are part of every timed call's overhead).
void launch_empty_kernel(cudaStream_t stream);
// Clears the local memory (the threads' stacks: spills, local arrays) that any kernel of this
// context can address: a grid that fills every warp slot of every SM twice over stores zeros
// over a frame of at least `frame` bytes (the largest frame of the loaded kernels) and the
// per-thread stack (cudaLimitStackSize, which the driver raises to the largest frame a launched
// kernel needed and never lowers). The executor runs it before every call, off the clock
// (Executor::prepare), so that no call finds what an earlier one left there, and neither the
// race check's replay, a fresh process, nor a benchmark's timed call can be told from any other
// call. False when it could not launch (a frame past 64 KiB, or the device cannot be asked).
bool scrub_local_memory(size_t frame, cudaStream_t stream);
// The same for shared memory: in every split between L1 and shared memory the SM can take
// (where a block's shared memory lies depends on it), blocks of a quarter of the shared part,
// four to an SM, store fresh garbage over their dynamic window (no kernel finds zeros it did not
// write: a shared histogram or tree never zeroed is wrong, as on any GPU) and zeros over their
// reserved part. False when it could not launch.
bool scrub_shared_memory(cudaStream_t stream);
// How many elements differ from what fill_uniform_* wrote with these arguments, or between two
// buffers (32-bit words of `bytes`, bytes % 4 == 0); synchronises `stream`.
uint64_t count_not_uniform_f32(const float* a, size_t count, uint64_t seed, float lo, float hi,
                               cudaStream_t stream);
uint64_t count_not_uniform_i32(const int32_t* a, size_t count, uint64_t seed, int32_t lo,
                               int32_t hi, cudaStream_t stream);
uint64_t count_differences(const void* a, const void* b, size_t bytes, cudaStream_t stream);

}  // namespace labkit
