// The matmul CPU reference in double and the float32 error bound (no GoogleTest needed:
// benchmarks use these too).
#pragma once

#include <string>
#include <vector>

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
// c sqrt(K) 2^-24: bound_i = scale (sqrt(sq_i) + |ref_i|) (also checked on the GPU, in the
// benchmark: labkit/device_compare.hpp).
double matmul_walk_scale(int K, double c = kMatmulWalkC);
std::vector<double> matmul_walk_bounds(const std::vector<double>& ref,
                                       const std::vector<double>& sq_product, int K,
                                       double c = kMatmulWalkC);

// "M127_N129_K33": a test-name-safe shape label.
std::string shape_label(int M, int N, int K);

}  // namespace labkit
