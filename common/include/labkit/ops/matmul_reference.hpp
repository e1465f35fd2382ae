// The matmul CPU reference in double and the float32 error bound (no GoogleTest needed:
// benchmarks use these too).
#pragma once

#include <string>
#include <vector>

#include "labkit/dtype.hpp"

namespace labkit {

// C = A * B in double, row-major. Also returns (|A||B|)_ij in `abs_product` and
// sum_k (a_ik b_kj)^2 in `sq_product` when non-null.
std::vector<double> matmul_reference(const std::vector<float>& A, const std::vector<float>& B,
                                     int M, int N, int K,
                                     std::vector<double>* abs_product = nullptr,
                                     std::vector<double>* sq_product = nullptr);

// The worst-case-style bound: c * sqrt(K) * 2^-24 * (|A||B|)_ij. A correct kernel measures near
// 0.07 of it with c = 1; a dropped k term lands in the hundreds; but so little of it is used on
// the labs' zero-mean data (about 1/256 at K = 4096) that TF32 products pass it.
inline constexpr double kMatmulBoundC = 4.0;
std::vector<double> matmul_bounds(const std::vector<double>& abs_product, int K,
                                  double c = kMatmulBoundC);

// The random-walk bound the labs grade with: c * sqrt(K) * 2^-24 * (sqrt(sum_k (a b)^2) + |C|),
// per element. A float32 sum of K products in any honest order (sequential with or without
// FMA, tiles of k, split-K trees) errs by a random walk of K roundings, each at most 2^-24 of
// the running sum, which is about sqrt(k) * rms(a b) for zero-mean terms and about |C| k / K
// for terms with a mean: the two terms. Measured on the CPU over 2 million elements: the worst
// honest error is 1.6 of it with c = 1 (mean 0.12); products of TF32-rounded inputs err by 77
// to 1500 of it (common/tests/matmul_reference_test.cpp).
inline constexpr double kMatmulWalkC = 6.0;
// Lab 10's inputs are 16-bit floats, so each product a b is exact in float32 (11 + 11 or 8 + 8
// significant bits) and only the float32 sums round; but tensor cores add a block of products
// to the float32 accumulator and then truncate (by the published measurements of their
// arithmetic), where CUDA cores round to nearest. Truncation's errors do not cancel: they add
// up along the sum, linearly in K, so no constant of the walk holds at every K (a model of
// blocks of 4 truncated measures 1.6 of the walk at K = 4096 and 1.8 at 8192). The bound of
// 16-bit inputs is the linear one: c K 2^-24 (sqrt(sum_k (a b)^2) + |C|), the walk's terms
// standing for the running sum's size. A sum kept in 16 bits errs by 2^13 (half) or 2^16
// (bfloat16) times float32's rounding at every step and lands outside it from K = 32 on
// (common/tests/half_test.cpp).
inline constexpr double kMatmulHalfC = 1.0;

// The bound's per-element scale: bound_i = scale (sqrt(sq_i) + |ref_i|); the walk's
// c sqrt(K) 2^-24 for float32 inputs, c K 2^-24 for 16-bit ones.
double matmul_bound_scale(int K, DType inputs);

// c sqrt(K) 2^-24: bound_i = scale (sqrt(sq_i) + |ref_i|) (also checked on the GPU, in the
// benchmark: labkit/device_compare.hpp).
double matmul_walk_scale(int K, double c = kMatmulWalkC);
std::vector<double> matmul_walk_bounds(const std::vector<double>& ref,
                                       const std::vector<double>& sq_product, int K,
                                       double c = kMatmulWalkC);
// The same terms at a given scale (matmul_bound_scale).
std::vector<double> matmul_scaled_bounds(const std::vector<double>& ref,
                                         const std::vector<double>& sq_product, double scale);

// "M127_N129_K33": a test-name-safe shape label.
std::string shape_label(int M, int N, int K);

}  // namespace labkit
