// Lab 04 benchmark: each variant of matmul.h against cuBLAS SGEMM (FP32, no TF32) on the same
// GPU, in the same run, fresh inputs every call, every call's output checked (labkit/bench.hpp
// says how). The grader reads the `ratio` counters of matmul/<variant>/4096 and
// matmul/<variant>/4095x4097x4093 (no size a multiple of anything: the edges and the scalar
// path of an optimized kernel are timed too).
//
//   ./04_boundary_bench [--smoke] [--benchmark_filter=REGEX]
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <array>
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/ops/matmul_bench.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

int main(int argc, char** argv) {
  return labkit::bench::main(argc, argv, [](bool smoke) {
    using MNK = std::array<int, 3>;
    const std::vector<MNK> sizes = smoke ? std::vector<MNK>{{256, 256, 256}, {255, 257, 253}}
                                         : std::vector<MNK>{{1024, 1024, 1024},
                                                            {4096, 4096, 4096},
                                                            {4095, 4097, 4093}};
    std::vector<labkit::bench::Spec> specs;
    for (const char* variant : {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)}) {
      for (const MNK& s : sizes) {
        specs.push_back(labkit::ops::matmul::benchmark(variant, s[0], s[1], s[2]));
      }
    }
    return specs;
  });
}
