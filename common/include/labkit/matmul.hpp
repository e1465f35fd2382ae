// Shared by every matmul lab's tests: one call that runs a student's matmul on fresh inputs
// and explains any mismatch (the reference and bound are in matmul_reference.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/matmul_reference.hpp"

namespace labkit {

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

}  // namespace labkit

// Records a failure with just the check's own message (no "Value of: ... Actual: false").
#define LABKIT_EXPECT_OK(check)                                        \
  do {                                                                 \
    const ::testing::AssertionResult labkit_result_ = (check);         \
    if (!labkit_result_) ADD_FAILURE() << labkit_result_.message();    \
  } while (0)
