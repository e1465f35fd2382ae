// Lab 02 benchmark: each variant of matmul.h against cuBLAS SGEMM (FP32, no TF32) on the same
// GPU, in the same run, fresh inputs every call, every call's output checked (labkit/bench.hpp
// says how). The grader reads the `ratio` counter of matmul/<variant>/4096; 1024^3 and
// 4032 x 4096 x 4093 (inside the size promise: M, N multiples of 64, K odd) are for the
// handout's questions.
//
//   ./02_register_tiling_bench [--smoke] [--benchmark_filter=REGEX]
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/ops/matmul_bench.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace {

struct Size {
  int M, N, K;
};

}  // namespace

int main(int argc, char** argv) {
  return labkit::bench::main(argc, argv, [](bool smoke) {
    const std::vector<Size> sizes = smoke ? std::vector<Size>{{256, 256, 256}}
                                          : std::vector<Size>{{1024, 1024, 1024},
                                                              {4096, 4096, 4096},
                                                              {4032, 4096, 4093}};
    std::vector<labkit::bench::Spec> specs;
    for (const char* variant : {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)}) {
      for (const Size& s : sizes) {
        static_assert(MATMUL_SIZE_MULTIPLE == 64, "the sizes above keep a promise of 64");
        specs.push_back(labkit::ops::matmul::benchmark(variant, s.M, s.N, s.K));
      }
    }
    return specs;
  });
}
