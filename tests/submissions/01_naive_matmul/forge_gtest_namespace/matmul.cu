// CHEATING (forged verdict): the kernel writes zeros, and the file defines members of the
// test and benchmark frameworks, declared here by hand (no framework header needed):
// testing::Test::HasFailure() and HasFatalFailure() always false, and
// benchmark::State::SkipWithError() as a no-op, so a failed benchmark check would not show.
// Defence: the policy's reserved-namespace rule (no definition inside testing::, benchmark::,
// labkit::). Behind it, neither framework is linked into the worker.
#include <string>

#include "matmul.h"

namespace testing {
class Test {
 public:
  static bool HasFailure();
  static bool HasFatalFailure();
};
bool Test::HasFailure() { return false; }
bool Test::HasFatalFailure() { return false; }
}  // namespace testing

namespace benchmark {
class State {
 public:
  void SkipWithError(const std::string& msg);
  void SkipWithError(const char* msg);
};
void State::SkipWithError(const std::string& msg) { (void)msg; }
void State::SkipWithError(const char* msg) { (void)msg; }
}  // namespace benchmark

__global__ void matmul_v1_naive_kernel(float* C, int M, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) C[(size_t)row * N + col] = 0.0f;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)K;
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(C, M, N);
}
