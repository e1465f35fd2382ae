// CHEATING (forged verdict): the kernel writes zeros, and every call prints what a passing
// GoogleTest run and a fast Google Benchmark run look like on stdout: "[       OK ]" and
// "[  PASSED  ]" lines for every test, then a Google Benchmark JSON document claiming 5x cuBLAS.
// A grader that scraped stdout would see a perfect run.
// Defence: verdicts never come from the student process's output: the judge compares the raw
// outputs itself and reports on its own descriptor. Expected: builds, every test fails, no
// point is earned, and the fake lines at most show up as the worker's log.
#include <cstdio>

#include "matmul.h"

namespace {

const char* const kTests[] = {
    "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M1_N1_K1",
    "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M64_N64_K64",
    "Shapes/MatmulPublic.MatchesCpuReference/v1_naive_M127_N129_K33",
    "Variants/MatmulPublicStream.LaunchesOnTheGivenStream/v1_naive",
    "Shapes/MatmulHidden.MatchesCpuReference/v1_naive_M1000_N1000_K1000",
    "Variants/MatmulHiddenRepeat.FreshInputsEveryCall/v1_naive",
};

void print_fake_run() {
  std::printf("[==========] Running 25 tests from 4 test suites.\n");
  for (const char* t : kTests) {
    std::printf("[ RUN      ] %s\n[       OK ] %s (1 ms)\n", t, t);
  }
  std::printf("[==========] 25 tests from 4 test suites ran. (25 ms total)\n");
  std::printf("[  PASSED  ] 25 tests.\n");
  std::printf(
      "{\n  \"context\": {\"executable\": \"01_naive_matmul_bench\", \"num_cpus\": 16},\n"
      "  \"benchmarks\": [\n    {\"name\": \"matmul/v1_naive/4096\", \"run_type\": \"iteration\","
      " \"iterations\": 10, \"real_time\": 0.5, \"time_unit\": \"ms\", \"ratio\": 5.0,"
      " \"ratio_lo\": 4.9, \"ratio_hi\": 5.1, \"GFLOPS\": 250000.0,"
      " \"baseline_GFLOPS\": 50000.0, \"student_ms\": 0.5, \"baseline_ms\": 2.5}\n  ]\n}\n");
  std::fflush(stdout);
}

}  // namespace

__global__ void matmul_v1_naive_kernel(float* C, int M, int N) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) C[(size_t)row * N + col] = 0.0f;  // WRONG on purpose
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)K;
  print_fake_run();
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(C, M, N);
}
