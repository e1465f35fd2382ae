// labkit_gpu_ceilings: measures the two roofs of the HTML report's roofline on the GPU the labs
// run on, and prints them as one line of JSON:
//   {"sgemm_gflops": ..., "copy_gbps": ..., "sgemm_n": 4096, "copy_bytes": 1073741824,
//    "samples": 7, "sgemm_ms": ..., "copy_ms": ...}
// compute: cuBLAS SGEMM (FP32, no TF32) at 4096^3, 2 n^3 flop per call;
// bandwidth: a device-to-device cudaMemcpyAsync of 1 GiB, counted as 2 GiB moved (read + write:
// a kernel's declared bytes count its inputs read and its output written the same way).
// Each is timed with CUDA events after two warm-up calls; the median of `samples` calls.
//
// The grader runs it once per grading, before any student code runs, and stores what it prints
// under the results' GPU info ("ceilings"); its absence or failure only means no ceilings on
// the chart (never a crash, never points). No student code is involved.
// Exit 0 with the line; 77 without a GPU (nothing measured); 1 when a CUDA or cuBLAS call fails,
// with the reason on stderr.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/gpu.hpp"

namespace {

constexpr int kN = 4096;
constexpr size_t kCopyBytes = size_t{1} << 30;
constexpr int kWarmup = 2;
constexpr int kSamples = 7;

void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed: cuBLAS status " +
                             std::to_string(static_cast<int>(s)));
  }
}

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

template <typename F>
double median_ms(cudaStream_t stream, F&& call) {
  Events ev;
  for (int i = 0; i < kWarmup; ++i) call();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int i = 0; i < kSamples; ++i) {
    CUDA_CHECK(cudaEventRecord(ev.start, stream));
    call();
    CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, ev.start, ev.stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int run() {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } stream_guard{stream};

  // SGEMM: C = A B, n x n, on random inputs (a GPU may clock differently on zeros).
  const size_t elems = size_t{kN} * kN;
  labkit::DeviceBuffer<float> a(elems), b(elems), c(elems);
  labkit::fill_uniform_f32(a.get(), elems, 1, -1.0f, 1.0f, stream);
  labkit::fill_uniform_f32(b.get(), elems, 2, -1.0f, 1.0f, stream);
  cublasHandle_t handle;
  cublas_check(cublasCreate(&handle), "cublasCreate");
  struct HandleGuard {
    cublasHandle_t h;
    ~HandleGuard() { cublasDestroy(h); }
  } handle_guard{handle};
  cublas_check(cublasSetStream(handle, stream), "cublasSetStream");
  cublas_check(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  const float alpha = 1.0f, beta = 0.0f;
  const double gemm_ms = median_ms(stream, [&] {
    cublas_check(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha,
                             a.get(), kN, b.get(),
                             kN, &beta, c.get(), kN),
                 "cublasSgemm");
  });

  // Copy: 1 GiB device to device.
  labkit::DeviceBuffer<float> src(kCopyBytes / sizeof(float)), dst(kCopyBytes / sizeof(float));
  labkit::fill_uniform_f32(src.get(), src.size(), 3, -1.0f, 1.0f, stream);
  const double copy_ms = median_ms(stream, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kCopyBytes, cudaMemcpyDeviceToDevice, stream));
  });
  CUDA_CHECK(cudaStreamSynchronize(stream));

  const double flop = 2.0 * kN * kN * static_cast<double>(kN);
  const double gflops = flop / (gemm_ms * 1e-3) / 1e9;
  const double gbps = 2.0 * static_cast<double>(kCopyBytes) / (copy_ms * 1e-3) / 1e9;
  std::printf(
      "{\"sgemm_gflops\": %.1f, \"copy_gbps\": %.1f, \"sgemm_n\": %d, \"copy_bytes\": %zu, "
      "\"samples\": %d, \"sgemm_ms\": %.4f, \"copy_ms\": %.4f}\n",
      gflops, gbps, kN, kCopyBytes, kSamples, gemm_ms, copy_ms);
  return 0;
}

}  // namespace

int main() {
  if (!labkit::gpu_status().available) {
    std::fprintf(stderr, "no CUDA GPU: %s; no ceilings measured\n",
                 labkit::gpu_status().reason.c_str());
    return 77;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "labkit_gpu_ceilings: %s\n", e.what());
    return 1;
  }
}
