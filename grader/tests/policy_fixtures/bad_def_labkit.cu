// Cheat: defines a function of the harness's namespace, hoping to replace the harness's own
// (rule: definition, namespace labkit).
#include "matmul.h"

namespace labkit {
bool outputs_match(const float* got, const float* want, long n) {
  (void)got; (void)want; (void)n;
  return true;
}
}  // namespace labkit

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}
