// Cheat: pulls in the test framework, e.g. to register a test of its own (rule: include).
#include <gtest/gtest.h>

#include "matmul.h"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
}
