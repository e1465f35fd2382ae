// Lab 06 benchmark: each version of spmv.h against cuSPARSE's cusparseSpMV (CSR, FP32) on the
// same GPU, in the same run, on the same matrices (labkit/bench.hpp, ops/spmv_bench.hpp):
// the pattern is uploaded once per matrix, values and x are drawn fresh before every timed
// call, and every call's y is checked against cuSPARSE's. GBps counts the minimum bytes
// (4 nnz values + 4 nnz col_idx + 4 (rows + 1) row_ptr + 4 cols x + 4 rows y).
//
// The matrices, about 4M rows each (made on the CPU when the program starts: a few seconds),
// drawn from the grading's seed:
//   laplacian   the 2D 5-point Laplacian of a grid of 1985-2048 x 1985-2048 (5 per row, banded),
//               each row's columns in random order, as in the hidden test of its class: a
//               kernel that computes the stencil's columns instead of reading them, and checks
//               a sample against col_idx, finds them out of order on every row it checks
//   uniform32   4M x 4M, 32 random columns per row
//   powerlaw    4M x 4M, power-law row lengths (alpha 2.2, 4 to 2^20 per row)
//   denserow    4M x 4M, 1-16 per row and one row (anywhere) holding every column
//
//   ./06_spmv_bench [--smoke] [--benchmark_filter=REGEX] [--labkit-matrix=FILE.mtx ...]
// --labkit-matrix adds a real matrix (Matrix Market, coordinate; its pattern, fresh values),
// named after the file: spmv/<version>/mtx_<file name>. Repeat it for several files.
// Exit status: 0 all ran and were right, 1 an error, 2 bad flags or file, 77 no GPU (skipped).
#include <cstdio>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/ops/spmv_bench.hpp"
#include "labkit/ops/spmv_matrix.hpp"
#include "labkit/random.hpp"
#include "labkit/worker.hpp"
#include "spmv.h"

namespace sp = labkit::ops::spmv;

namespace {

using Named = std::pair<std::string, std::shared_ptr<const sp::Csr>>;

// The instances are drawn from the grading's seed (the Laplacian's grid, the dense row's
// place, every random pattern): nothing about them can be known before the grading.
std::vector<Named> generated(bool smoke) {
  const uint64_t kSeed = labkit::mix_seed(labkit::test_seed(), 0x5B3E5B3Eull);
  if (smoke) {
    return {{"laplacian", std::make_shared<const sp::Csr>(sp::laplacian_2d(100, 101))},
            {"uniform32", std::make_shared<const sp::Csr>(sp::uniform_random(10007, 10007, 32, 32, kSeed))},
            {"powerlaw", std::make_shared<const sp::Csr>(sp::power_law(10007, 10007, 2.2, 4, 10007, kSeed))},
            {"denserow", std::make_shared<const sp::Csr>(sp::one_dense_row(10007, 10007, 1, 16, 5003, 10007, kSeed))}};
  }
  const int32_t n = 1 << 22;
  const int32_t gx = 2048 - static_cast<int32_t>(kSeed % 64), gy = 2048 - static_cast<int32_t>((kSeed >> 8) % 64);
  const int32_t dense = static_cast<int32_t>(labkit::hash64(kSeed, 1) % n);
  // Made side by side: each is filled over the cores, but its row lengths are drawn in order.
  auto make = [](auto fn) { return std::async(std::launch::async, [fn] { return std::make_shared<const sp::Csr>(fn()); }); };
  auto laplacian = make([=] {
    return sp::shuffled_within_rows(sp::laplacian_2d(gx, gy), labkit::mix_seed(kSeed, 0x1A91ACEull));
  });
  auto uniform32 = make([=] { return sp::uniform_random(n, n, 32, 32, kSeed); });
  auto powerlaw = make([=] { return sp::power_law(n, n, 2.2, 4, 1 << 20, kSeed); });
  auto denserow = make([=] { return sp::one_dense_row(n, n, 1, 16, dense, n, kSeed); });
  return {{"laplacian", laplacian.get()},
          {"uniform32", uniform32.get()},
          {"powerlaw", powerlaw.get()},
          {"denserow", denserow.get()}};
}

}  // namespace

int main(int argc, char** argv) {
  // Our own flag, taken out before the harness and Google Benchmark read the rest.
  std::vector<std::string> files;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* flag = "--labkit-matrix=";
    if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) {
      files.emplace_back(argv[i] + std::strlen(flag));
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  std::vector<Named> real;
  for (const std::string& f : files) {
    try {
      real.emplace_back("mtx_" + std::filesystem::path(f).stem().string(),
                        std::make_shared<const sp::Csr>(sp::read_matrix_market_file(f)));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
      return 2;
    }
  }
  return labkit::bench::main(argc, argv, [real](bool smoke) {
    const auto started = std::chrono::steady_clock::now();
    std::vector<Named> all = generated(smoke);
    std::fprintf(stderr, "matrices made in %.1f s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    all.insert(all.end(), real.begin(), real.end());
    std::vector<labkit::bench::Spec> specs;
    for (const auto& [name, m] : all) {
      std::fprintf(stderr, "matrix %s: %d x %d, nnz %lld\n", name.c_str(), m->rows, m->cols,
                   static_cast<long long>(m->nnz()));
      for (const char* variant : {SPMV_VARIANTS(LABKIT_VARIANT_NAME)}) {
        specs.push_back(sp::benchmark(variant, name, m,
                                      spmv_workspace_bytes(static_cast<size_t>(m->rows),
                                                           static_cast<size_t>(m->nnz()))));
      }
    }
    return specs;
  });
}
