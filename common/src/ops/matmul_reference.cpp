#include "labkit/ops/matmul_reference.hpp"
#include "labkit/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>

namespace labkit {

namespace {

// Rows [row_begin, row_end) of the product (and of |A||B|, and of sum (a b)^2).
void reference_rows(const std::vector<float>& A, const std::vector<float>& B, size_t n, size_t k,
                    size_t row_begin, size_t row_end, std::vector<double>& C,
                    std::vector<double>* abs_product, std::vector<double>* sq_product) {
  for (size_t i = row_begin; i < row_end; ++i) {
    double* c = &C[i * n];
    double* cabs = abs_product != nullptr ? &(*abs_product)[i * n] : nullptr;
    double* csq = sq_product != nullptr ? &(*sq_product)[i * n] : nullptr;
    for (size_t p = 0; p < k; ++p) {
      const double a = A[i * k + p];
      const float* b = &B[p * n];
      for (size_t j = 0; j < n; ++j) c[j] += a * static_cast<double>(b[j]);
      if (cabs != nullptr) {
        const double aa = std::fabs(a);
        for (size_t j = 0; j < n; ++j) cabs[j] += aa * std::fabs(static_cast<double>(b[j]));
      }
      if (csq != nullptr) {
        const double a2 = a * a;
        for (size_t j = 0; j < n; ++j) {
          const double bj = b[j];
          csq[j] += a2 * (bj * bj);
        }
      }
    }
  }
}

}  // namespace

std::vector<double> matmul_reference(const std::vector<float>& A, const std::vector<float>& B,
                                     int M, int N, int K, std::vector<double>* abs_product,
                                     std::vector<double>* sq_product) {
  const size_t m = M, n = N, k = K;
  std::vector<double> C(m * n, 0.0);
  if (abs_product != nullptr) abs_product->assign(m * n, 0.0);
  if (sq_product != nullptr) sq_product->assign(m * n, 0.0);
  // Large products are split by rows over the CPU's cores: the judge is waiting on it.
  const double work = static_cast<double>(m) * n * k;
  parallel_for(m, work < 1e7 ? SIZE_MAX : 2, [&](size_t begin, size_t end) {
    reference_rows(A, B, n, k, begin, end, C, abs_product, sq_product);
  });
  return C;
}

std::vector<double> matmul_bounds(const std::vector<double>& abs_product, int K, double c) {
  const double scale = c * std::sqrt(static_cast<double>(K)) * std::ldexp(1.0, -24);
  std::vector<double> bound(abs_product.size());
  for (size_t i = 0; i < bound.size(); ++i) bound[i] = scale * abs_product[i];
  return bound;
}

double matmul_walk_scale(int K, double c) {
  return c * std::sqrt(static_cast<double>(K)) * std::ldexp(1.0, -24);
}

double matmul_bound_scale(int K, DType inputs) {
  return inputs == DType::kF32 ? matmul_walk_scale(K)
                               : kMatmulHalfC * static_cast<double>(K) * std::ldexp(1.0, -24);
}

std::vector<double> matmul_walk_bounds(const std::vector<double>& ref,
                                       const std::vector<double>& sq_product, int K, double c) {
  return matmul_scaled_bounds(ref, sq_product, matmul_walk_scale(K, c));
}

std::vector<double> matmul_scaled_bounds(const std::vector<double>& ref,
                                         const std::vector<double>& sq_product, double scale) {
  std::vector<double> bound(ref.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    bound[i] = scale * (std::sqrt(sq_product[i]) + std::fabs(ref[i]));
  }
  return bound;
}

std::string shape_label(int M, int N, int K) {
  std::ostringstream os;
  os << "M" << M << "_N" << N << "_K" << K;
  return os.str();
}

}  // namespace labkit
