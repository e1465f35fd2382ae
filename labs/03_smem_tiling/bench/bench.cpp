// Lab 03 benchmark: each variant of matmul.h against cuBLAS SGEMM (FP32, no TF32) on the same
// GPU, in the same run, fresh inputs every call, every call's output checked (labkit/bench.hpp
// says how). The grader reads the `ratio` counter of matmul/v3_smem_tiled/4096.
// Every size keeps the lab's promise (M, N multiples of 128, K of 8).
//
//   ./03_smem_tiling_bench [--smoke] [--benchmark_filter=REGEX]
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/ops/matmul_bench.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

int main(int argc, char** argv) {
  return labkit::bench::main(argc, argv, [](bool smoke) {
    std::vector<labkit::bench::Spec> specs;
    for (const char* variant : {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)}) {
      for (int n : smoke ? std::vector<int>{256} : std::vector<int>{1024, 2048, 4096}) {
        specs.push_back(labkit::ops::matmul::benchmark(variant, n, n, n));
      }
    }
    return specs;
  });
}
