#include "labkit/ops/conv_bench.hpp"

#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/conv_dist.hpp"

namespace labkit::ops::conv {
namespace {

// The loaded cuDNN's version (cudnnGetVersion: major * 10000 + minor * 100 + patch).
std::string cudnn_version() {
  const size_t v = cudnnGetVersion();
  return bench::version_text(static_cast<int>(v / 10000), static_cast<int>(v % 10000 / 100),
                             static_cast<int>(v % 100));
}

// The benchmark's reference: the same convolution in double, by cuDNN (CUDNN_DATA_DOUBLE, a
// GEMM-based algorithm: each output a sum of its products in double), y = conv(x, w) and, for
// the bound, sq = conv(x^2, w^2) (the sum of (w x)^2). Not a kernel of this repository: a direct
// convolution written here would ship in every student release, a lab 07 answer in working code
// (docs/release.md, "Judge-side kernels"); cuDNN is what lab 07's policy refuses.
class DoubleReference {
 public:
  explicit DoubleReference(const Shape& s) : s_(s), xd_(s.x_count()), wd_(s.w_count()) {
    CUDNN_CHECK(cudnnCreate(&handle_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc_));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE,
                                           int(s.n), int(s.c_in), int(s.h), int(s.w)));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW,
                                           int(s.c_out), int(s.c_in), int(s.k), int(s.k)));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_desc_, int(s.pad), int(s.pad), int(s.stride),
                                                int(s.stride), 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_DOUBLE));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE,
                                           int(s.n), int(s.c_out), int(s.h_out()),
                                           int(s.w_out())));
    // cuDNN's heuristics (nothing run): the first GEMM-based algorithm it supports here.
    int max_algos = 0, returned = 0;
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &max_algos));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_algos, 1));
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, x_desc_, w_desc_, conv_desc_,
                                                       y_desc_, int(perf.size()), &returned,
                                                       perf.data()));
    bool found = false;
    for (int i = 0; i < returned && !found; ++i) {
      const auto& p = perf[i];
      const bool gemm = p.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
                        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
                        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM ||
                        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
      size_t bytes = 0;
      if (p.status == CUDNN_STATUS_SUCCESS && gemm &&
          cudnnGetConvolutionForwardWorkspaceSize(handle_, x_desc_, w_desc_, conv_desc_, y_desc_,
                                                  p.algo, &bytes) == CUDNN_STATUS_SUCCESS) {
        algo_ = p.algo;
        workspace_ = DeviceBuffer<char>(std::max<size_t>(bytes, 1));
        workspace_bytes_ = bytes;
        found = true;
      }
    }
    if (!found) {
      throw std::runtime_error("cuDNN has no GEMM-based double-precision algorithm for the "
                               "reference of " + s.describe());
    }
  }

  ~DoubleReference() {
    cudnnDestroyConvolutionDescriptor(conv_desc_);
    cudnnDestroyFilterDescriptor(w_desc_);
    cudnnDestroyTensorDescriptor(y_desc_);
    cudnnDestroyTensorDescriptor(x_desc_);
    cudnnDestroy(handle_);
  }
  DoubleReference(const DoubleReference&) = delete;
  DoubleReference& operator=(const DoubleReference&) = delete;

  // y[...] and sq[...] (device, y_count each) of float inputs x and w; synchronises.
  void compute(const float* x, const float* w, double* y, double* sq, cudaStream_t st) {
    for (const bool square : {false, true}) {
      to_f64(x, xd_.get(), xd_.size(), square, st);
      to_f64(w, wd_.get(), wd_.size(), square, st);
      const double one = 1.0, zero = 0.0;
      CUDNN_CHECK(cudnnSetStream(handle_, st));
      CUDNN_CHECK(cudnnConvolutionForward(handle_, &one, x_desc_, xd_.get(), w_desc_, wd_.get(),
                                          conv_desc_, algo_, workspace_.get(), workspace_bytes_,
                                          &zero, y_desc_, square ? sq : y));
    }
    CUDA_CHECK(cudaStreamSynchronize(st));
  }

 private:
  Shape s_;
  DeviceBuffer<double> xd_, wd_;
  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;
  DeviceBuffer<char> workspace_{1};
};

