// Cheat: copies a cached answer into C from inside the launcher (rule: import, cudaMemcpy).
#include "matmul.h"

static float* g_cached = nullptr;   // pretend it was filled earlier

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)K; (void)stream;
  cudaMemcpy(C, g_cached, sizeof(float) * M * N, cudaMemcpyDeviceToDevice);
}
