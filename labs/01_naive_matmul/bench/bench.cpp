// Lab 01 benchmark: each variant in matmul.h against cuBLAS SGEMM on the same GPU, in the
// same run, interleaved call by call (each after an L2 flush; the output re-poisoned before
// every student call). The output is checked against cuBLAS before and after timing: a wrong
// result reports an error, never a time.
//
// Counters (per benchmark, in the JSON the grader reads):
//   GFLOPS, cublas_GFLOPS   2*M*N*K / median time
//   ratio                   cublas median time / student median time (1.0 = as fast as cuBLAS)
//   student_ms, cublas_ms   medians; *_iqr: relative spread of the middle half
//
//   ./01_naive_matmul_bench [--smoke] [--benchmark_format=json] ...
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "labkit/bench.hpp"
#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/gpu.hpp"
#include "labkit/matmul_reference.hpp"
#include "labkit/random.hpp"
#include "matmul.h"

namespace {

bool g_failed = false;

#define CUBLAS_CHECK(expr)                                                               \
  do {                                                                                   \
    const cublasStatus_t status_ = (expr);                                               \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                              \
      throw std::runtime_error(std::string(#expr) + " failed: " +                        \
                               cublasGetStatusName(status_));                            \
    }                                                                                    \
  } while (0)

class Cublas {
 public:
  explicit Cublas(cudaStream_t stream) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetStream(handle_, stream));
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));  // true FP32, no TF32
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Row-major C = A * B through column-major cuBLAS: C^T = B^T * A^T.
  void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A, K, &zero,
                             C, N));
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

class Stream {
 public:
  // A blocking stream: work a launcher sends to the legacy default stream by mistake is
  // ordered between the timing events too, so it is timed rather than missed.
  Stream() { CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Compares the student's C with cuBLAS's, allowing both their float32 rounding.
std::string check_against_cublas(const labkit::DeviceBuffer<float>& got,
                                 const labkit::DeviceBuffer<float>& base,
                                 const labkit::DeviceBuffer<float>& abs_product, int M, int N,
                                 int K) {
  const std::vector<float> b = base.download(), ab = abs_product.download();
  const std::vector<double> ref(b.begin(), b.end()), abs_ab(ab.begin(), ab.end());
  // Both sides carry float32 rounding: twice the test bound.
  const std::vector<double> bound = labkit::matmul_bounds(abs_ab, K, 2 * labkit::kMatmulBoundC);
  const labkit::CompareResult r = labkit::compare_matrix(got.download(), ref, bound, M, N);
  return r.ok() ? "" : r.report();
}

void bench_matmul(benchmark::State& state, MatmulVariant variant, int n, int warmup) {
  const int M = n, N = n, K = n;
  const size_t count = static_cast<size_t>(n) * n;
  try {
    Stream stream;
    Cublas cublas(stream);
    // Two input sets, alternated call by call: a launcher that caches a result between calls
    // (or skips work it thinks it has done) is caught by the check after timing.
    struct Inputs {
      labkit::DeviceBuffer<float> A, B, base, abs_product;
    };
    std::vector<Inputs> sets;
    for (uint64_t set = 0; set < 2; ++set) {
      std::vector<float> A = labkit::random_floats(count, labkit::mix_seed(n, 2 * set + 1));
      std::vector<float> B = labkit::random_floats(count, labkit::mix_seed(n, 2 * set + 2));
      Inputs in{labkit::DeviceBuffer<float>(A), labkit::DeviceBuffer<float>(B),
                labkit::DeviceBuffer<float>(count), labkit::DeviceBuffer<float>(count)};
      for (auto& v : A) v = std::fabs(v);
      for (auto& v : B) v = std::fabs(v);
      const labkit::DeviceBuffer<float> absA(A), absB(B);
      cublas.matmul(absA.get(), absB.get(), in.abs_product.get(), M, N, K);
      cublas.matmul(in.A.get(), in.B.get(), in.base.get(), M, N, K);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      sets.push_back(std::move(in));
    }
    labkit::DeviceBuffer<float> dC(count), dScratch(count);

    size_t current = 0;  // the set the next student call uses
    const auto poison = [&] { CUDA_CHECK(cudaMemsetAsync(dC.get(), 0xFF, dC.bytes(), stream)); };
    const auto student = [&] {
      const Inputs& in = sets[current];
      variant.fn(in.A.get(), in.B.get(), dC.get(), M, N, K, stream);
      current = 1 - current;
    };
    const auto baseline = [&] {
      const Inputs& in = sets[current];
      cublas.matmul(in.A.get(), in.B.get(), dScratch.get(), M, N, K);
    };
    const auto check = [&](const char* when) {
      CUDA_CHECK(cudaStreamSynchronize(stream));
      const Inputs& last = sets[1 - current];  // the set of the last student call
      const std::string wrong = check_against_cublas(dC, last.base, last.abs_product, M, N, K);
      if (wrong.empty()) return true;
      g_failed = true;
      state.SkipWithError((std::string("output differs from cuBLAS ") + when + ": " + wrong).c_str());
      return false;
    };

    // Check before timing (the first call is also a warm-up).
    poison();
    student();
    LABKIT_CHECK_LAUNCH();
    if (!check("before timing")) return;

    labkit::L2Flusher flusher;
    const labkit::PairTimes t = labkit::time_interleaved(
        stream, student, baseline, poison, warmup, static_cast<int>(state.max_iterations),
        &flusher);
    if (!check("after timing")) return;

    size_t i = 0;
    for (auto _ : state) state.SetIterationTime(t.student_ms[i++] / 1e3);

    const double flop = 2.0 * M * N * K;
    const double s_ms = labkit::median(t.student_ms), b_ms = labkit::median(t.baseline_ms);
    state.counters["GFLOPS"] = flop / (s_ms * 1e-3) / 1e9;
    state.counters["cublas_GFLOPS"] = flop / (b_ms * 1e-3) / 1e9;
    state.counters["ratio"] = b_ms / s_ms;
    state.counters["student_ms"] = s_ms;
    state.counters["cublas_ms"] = b_ms;
    state.counters["student_iqr"] = labkit::relative_iqr(t.student_ms);
    state.counters["cublas_iqr"] = labkit::relative_iqr(t.baseline_ms);
  } catch (const std::exception& e) {
    g_failed = true;
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      smoke = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!labkit::gpu_status().available) {
    std::fprintf(stderr, "no CUDA GPU: %s; benchmark skipped\n",
                 labkit::gpu_status().reason.c_str());
    return 77;
  }
  std::fprintf(stderr, "GPU: %s\n", labkit::gpu_summary().c_str());

  struct Size {
    int n, iterations;
  };
  const std::vector<Size> sizes =
      smoke ? std::vector<Size>{{256, 3}} : std::vector<Size>{{1024, 20}, {4096, 10}};
  for (const MatmulVariant& variant : kMatmulVariants) {
    for (const Size& size : sizes) {
      const std::string name = std::string("matmul/") + variant.name + "/" + std::to_string(size.n);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [variant, size](benchmark::State& state) {
                                     bench_matmul(state, variant, size.n, 2);
                                   })
          ->UseManualTime()
          ->Iterations(size.iterations)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return g_failed ? 1 : 0;
}
