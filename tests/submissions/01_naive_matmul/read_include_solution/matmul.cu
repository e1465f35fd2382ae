// CHEATING (reading the answers from disk): defines nothing itself; it #includes the reference
// solution, solutions/01_naive_matmul/matmul.cu, found by relative path at compile time. Quoted
// includes are searched beside the including file (the grader stages it at
// <build>/submission/01_naive_matmul/matmul.cu) and then in the include directories (the lab's
// folder, labs/01_naive_matmul/, holds matmul.h), so __has_include tries both at several
// depths. If nothing is found it falls back to a kernel that writes zeros.
// Defence: the policy's include rule (a submission includes only the lab's interface header and
// system headers; the dependency list of the compiled file shows every file it read).
#include "matmul.h"

#if __has_include("../../solutions/01_naive_matmul/matmul.cu")
#include "../../solutions/01_naive_matmul/matmul.cu"  // from labs/01_naive_matmul/
#elif __has_include("../../../../solutions/01_naive_matmul/matmul.cu")
#include "../../../../solutions/01_naive_matmul/matmul.cu"  // from <repo>/build/<dir>/submission/<lab>/
#elif __has_include("../../../solutions/01_naive_matmul/matmul.cu")
#include "../../../solutions/01_naive_matmul/matmul.cu"
#elif __has_include("../../../../../solutions/01_naive_matmul/matmul.cu")
#include "../../../../../solutions/01_naive_matmul/matmul.cu"
#elif __has_include("../../../../../../solutions/01_naive_matmul/matmul.cu")
#include "../../../../../../solutions/01_naive_matmul/matmul.cu"
#else
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
#endif
