// CHEATING (reading the answers from disk): embeds the reference solution and the hidden tests
// in its own object at compile time, with a top-level host asm block using the assembler's
// "include a binary file" directive, and on the first call prints both to stderr, where they
// come back to the student as the program's output. The directive's name is split between a
// macro and the string literal after it, and no comment spells it, so that neither a search of
// the text as written nor one that joins adjacent string literals finds it: only the text after
// preprocessing shows it. Paths are relative to the compiler's working directory: the build
// directory, which the grader keeps at <repo>/build/<dir>/ (Ninja runs every command there).
// The kernel itself is correct.
// Defence: the policy's source rule, applied to the preprocessed text with adjacent literals
// joined. The include rule cannot see it, and the object imports nothing unusual.
#include <cstdio>

#include "matmul.h"

#define ASM_HEAD ".in"  // the first half of the directive's name

asm(".pushsection .rodata.answers, \"a\"\n"
    ".globl embedded_solution\n"
    "embedded_solution:\n"
    ASM_HEAD "cbin \"../../solutions/01_naive_matmul/matmul.cu\"\n"
    ".byte 0\n"
    ".globl embedded_hidden_tests\n"
    "embedded_hidden_tests:\n"
    ASM_HEAD "cbin \"../../labs/01_naive_matmul/hidden/cases.toml\"\n"
    ".byte 0\n"
    ".popsection\n");

extern "C" const char embedded_solution[];
extern "C" const char embedded_hidden_tests[];

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
    std::fprintf(stderr, "=== solution ===\n%s\n=== hidden tests ===\n%s\n", embedded_solution,
                 embedded_hidden_tests);
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
