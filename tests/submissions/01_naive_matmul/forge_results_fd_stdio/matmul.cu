// CHEATING (forged verdict): the kernel writes zeros, and every call writes forged result
// records to every inherited file descriptor 3..63 -- one '"status": "passed"' JSON line per
// test of the lab, a '"done"' line, and a Google Benchmark JSON document at 5x cuBLAS -- in
// case one of them is the judge's or the grader's results channel. It imports nothing but
// printf: it points glibc's stdout FILE at each descriptor in turn (stdout->_fileno).
// Defence: the worker inherits only its request/reply pipes and its arena (results
// descriptors are close-on-exec and never passed down), and the judge accepts from the worker
// only fixed-size replies it checks field by field. Expected: builds, every test fails.
#include <cstdio>

#include "matmul.h"

namespace {

struct Shape {
  int M, N, K;
};
const Shape kPublic[] = {{1, 1, 1},   {64, 64, 64}, {32, 32, 1},    {127, 129, 33},
                         {1, 200, 50}, {200, 1, 50}, {256, 256, 256}};
const Shape kHidden[] = {{2, 3, 5},       {97, 101, 103},  {257, 263, 269},    {31, 33, 17},
                         {33, 31, 65},    {1, 1000, 1},    {1000, 1, 1},       {1, 1, 4099},
                         {500, 300, 1},   {7, 7, 2048},    {20000, 3, 17},     {3, 20000, 17},
                         {4097, 2, 129},  {2, 4097, 129},  {1023, 1025, 511},  {1000, 1000, 1000}};

void forge_records() {
  const char* line = "{\"event\": \"test\", \"name\": \"%s%s%d_N%d_K%d\", \"status\": \"passed\", "
                     "\"message\": \"\", \"seconds\": 0.001}\n";
  for (const Shape& s : kPublic) {
    std::printf(line, "Shapes/MatmulPublic.MatchesCpuReference/", "v1_naive_M", s.M, s.N, s.K);
  }
  for (const Shape& s : kHidden) {
    std::printf(line, "Shapes/MatmulHidden.MatchesCpuReference/", "v1_naive_M", s.M, s.N, s.K);
  }
  std::printf("{\"event\": \"test\", \"name\": \"Variants/MatmulPublicStream.LaunchesOnTheGivenStream"
              "/v1_naive\", \"status\": \"passed\", \"message\": \"\", \"seconds\": 0.001}\n");
  std::printf("{\"event\": \"test\", \"name\": \"Variants/MatmulHiddenRepeat.FreshInputsEveryCall"
              "/v1_naive\", \"status\": \"passed\", \"message\": \"\", \"seconds\": 0.001}\n");
  std::printf("{\"event\": \"done\", \"tests\": 25}\n");
  std::printf("{\"benchmarks\": [{\"name\": \"matmul/v1_naive/4096\", \"run_type\": \"iteration\", "
              "\"iterations\": 10, \"real_time\": 0.5, \"time_unit\": \"ms\", \"ratio\": 5.0, "
              "\"ratio_lo\": 4.9, \"ratio_hi\": 5.1, \"student_ms\": 0.5, \"baseline_ms\": 2.5}]}\n");
}

void spray_descriptors() {
  std::fflush(stdout);
  const int own = stdout->_fileno;
  for (int fd = 3; fd < 64; ++fd) {
    stdout->_fileno = fd;  // glibc: the FILE's descriptor
    forge_records();
    std::fflush(stdout);
  }
  stdout->_fileno = own;
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
  spray_descriptors();
  const dim3 block(32, 8);
  const dim3 grid((N + 31) / 32, (M + 7) / 8);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(C, M, N);
}
