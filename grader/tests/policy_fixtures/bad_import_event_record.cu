// Cheat: records events of its own to see when it is being timed (rule: import).
#include "matmul.h"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
  cudaEvent_t e;
  cudaEventCreate(&e);
  cudaEventRecord(e, stream);
}
