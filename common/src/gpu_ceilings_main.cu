// labkit_gpu_ceilings: measures what this GPU can do at most, on the GPU the labs run on, and
// prints it as one line of JSON:
//   {"sgemm_gflops": ..., "copy_gbps": ..., "fp32_peak_gflops": ..., "read_gbps": ...,
//    "sgemm_n": 4096, "copy_bytes": 1073741824, "samples": 7, "sgemm_ms": ..., "copy_ms": ...,
//    "fma_flop": ..., "fma_ms": ..., "read_bytes": 1073741824, "read_ms": ..., "sm_count": ...}
// sgemm: cuBLAS SGEMM (FP32, no TF32) at 4096^3, 2 n^3 flop per call (the roofline's roof);
// copy: a device-to-device cudaMemcpyAsync of 1 GiB, counted as 2 GiB moved (read + write:
// a kernel's declared bytes count its inputs read and its output written the same way);
// fp32_peak: a kernel of independent FP32 FMAs (kFmaChains chains per thread, one full wave of
// resident blocks on every SM), 2 flop per FMA: the FP32 peak as this GPU runs it now;
// read: a read-only kernel streaming 1 GiB with 16-byte loads (each thread XORs what it reads
// and writes one word), counted as the bytes read.
// Each is timed with CUDA events after warm-up calls; the median of `samples` calls. The FMA
// kernel's and the read kernel's results are checked exactly (the FMAs on the host, the XOR
// against a second kernel built differently), so neither can have been optimised away or have
// skipped work.
//
// The grader runs it once per grading that benchmarks, before any student code runs, and stores
// what it prints under the results' GPU info ("ceilings"). Two uses: the HTML report's roofline
// (sgemm, copy), and the plausibility check (grader/scoring.py, docs/grading.md): a benchmark
// whose GFLOPS or GBps is above fp32_peak_gflops or max(read_gbps, copy_gbps), with a margin,
// is not a possible result and earns nothing; without these figures no performance points are
// awarded. No student code is involved.
// Exit 0 with the line; 77 without a GPU (nothing measured); 1 when a CUDA or cuBLAS call fails
// or a result is wrong, with the reason on stderr.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// The FMA kernel: kFmaChains independent chains per thread (so that a warp always has an FMA
// ready, whatever the pipeline's latency), kFmaUnroll steps of each per loop trip (the loop's
// own instructions are under 2% of those issued), one full wave of resident blocks on every SM.
// kFmaIters trips: about 2.5 M FMAs per thread, 15-30 ms per call on an H100 (the per-thread
// work is fixed and the threads scale with the SMs, so about as long on any GPU).
constexpr int kFmaThreads = 256;
constexpr int kFmaChains = 8;
constexpr int kFmaUnroll = 32;
constexpr int kFmaIters = 9600;
constexpr int kFmaWarmup = 3;
// a <- a * kFmaMul + kFmaAdd converges to kFmaAdd / (1 - kFmaMul) = 10: finite, never zero.
constexpr float kFmaMul = 0.9999f;
constexpr float kFmaAdd = 0.001f;

// The read kernel: float4 loads, kReadUnroll of them in flight per thread per trip.
constexpr int kReadThreads = 256;
constexpr int kReadUnroll = 4;
constexpr size_t kReadBytes = kCopyBytes;   // the copy's source buffer, refilled

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
double median_ms(cudaStream_t stream, F&& call, int warmup = kWarmup) {
  Events ev;
  for (int i = 0; i < warmup; ++i) call();
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

// Every chain of thread t starts from a different exact value, the same on the host.
__host__ __device__ inline float fma_start(unsigned t, int chain) {
  return static_cast<float>(t & 1023u) * 0.0009765625f + static_cast<float>(chain);
}

// kFmaChains * kFmaUnroll * iters FMAs per thread; the chains' sum is written, so none of them
// can be dropped, and `mul`, `add` and `iters` come from the host, so nothing can be folded.
__global__ void __launch_bounds__(kFmaThreads) fma_peak_kernel(float* __restrict__ out,
                                                               int iters, float mul, float add) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) acc[j] = fma_start(t, j);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u) {
#pragma unroll
      for (int j = 0; j < kFmaChains; ++j) acc[j] = fmaf(acc[j], mul, add);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) sum += acc[j];
  out[t] = sum;
}

