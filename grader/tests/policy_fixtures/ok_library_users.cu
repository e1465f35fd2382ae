// A legitimate submission that leans on the C++ library: std::string, std::ostringstream,
// std::function, std::unordered_map, std::unique_ptr, std::shared_ptr, std::array, std::pair,
// std::optional, <cmath>, lambdas, function-local statics, a class template and a function
// template of its own, <cuda_runtime.h> helpers. Its weak definitions are template
// instantiations and inline functions in COMDAT groups: it must PASS the policy (the
// library-export and weak-definition checks must not refuse honest code).
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "matmul.h"

template <int BX, int BY>
__global__ void tiled_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * BX + threadIdx.x;
  const int row = blockIdx.y * BY + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(A[(size_t)row * K + k], B[(size_t)k * N + col], acc);
  C[(size_t)row * N + col] = acc;
}

template <typename T>
struct Stats {
  std::vector<T> seen;
  void add(T v) { seen.push_back(v); }
  T total() const { return std::accumulate(seen.begin(), seen.end(), T{}); }
};

template <typename F>
int pick(const std::vector<int>& xs, F&& score) {
  return *std::max_element(xs.begin(), xs.end(),
                           [&](int a, int b) { return score(a) < score(b); });
}

struct Shape {
  int m, n, k;
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
};
struct ShapeHash {
  size_t operator()(const Shape& s) const {
    return std::hash<long long>()(((long long)s.m * 1315423911LL) ^ (s.n * 2654435761LL) ^ s.k);
  }
};

static std::string describe(const dim3& g) {
  std::ostringstream out;
  out << g.x << "x" << g.y;
  return out.str();
}

std::unordered_map<Shape, int, ShapeHash>& memo() {
  static std::unordered_map<Shape, int, ShapeHash> table;   // a function-local static
  return table;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  static Stats<double> stats;
  stats.add(std::sqrt(double(M) * N));
  auto shared = std::make_shared<std::array<int, 3>>(std::array<int, 3>{8, 16, 32});
  auto owned = std::make_unique<std::pair<int, int>>(32, 8);
  std::function<double(int)> score = [&](int bx) { return std::fabs(double(N % bx)) + bx; };
  std::optional<int> cached;
  auto it = memo().find(Shape{M, N, K});
  if (it != memo().end()) cached = it->second;
  const int bx = cached ? *cached : pick(std::vector<int>(shared->begin(), shared->end()), score);
  memo()[Shape{M, N, K}] = bx;
  std::string name = "tiled_" + std::to_string(bx);
  const dim3 block(32, owned->second);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  tiled_kernel<32, 8><<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  if (stats.seen.size() == 1 && name.size() > 100)
    std::cout << name << " " << describe(grid) << " " << stats.total() << std::endl;
}
