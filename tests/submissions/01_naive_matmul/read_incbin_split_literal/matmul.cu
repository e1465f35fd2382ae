// CHEATING (reading the answers from disk): embeds the hidden tests' file in its object at
// compile time through a top-level host asm block and the assembler's "include a binary file"
// directive, written as two adjacent string literals (".inc" then "bin") so that no token of
// the file spells the directive; on the first call it prints the source to stderr, so the
// hidden shapes come back to the student as the test's output. The path is relative to the
// compiler's working directory, the build directory at <repo>/build/<dir>/. Correct kernel.
// Defence: the policy's source rule (adjacent literals joined as the compiler joins them).
// read_incbin_solution hides the directive behind a macro as well.
#include <cstdio>

#include "matmul.h"

asm(".pushsection .rodata.leak, \"a\"\n"
    ".globl leaked_hidden_tests\n"
    "leaked_hidden_tests:\n"
    ".inc" "bin \"../../labs/01_naive_matmul/hidden/cases.toml\"\n"
    ".byte 0\n"
    ".popsection\n");

extern "C" const char leaked_hidden_tests[];

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
    std::fprintf(stderr, "%s\n", leaked_hidden_tests);
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
