// Cheat: reads the expected answers from a file (rule: import, fopen).
#include <cstdio>

#include "matmul.h"

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
  if (FILE* f = std::fopen("labs/01_naive_matmul/hidden/hidden_test.cpp", "r")) std::fclose(f);
}