// What fma_peak_kernel writes for thread t: the same operations in the same order (an FMA
// rounds once on both sides), so equal to the bit.
float fma_expected(unsigned t, int iters) {
  float sum = 0.0f;
  for (int j = 0; j < kFmaChains; ++j) {
    float a = fma_start(t, j);
    for (long k = 0; k < long{iters} * kFmaUnroll; ++k) a = std::fma(a, kFmaMul, kFmaAdd);
    sum += a;
  }
  return sum;
}

// Each thread folds the bits of its 16-byte words together with XOR (grid-stride, kReadUnroll
// loads issued before any is used) and writes its one word: every byte is read once and nothing
// is added up (a read stream, not a reduction: the XOR is exact in any order).
__global__ void __launch_bounds__(kReadThreads) read_xor_kernel(const uint4* __restrict__ in,
                                                                size_t n4,
                                                                unsigned* __restrict__ folded) {
  const size_t stride = size_t{gridDim.x} * blockDim.x;
  const size_t t = size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned x = 0;
  size_t i = t;
  for (; i + (kReadUnroll - 1) * stride < n4; i += kReadUnroll * stride) {
    uint4 v[kReadUnroll];
#pragma unroll
    for (int u = 0; u < kReadUnroll; ++u) v[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < kReadUnroll; ++u) x ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n4; i += stride) {
    const uint4 v = in[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  folded[t] = x;
}

// The check of read_xor_kernel, built differently: one word per thread into one atomic.
__global__ void xor_check_kernel(const unsigned* __restrict__ in, size_t n, unsigned* out) {
  unsigned x = 0;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    x ^= in[i];
  }
  atomicXor(out, x);
}

// Blocks of `threads` that fill every SM once (one full wave: no SM idles in a tail).
template <typename Kernel>
int full_wave_blocks(Kernel kernel, int threads) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  const int sms = labkit::gpu_status().sm_count;
  if (per_sm < 1 || sms < 1) {
    throw std::runtime_error("no resident blocks per SM (" + std::to_string(per_sm) +
                             ") or no SMs (" + std::to_string(sms) + ")");
  }
  return per_sm * sms;
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
  CUBLAS_CHECK(cublasCreate(&handle));
  struct HandleGuard {
    cublasHandle_t h;
    ~HandleGuard() { cublasDestroy(h); }
  } handle_guard{handle};
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
  const float alpha = 1.0f, beta = 0.0f;
  const double gemm_ms = median_ms(stream, [&] {
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha, a.get(), kN,
                             b.get(), kN, &beta, c.get(), kN));
  });

  // FP32 peak: independent FMAs on every SM, checked exactly on the host for two threads
  // (the first and the last) and for being finite everywhere.
  const int fma_blocks = full_wave_blocks(fma_peak_kernel, kFmaThreads);
  const size_t fma_threads = size_t(fma_blocks) * kFmaThreads;
  labkit::DeviceBuffer<float> fma_out(fma_threads);
  labkit::fill_pattern32(fma_out.get(), fma_out.bytes(), 0x7FC0DEADu, stream);   // NaN poison
  const double fma_ms = median_ms(stream, [&] {
    fma_peak_kernel<<<fma_blocks, kFmaThreads, 0, stream>>>(fma_out.get(), kFmaIters, kFmaMul,
                                                             kFmaAdd);
    LABKIT_CHECK_LAUNCH();
  }, kFmaWarmup);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  {
    const std::vector<float> got = fma_out.download();
    for (const size_t t : {size_t{0}, fma_threads - 1}) {
      const float want = fma_expected(static_cast<unsigned>(t), kFmaIters);
      if (got[t] != want) {
        throw std::runtime_error("the FMA kernel's thread " + std::to_string(t) + " wrote " +
                                 std::to_string(got[t]) + ", expected " + std::to_string(want));
      }
    }
    for (size_t t = 0; t < got.size(); ++t) {
      if (!std::isfinite(got[t]) || got[t] == 0.0f) {
        throw std::runtime_error("the FMA kernel's thread " + std::to_string(t) + " wrote " +
                                 std::to_string(got[t]));
      }
    }
  }

  // Copy: 1 GiB device to device.
  labkit::DeviceBuffer<float> src(kCopyBytes / sizeof(float)), dst(kCopyBytes / sizeof(float));
  labkit::fill_uniform_f32(src.get(), src.size(), 3, -1.0f, 1.0f, stream);
  const double copy_ms = median_ms(stream, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kCopyBytes, cudaMemcpyDeviceToDevice, stream));
  });
  CUDA_CHECK(cudaStreamSynchronize(stream));

  // Read: the copy's source, refilled with random words, read once per call with 16-byte loads;
  // the XOR of what every thread folded must equal the XOR of all the words (xor_check_kernel).
  const size_t read_words = kReadBytes / sizeof(unsigned);
  labkit::fill_uniform_f32(src.get(), read_words, 4, -1.0f, 1.0f, stream);
  const int read_blocks = full_wave_blocks(read_xor_kernel, kReadThreads);
  const size_t read_threads = static_cast<size_t>(read_blocks) * kReadThreads;
  labkit::DeviceBuffer<unsigned> folded(read_threads), check(1);
  const auto* in4 = reinterpret_cast<const uint4*>(src.get());   // cudaMalloc: 256-byte aligned
  const double read_ms = median_ms(stream, [&] {
    read_xor_kernel<<<read_blocks, kReadThreads, 0, stream>>>(in4, read_words / 4, folded.get());
    LABKIT_CHECK_LAUNCH();
  });
  CUDA_CHECK(cudaMemsetAsync(check.get(), 0, sizeof(unsigned), stream));
  xor_check_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const unsigned*>(src.get()),
                                            read_words, check.get());
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  {
    unsigned got = 0;
    for (const unsigned w : folded.download()) got ^= w;
    const unsigned want = check.download()[0];
    if (got != want) {
      throw std::runtime_error("the read kernel did not read every word (XOR " + std::to_string(got) +
                               ", expected " + std::to_string(want) + ")");
    }
  }

  const double flop = 2.0 * kN * kN * static_cast<double>(kN);
  const double gflops = flop / (gemm_ms * 1e-3) / 1e9;
  const double gbps = 2.0 * static_cast<double>(kCopyBytes) / (copy_ms * 1e-3) / 1e9;
  const double fma_flop = 2.0 * kFmaChains * kFmaUnroll * static_cast<double>(kFmaIters) *
                          static_cast<double>(fma_threads);
  const double fp32_peak = fma_flop / (fma_ms * 1e-3) / 1e9;
  const double read_gbps = static_cast<double>(kReadBytes) / (read_ms * 1e-3) / 1e9;
  std::printf(
      "{\"sgemm_gflops\": %.1f, \"copy_gbps\": %.1f, \"fp32_peak_gflops\": %.1f, "
      "\"read_gbps\": %.1f, \"sgemm_n\": %d, \"copy_bytes\": %zu, \"samples\": %d, "
      "\"sgemm_ms\": %.4f, \"copy_ms\": %.4f, \"fma_flop\": %.0f, \"fma_ms\": %.4f, "
      "\"read_bytes\": %zu, \"read_ms\": %.4f, \"sm_count\": %d}\n",
      gflops, gbps, fp32_peak, read_gbps, kN, kCopyBytes, kSamples, gemm_ms, copy_ms, fma_flop,
      fma_ms, kReadBytes, read_ms, labkit::gpu_status().sm_count);
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
