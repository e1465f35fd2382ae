// Cheat: runs host code from the stream (rule: import, cudaLaunchHostFunc).
#include "matmul.h"

static void on_host(void* p) { *static_cast<int*>(p) += 1; }
static int g_calls = 0;

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K;
  cudaLaunchHostFunc(stream, on_host, &g_calls);
}
