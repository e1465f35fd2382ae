// The matmul op family, benchmark side: the cuBLAS baseline (SGEMM, pure FP32, no TF32; for
// 16-bit inputs GemmEx with FP32 accumulation) on the same fresh inputs as every timed student
// call, and the check of each call's C against it.
#pragma once

#include <string>

#include "labkit/bench.hpp"
#include "labkit/dtype.hpp"

namespace labkit::ops::matmul {

// "matmul/<variant>/<n>" for square shapes, "matmul/<variant>/<M>x<N>x<K>" otherwise; with
// 16-bit inputs (lab 10) the type before the size: "matmul/<variant>/f16/4096".
bench::Spec benchmark(const std::string& variant, int M, int N, int K, DType in = DType::kF32);

}  // namespace labkit::ops::matmul