// cuDNN forward convolution, FP32 data and compute, CUDNN_FMA_MATH: FMA kernels only (no
// tensor cores, no TF32). The algorithm: chosen once per shape by timing cudnnFind's GEMM-based
// FMA candidates (choose_algorithm); its workspace allocated once; each call replayed as a CUDA
// graph where cuDNN allows it.
class CudnnConv : public bench::Baseline {
 public:
  explicit CudnnConv(const Shape& s)
      : s_(s), x_(s.x_count()), w_(s.w_count()), y_(s.y_count()), ref_(s.y_count()),
        sq_ref_(s.y_count()) {
    CUDNN_CHECK(cudnnCreate(&handle_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&x_desc_));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&y_desc_));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&w_desc_));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv_desc_));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(x_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, int(s.n),
                                           int(s.c_in), int(s.h), int(s.w)));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                           int(s.c_out), int(s.c_in), int(s.k), int(s.k)));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv_desc_, int(s.pad), int(s.pad), int(s.stride),
                                                int(s.stride), 1, 1, CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, CUDNN_FMA_MATH));
    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_, w_desc_, &n, &c, &h, &w));
    if (n != s.n || c != s.c_out || h != s.h_out() || w != s.w_out()) {
      throw std::runtime_error("cuDNN's output shape differs from the lab's for " + s.describe());
    }
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(y_desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));

    choose_algorithm();
  }

  ~CudnnConv() override {
    cudnnDestroyConvolutionDescriptor(conv_desc_);
    cudnnDestroyFilterDescriptor(w_desc_);
    cudnnDestroyTensorDescriptor(y_desc_);
    cudnnDestroyTensorDescriptor(x_desc_);
    cudnnDestroy(handle_);
  }

  // The judge's draw (kSourceX, kSourceW): the tests' distribution (conv_dist.hpp).
  void prepare(uint64_t seed, cudaStream_t st) override {
    fill_source(x_.get(), kSourceX, x_.size(), protocol::buffer_seed(seed, Sig::kX), 0, 0, st,
                size_t(s_.h * s_.w));
    fill_source(w_.get(), kSourceW, w_.size(), protocol::buffer_seed(seed, Sig::kW), 0, 0, st,
                size_t(s_.k * s_.k));
  }

  void run(cudaStream_t st) override {
    if (graph_ != nullptr) {
      CUDA_CHECK(cudaGraphLaunch(graph_.get(), st));
    } else {
      forward(x_.get(), w_.get(), y_.get(), st);
    }
  }

  // The student's y against the same inputs convolved in double on the GPU, with the tests'
  // bound (not cuDNN's float y: its own rounding would have to be allowed for too).
  bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t st) override {
    if (outputs.size() <= Sig::kY || outputs[Sig::kY] == nullptr) return false;
    reference(st);
    return count_beyond_walk_bound(static_cast<const float*>(outputs[Sig::kY]), ref_.get(),
                                   sq_ref_.get(),
                                   s_.y_count(), conv_bound_scale(s_), st) == 0;
  }

  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t st) override {
    if (outputs.size() <= Sig::kY || outputs[Sig::kY].size() != s_.y_count() * sizeof(float)) {
      return "the output y has the wrong size";
    }
    const Bytes& y = outputs[Sig::kY];
    std::vector<float> got(s_.y_count());
    std::memcpy(got.data(), y.data(), y.size());
    reference(st);
    const std::vector<double> ref = ref_.download(), sq = sq_ref_.download();
    const std::vector<double> bound = conv_bounds(ref, sq, s_);
    // The common case (all right) is a parallel pass; the full report only when it is not.
    if (all_within(got, ref, bound)) return "";
    const NchwLayout layout{size_t(s_.n), size_t(s_.c_out), size_t(s_.h_out()), size_t(s_.w_out()),
                            size_t((s_.pad + s_.stride - 1) / s_.stride), size_t(s_.stride), "y"};
    const CompareResult r = compare_nchw(observe(y, DType::kF32), ref, bound, layout);
    return r.ok() ? "" : r.report();
  }

 private:
  // This call's inputs convolved in double on the GPU, and their squares (for the bound):
  // DoubleReference, made at the first check.
  void reference(cudaStream_t st) {
    if (!double_ref_) double_ref_ = std::make_unique<DoubleReference>(s_);
    double_ref_->compute(x_.get(), w_.get(), ref_.get(), sq_ref_.get(), st);
  }

  // The algorithm, chosen the same way in every process. cudnnFind times each algorithm once,
  // and its pick for the 56x56 3x3 layer changed between runs on an H200 (implicit GEMM or FFT
  // tiling; 41 against 24 TFLOP/s in the benchmark), which moved that layer's grade. So
  // cudnnFind only proposes: every GEMM-based FMA algorithm it ran (workspace <= kMaxWorkspace)
  // is replayed here as a graph, kTrials calls after kWarmup, each on non-zero inputs after an
  // L2 flush, and timed on the GPU alone: the flush is still running when the call is
  // enqueued, so the host (other gradings building beside this one) is out of the window. Of
  // the algorithms within kTie of the fastest median, the lowest-numbered wins, so two
  // near-equal algorithms do not take turns between gradings (on an H100 under a batch's builds, the 3x3 layers'
  // baseline moved 0.19-0.33 ms between gradings when each candidate was timed from an idle
  // GPU and each call enqueued inside its window).
  void choose_algorithm() {
    constexpr size_t kMaxWorkspace = size_t(2) << 30;
    constexpr int kWarmup = 2, kTrials = 7;
    constexpr double kTie = 0.03;
    int max_algos = 0, returned = 0;
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &max_algos));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max_algos, 1));
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(handle_, x_desc_, w_desc_, conv_desc_, y_desc_,
                                                     int(perf.size()), &returned, perf.data()));
    // Candidates: timed with FMA math (or the default math: the descriptor stays FMA, so no
    // tensor cores either way), once per algorithm, and GEMM-based: the direct convolution the
    // lab teaches, the same 2 D P C_out multiply-adds. FFT and Winograd do fewer (on an H100,
    // replayed as a graph, FFT tiling ran the 56x56 3x3 layer at 59 "effective" TFLOP/s, above
    // the FP32 peak): a different algorithm, which a submission may also write (the lab's
    // plausibility line allows Winograd's factor), but not the yardstick of the targets.
    std::vector<cudnnConvolutionFwdAlgoPerf_t> candidates;
    for (int i = 0; i < returned; ++i) {
      const auto& p = perf[i];
      const bool gemm = p.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
                        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
                        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_GEMM ||
                        p.algo == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
      const bool math_ok =
          gemm && (p.mathType == CUDNN_FMA_MATH || p.mathType == CUDNN_DEFAULT_MATH);
      const bool seen = std::any_of(candidates.begin(), candidates.end(),
                                    [&](const auto& c) { return c.algo == p.algo; });
      if (p.status == CUDNN_STATUS_SUCCESS && math_ok && p.memory <= kMaxWorkspace && !seen) {
        candidates.push_back(p);
      }
    }
    if (candidates.empty()) {
      throw std::runtime_error("cuDNN has no GEMM-based FP32 FMA algorithm for " + s_.describe());
    }
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv_desc_, CUDNN_FMA_MATH));

    cudaStream_t raw = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking));
    const std::unique_ptr<CUstream_st, cudaError_t (*)(cudaStream_t)> owned(raw, cudaStreamDestroy);
    cudaStream_t stream = raw;
    L2Flusher flusher;
    EventTimer timer(stream);
    prepare(0x5eedc0de, stream);
    std::vector<double> medians;
    for (const auto& c : candidates) {
      use(c, stream);
      std::vector<double> ms;
      for (int t = 0; t < kWarmup + kTrials; ++t) {
        flusher.flush(stream);  // not waited for: the GPU is busy while the call is enqueued
        const double call_ms = timer.time_ms([&] { run(stream); });
        if (t >= kWarmup) ms.push_back(call_ms);
      }
      medians.push_back(median(ms));
    }
    const double fastest = *std::min_element(medians.begin(), medians.end());
    size_t pick = candidates.size();
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (medians[i] <= fastest * (1 + kTie) &&
          (pick == candidates.size() || candidates[i].algo < candidates[pick].algo)) {
        pick = i;
      }
    }
    use(candidates[pick], stream);
    std::fprintf(stderr,
                 "cuDNN baseline for %s: algorithm %d of %zu timed (median %.3f ms on the GPU, "
                 "fastest %.3f ms; workspace %zu B; %s)\n",
                 s_.describe().c_str(), int(algo_), candidates.size(), medians[pick], fastest,
                 workspace_bytes_,
                 graph_ != nullptr ? "replayed as a CUDA graph" : "called directly");
  }

  // Makes `c` the algorithm run() runs: its workspace, and its call captured as a graph where
  // cuDNN allows (one launch: cuDNN's host work between its kernels stays out of the timed
  // window, as the student's worker makes one call). Else run() calls cuDNN directly.
  void use(const cudnnConvolutionFwdAlgoPerf_t& c, cudaStream_t stream) {
    graph_.reset();
    algo_ = c.algo;
    workspace_bytes_ = c.memory;
    workspace_ = DeviceBuffer<char>(std::max<size_t>(workspace_bytes_, 1));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetStream(handle_, stream));
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const cudnnStatus_t status = cudnnConvolutionForward(
        handle_, &one, x_desc_, x_.get(), w_desc_, w_.get(), conv_desc_, algo_, workspace_.get(),
        workspace_bytes_, &zero, y_desc_, y_.get());
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    const std::unique_ptr<CUgraph_st, cudaError_t (*)(cudaGraph_t)> owned(graph, cudaGraphDestroy);
    cudaGraphExec_t exec = nullptr;
    if (status == CUDNN_STATUS_SUCCESS && ended == cudaSuccess && graph != nullptr &&
        cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
      graph_.reset(exec);
    }
    (void)cudaGetLastError();  // a refused capture is not an error: run() calls cuDNN directly
  }

  void forward(const float* x, const float* w, float* y, cudaStream_t st) {
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetStream(handle_, st));
    CUDNN_CHECK(cudnnConvolutionForward(handle_, &one, x_desc_, x, w_desc_, w, conv_desc_, algo_,
                                        workspace_.get(), workspace_bytes_, &zero, y_desc_, y));
  }

  Shape s_;
  DeviceBuffer<float> x_, w_, y_;
  DeviceBuffer<double> ref_, sq_ref_;
  std::unique_ptr<DoubleReference> double_ref_;
  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t x_desc_ = nullptr, y_desc_ = nullptr;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;
  DeviceBuffer<char> workspace_{1};
  std::unique_ptr<CUgraphExec_st, cudaError_t (*)(cudaGraphExec_t)> graph_{nullptr,
                                                                          cudaGraphExecDestroy};
};

}  // namespace

