// Cheat: defines a GoogleTest internal (rule: definition, namespace testing).
#include "matmul.h"

namespace testing {
namespace internal {
bool AlwaysTrue() { return true; }
}  // namespace internal
}  // namespace testing

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}
