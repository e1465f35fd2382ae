// Lab 10 benchmark: each variant of gemm.h, FP16 and BF16 inputs, against cuBLAS GemmEx with
// FP32 accumulation on tensor cores (CUBLAS_COMPUTE_32F) on the same GPU, in the same run,
// fresh inputs every call, every call's output checked (labkit/bench.hpp says how). The grader
// reads the `ratio` counters of matmul/<variant>/<dtype>/4096 and .../8192x8192x4096.
//
//   ./10_tensor_core_gemm_bench [--smoke] [--benchmark_filter=REGEX]
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <array>
#include <vector>

#include "gemm.h"
#include "labkit/bench.hpp"
#include "labkit/ops/matmul_bench.hpp"
#include "labkit/worker.hpp"

int main(int argc, char** argv) {
  return labkit::bench::main(argc, argv, [](bool smoke) {
    using MNK = std::array<int, 3>;
    const std::vector<MNK> sizes =
        smoke ? std::vector<MNK>{{256, 256, 256}, {384, 128, 96}}
              : std::vector<MNK>{{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 4096}};
    std::vector<labkit::bench::Spec> specs;
    for (const char* variant : {GEMM_VARIANTS(LABKIT_VARIANT_NAME)}) {
      for (const labkit::DType dtype : {labkit::DType::kF16, labkit::DType::kBF16}) {
        for (const MNK& s : sizes) {
          specs.push_back(labkit::ops::matmul::benchmark(variant, s[0], s[1], s[2], dtype));
        }
      }
    }
    return specs;
  });
}