bench::Spec benchmark(const std::string& variant, const std::string& label, const Shape& shape,
                      size_t workspace) {
  shape.validate();
  bench::Spec s;
  s.name = "conv/" + variant + "/" + label;
  s.call.variant = variant;
  const Shape& sh = shape;
  s.call.params = Sig::params(sh, false);
  using protocol::Source;
  // The workspace is scratch (in-out): the judge fills it with fresh garbage before every call,
  // off the clock, and never copies it back (it can be gigabytes).
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{sh, workspace});
  s.call.buffers[Sig::kX].source = kSourceX;
  s.call.buffers[Sig::kW].source = kSourceW;
  BufferSpec& bias = s.call.buffers[Sig::kBias];  // unused: no bias
  bias.source = Source::kUniformF32;
  bias.lo = 0.5;
  bias.hi = 1.5;
  s.flop = sh.flop();
  s.bytes = 4.0 * double(sh.x_count() + sh.w_count() + sh.y_count());
  s.counters = {{"workspace_MB", 4.0 * double(workspace) / 1e6}};
  s.baseline_name = "cuDNN forward convolution (FP32, FMA math, cuDNN " + cudnn_version() + ")";
  s.baseline = [sh] { return std::make_unique<CudnnConv>(sh); };
  return s;
}

}  // namespace labkit::ops::conv
