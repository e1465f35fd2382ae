// The matmul op family, benchmark side: the cuBLAS SGEMM baseline (pure FP32, no TF32) on the
// same fresh inputs as every timed student call, and the check of each call's C against it.
#pragma once

#include <string>

#include "labkit/bench.hpp"

namespace labkit::ops::matmul {

// "matmul/<variant>/<n>" for square shapes, "matmul/<variant>/<M>x<N>x<K>" otherwise.
bench::Spec benchmark(const std::string& variant, int M, int N, int K);

}  // namespace labkit::ops::matmul
