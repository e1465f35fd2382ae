// CHEATING (reading files from disk): includes a file by absolute path in a second
// preprocessing pass only. gcc's pass expands `H I "/etc/passwd"` into the line
// `# include "/etc/passwd"`, passed on as text; nvcc's front end preprocesses gcc's output
// again and there it is an #include. Neither `nvcc -M` nor the policy's gcc -E lists it, so the
// include rule does not see it; the compiler's errors then echo the file's lines in the build
// log shown to the student (here /etc/passwd, which every machine has; on a grading machine the
// hidden tests' or another student's file at a path the student guessed: a header-shaped file
// would even be compiled in, tests/submissions/README.md and docs/threat-model.md, "The build").
// Defence: the build sandbox (grader/buildbox.py): the front end cannot open the file
// ("Permission denied"), so the build fails and shows none of it.
#include <cstdio>

#include "matmul.h"

#define H #
#define I include
H I "/etc/passwd"

static const char* LEAKED = "";

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  static bool leaked = false;
  if (!leaked) {
    leaked = true;
    std::fprintf(stderr, "%s\n", LEAKED);
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
