// The benchmark judge's check of a timed call's output where it already is: on the GPU, against
// a double-precision reference computed there. Each returns how many elements are outside the
// tests' bound (a non-finite element always is), and copies one number to the host: the common
// case, every element right, costs no download. The same formulas as the host's bounds
// (matmul_walk_bounds, conv_bounds, spmv row_bound) in the same order of operations, so the
// answer is the host comparison's; when it is not 0, the host comparison writes the report.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace labkit {

// |got_i - ref_i| <= scale * (sqrt(sq_i) + |ref_i|): matmul's and conv's random-walk bound
// (sq: the same product or convolution of the squared inputs).
uint64_t count_beyond_walk_bound(const float* got, const double* ref, const double* sq, size_t n,
                                 double scale, cudaStream_t stream);

// |got_i - ref_i| <= scale * (sqrt(sq_i) + max(peak_before, peak_i)): the scan's bound, peak_i
// the largest |ref_j| for j <= i (a running maximum), peak_before that of the elements before
// this piece of a longer output.
uint64_t count_beyond_peak_bound(const float* got, const double* ref, const double* sq,
                                 const double* peak, double peak_before, size_t n, double scale,
                                 cudaStream_t stream);

// |got_r - ref_r| <= min(c_entry * len_r, c_walk * sqrt(len_r)) * 2^-24 * abs_ref_r, where
// len_r = row_ptr[r + 1] - row_ptr[r]: SpMV's per-row bound.
uint64_t count_beyond_row_bound(const float* got, const double* ref, const double* abs_ref,
                                const int32_t* row_ptr, size_t rows, double c_entry,
                                double c_walk, cudaStream_t stream);

}  // namespace labkit
