// A legitimate submission with more host-side C++: <iostream> (a static initialiser with
// GCC 12 and older, which the policy recognises), std::vector, std::sort, a lambda, a static
// local with a guard, an exception class, a polymorphic helper. It must PASS the policy.
#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "matmul.h"

namespace {

struct Planner {
  virtual ~Planner() = default;
  virtual int block_x(int n) const { return n >= 32 ? 32 : 16; }
};

__global__ void naive_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

}  // namespace

const Planner& planner() {
  static const Planner p;  // a guarded static local
  return p;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (M <= 0 || N <= 0 || K <= 0) throw std::invalid_argument("empty matrix");
  std::vector<int> candidates = {8, 4, 16};
  std::sort(candidates.begin(), candidates.end(), [](int a, int b) { return a > b; });
  const int bx = planner().block_x(N);
  const dim3 block(bx, candidates.front());
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  static int calls = 0;
  if (++calls == 1) std::cerr << "first call: grid " << grid.x << " x " << grid.y << std::endl;
}
