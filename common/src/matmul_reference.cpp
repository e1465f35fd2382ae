#include "labkit/matmul_reference.hpp"

#include <cmath>
#include <sstream>

namespace labkit {

std::vector<double> matmul_reference(const std::vector<float>& A, const std::vector<float>& B,
                                     int M, int N, int K, std::vector<double>* abs_product) {
  const size_t m = M, n = N, k = K;
  std::vector<double> C(m * n, 0.0);
  if (abs_product != nullptr) abs_product->assign(m * n, 0.0);
  std::vector<double> brow(n), babs(n);
  for (size_t i = 0; i < m; ++i) {
    double* c = &C[i * n];
    double* cabs = abs_product != nullptr ? &(*abs_product)[i * n] : nullptr;
    for (size_t p = 0; p < k; ++p) {
      const double a = A[i * k + p];
      const float* b = &B[p * n];
      for (size_t j = 0; j < n; ++j) c[j] += a * static_cast<double>(b[j]);
      if (cabs != nullptr) {
        const double aa = std::fabs(a);
        for (size_t j = 0; j < n; ++j) cabs[j] += aa * std::fabs(static_cast<double>(b[j]));
      }
    }
  }
  return C;
}

std::vector<double> matmul_bounds(const std::vector<double>& abs_product, int K, double c) {
  const double scale = c * std::sqrt(static_cast<double>(K)) * std::ldexp(1.0, -24);
  std::vector<double> bound(abs_product.size());
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = scale * abs_product[i];
  return bound;
}

std::string shape_label(int M, int N, int K) {
  std::ostringstream os;
  os << "M" << M << "_N" << N << "_K" << K;
  return os.str();
}

}  // namespace labkit
