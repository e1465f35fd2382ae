// Shared by every matmul lab: the CPU reference in double, the float32 error bound, and one
// call that runs a student's matmul on fresh inputs and explains any mismatch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace labkit {

// C = A * B in double, row-major. Also returns (|A||B|)_ij in `abs_product` when non-null.
std::vector<double> matmul_reference(const std::vector<float>& A, const std::vector<float>& B,
                                     int M, int N, int K,
                                     std::vector<double>* abs_product = nullptr);

// The float32 bound: c * sqrt(K) * 2^-24 * (|A||B|)_ij. A correct kernel measures near 0.07 of
// it with c = 1; a dropped k term lands in the hundreds.
inline constexpr double kMatmulBoundC = 4.0;
std::vector<double> matmul_bounds(const std::vector<double>& abs_product, int K,
                                  double c = kMatmulBoundC);

using MatmulLauncher = void (*)(const float*, const float*, float*, int, int, int, cudaStream_t);

struct MatmulCase {
  int M = 1, N = 1, K = 1;
  uint64_t seed = 1;
  int calls = 1;         // > 1: call again on fresh inputs each time, check every result
  bool capture = false;  // call the launcher under CUDA graph capture of its stream, then
                         // replay the graph: proves all its work goes onto `stream`
};

// Runs `fn` on random A, B (from the seed), poisoned C with canary zones, and checks
// the launch, the run, every element of C, the canaries, and that A and B are unchanged.
// On failure the message says what, where, and how to replay it.
::testing::AssertionResult check_matmul(MatmulLauncher fn, const std::string& name,
                                        const MatmulCase& c);

// "  replay: LABKIT_SEED=<seed> <this lab's _test binary> --gtest_filter='<current test>'"
std::string replay_hint();

// "M127_N129_K33": a test-name-safe shape label.
std::string shape_label(int M, int N, int K);

}  // namespace labkit

// Records a failure with just the check's own message (no "Value of: ... Actual: false").
#define LABKIT_EXPECT_OK(check)                                        \
  do {                                                                 \
    const ::testing::AssertionResult labkit_result_ = (check);         \
    if (!labkit_result_) ADD_FAILURE() << labkit_result_.message();    \
  } while (0)
