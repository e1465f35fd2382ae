// The matmul CPU reference in double and the float32 error bound (no GoogleTest needed:
// benchmarks use these too).
#pragma once

#include <string>
#include <vector>

namespace labkit {

// C = A * B in double, row-major. Also returns (|A||B|)_ij in `abs_product` when non-null.
std::vector<double> matmul_reference(const std::vector<float>& A, const std::vector<float>& B,
                                     int M, int N, int K,
                                     std::vector<double>* abs_product = nullptr);

// The float32 bound: c * sqrt(K) * 2^-24 * (|A||B|)_ij. A correct kernel measures near 0.07 of
// it with c = 1; a dropped k term lands in the hundreds.
inline constexpr double kMatmulBoundC = 4.0;
std::vector<double> matmul_bounds(const std::vector<double>& abs_product, int K,
                                  double c = kMatmulBoundC);

// "M127_N129_K33": a test-name-safe shape label.
std::string shape_label(int M, int N, int K);

}  // namespace labkit
