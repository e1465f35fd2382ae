#include "labkit/matmul.hpp"

#include <cmath>
#include <sstream>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/random.hpp"

namespace labkit {

namespace {

std::string where(const std::string& name, const MatmulCase& c, int call) {
  std::ostringstream os;
  os << name << " on M=" << c.M << " N=" << c.N << " K=" << c.K;
  if (c.calls > 1) os << " (call " << call + 1 << " of " << c.calls << ", fresh inputs each)";
  os << " [seed " << c.seed << "]";
  return os.str();
}

// Records the launcher's work on `stream` into a graph and replays it. Returns "" or what
// went wrong: work sent elsewhere (the legacy default stream), synchronous calls (cudaMemcpy,
// cudaMalloc, cudaDeviceSynchronize) or nothing enqueued at all.
std::string launch_captured(MatmulLauncher fn, float* A, float* B, float* C, const MatmulCase& c,
                            cudaStream_t stream) {
  const char* rule =
      "\n  the launcher must enqueue its kernel(s) on the `stream` it is given and nothing else: "
      "no launch on the default stream (<<<grid, block, 0, stream>>>), no cudaMemcpy, "
      "cudaMalloc or synchronization inside it";
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  fn(A, B, C, c.M, c.N, c.K, stream);
  const cudaError_t during = cudaGetLastError();
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream, &graph);
  cudaGetLastError();  // capture errors are not sticky; clear them
  struct GraphGuard {
    cudaGraph_t g;
    ~GraphGuard() {
      if (g != nullptr) cudaGraphDestroy(g);
    }
  } graph_guard{graph};
  if (during != cudaSuccess || end != cudaSuccess || graph == nullptr) {
    return "recording the launcher into a CUDA graph failed: " +
           describe(during != cudaSuccess ? during : end) + rule;
  }
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  if (nodes == 0) return std::string("the launcher put no work on its stream") + rule;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const cudaError_t run = cudaGraphLaunch(exec, stream);
  const cudaError_t sync = cudaStreamSynchronize(stream);
  cudaGraphExecDestroy(exec);
  if (run != cudaSuccess || sync != cudaSuccess) {
    return "replaying the recorded launch failed: " + describe(run != cudaSuccess ? run : sync);
  }
  return "";
}

}  // namespace

std::string replay_hint() {
  std::ostringstream os;
  os << "  replay: LABKIT_SEED=" << test_seed() << " <this lab's _test binary>";
  if (const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    os << " --gtest_filter='" << info->test_suite_name() << "." << info->name() << "'";
  }
  os << "\n";
  return os.str();
}

::testing::AssertionResult check_matmul(MatmulLauncher fn, const std::string& name,
                                        const MatmulCase& c) {
  const size_t a_count = static_cast<size_t>(c.M) * c.K;
  const size_t b_count = static_cast<size_t>(c.K) * c.N;
  const size_t c_count = static_cast<size_t>(c.M) * c.N;

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } stream_guard{stream};

  GuardedBuffer<float> dA(a_count), dB(b_count), dC(c_count);
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    const std::vector<float> A = random_floats(a_count, mix_seed(seed, 1));
    const std::vector<float> B = random_floats(b_count, mix_seed(seed, 2));
    dA.upload(A);
    dB.upload(B);
    dC.poison();

    if (c.capture) {
      const std::string problem = launch_captured(fn, dA.get(), dB.get(), dC.get(), c, stream);
      if (!problem.empty()) {
        return ::testing::AssertionFailure() << where(name, c, call) << ": " << problem;
      }
    } else {
      fn(dA.get(), dB.get(), dC.get(), c.M, c.N, c.K, stream);
    }
    const cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess) {
      return ::testing::AssertionFailure()
             << where(name, c, call) << ": the launch failed: " << describe(launch)
             << "\n  check the grid and block shape your launcher computes for this size "
             << "(at most 1024 threads per block, every grid dimension >= 1, grid.y and grid.z "
             << "<= 65535)";
    }
    const cudaError_t run = cudaStreamSynchronize(stream);
    if (run != cudaSuccess) {
      return ::testing::AssertionFailure()
             << where(name, c, call) << ": the kernel failed while running: " << describe(run)
             << "\n  an illegal address usually means an index past the end of A, B or C "
             << "(bounds guard, row/col mix-up, K loop bounds)";
    }
    const cudaError_t device_sync = cudaDeviceSynchronize();  // work left on other streams
    if (device_sync != cudaSuccess) {
      return ::testing::AssertionFailure()
             << where(name, c, call) << ": the device reported an error: " << describe(device_sync);
    }

    std::vector<double> abs_product;
    const std::vector<double> ref = matmul_reference(A, B, c.M, c.N, c.K, &abs_product);
    const CompareResult result =
        compare_matrix(dC.download(), ref, matmul_bounds(abs_product, c.K), c.M, c.N);
    const std::string guards = describe_guards(dC.check_guards(), "C", c.M, c.N);
    const std::string a_guards = describe_guards(dA.check_guards(), "A", c.M, c.K);
    const std::string b_guards = describe_guards(dB.check_guards(), "B", c.K, c.N);
    const bool inputs_intact = dA.download() == A && dB.download() == B;

    if (!result.ok() || !guards.empty() || !a_guards.empty() || !b_guards.empty() ||
        !inputs_intact) {
      auto failure = ::testing::AssertionFailure();
      failure << where(name, c, call) << ": ";
      if (!result.ok()) failure << result.report();
      failure << guards << a_guards << b_guards;
      if (!inputs_intact) failure << "the kernel changed its inputs A or B (they are read-only)\n";
      if (result.ok() && guards.empty()) failure << "(every element of C is right)\n";
      failure << replay_hint();
      return failure;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace labkit
