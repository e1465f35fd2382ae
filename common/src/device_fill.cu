#include "labkit/device_fill.hpp"

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/half.hpp"
#include "labkit/ops/conv_dist.hpp"
#include "labkit/ops/histogram_dist.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/spmv_dist.hpp"
#include "labkit/random.hpp"

#include <algorithm>
#include <stdexcept>

namespace labkit {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 * 8 ? (blocks == 0 ? 1 : blocks) : 65536 * 8);
}

__global__ void uniform_f32_kernel(float* out, size_t count, uint64_t seed, float lo, float hi) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = uniform_f32(seed, i, lo, hi);
  }
}

__global__ void uniform_16_kernel(uint16_t* out, size_t count, uint64_t seed, float lo, float hi,
                                  bool bf16) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = uniform_16(seed, i, lo, hi, bf16);
  }
}

__global__ void uniform_i32_kernel(int32_t* out, size_t count, uint64_t seed, int32_t lo,
                                   int32_t hi) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = uniform_i32(seed, i, lo, hi);
  }
}

__global__ void pattern32_kernel(uint32_t* out, size_t words, uint32_t pattern) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = pattern;
  }
}

__global__ void abs_f32_kernel(float* data, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = fabsf(data[i]);
  }
}

__global__ void reduce_f32_kernel(float* out, labkit::ops::reduce::ReduceDist d) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < d.n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = labkit::ops::reduce::reduce_value(d, i);
  }
}

__global__ void count_not_reduce_f32_kernel(const float* a, labkit::ops::reduce::ReduceDist d,
                                            unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < d.n;
       i += size_t{gridDim.x} * blockDim.x) {
    if (__float_as_uint(a[i]) != __float_as_uint(labkit::ops::reduce::reduce_value(d, i))) {
      atomicAdd(differ, 1ull);
    }
  }
}

__global__ void to_f64_kernel(const float* in, double* out, size_t count, bool square) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const double v = in[i];
    out[i] = square ? v * v : v;
  }
}

__global__ void to_f64_16_kernel(const uint16_t* in, bool bf16, double* out, size_t count,
                                 bool square) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const double v = from_16_bits(in[i], bf16);
    out[i] = square ? v * v : v;
  }
}

__global__ void spmv_x_kernel(float* out, labkit::ops::spmv::SpmvX d) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < d.count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = labkit::ops::spmv::spmv_x_value(d, i);
  }
}

__global__ void count_not_spmv_x_kernel(const float* a, labkit::ops::spmv::SpmvX d,
                                        unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < d.count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (__float_as_uint(a[i]) != __float_as_uint(labkit::ops::spmv::spmv_x_value(d, i))) {
      atomicAdd(differ, 1ull);
    }
  }
}

__global__ void row_ptr_even_kernel(int32_t* out, size_t count, uint64_t nnz) {
  const uint64_t rows = count - 1;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<int32_t>(i * nnz / rows);
  }
}

__global__ void count_not_row_ptr_even_kernel(const int32_t* a, size_t count, uint64_t nnz,
                                              unsigned long long* differ) {
  const uint64_t rows = count - 1;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (a[i] != static_cast<int32_t>(i * nnz / rows)) atomicAdd(differ, 1ull);
  }
}

__global__ void conv_f32_kernel(float* out, labkit::ops::conv::ConvDist d) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < d.count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = labkit::ops::conv::conv_value(d, i);
  }
}

__global__ void count_not_conv_f32_kernel(const float* a, labkit::ops::conv::ConvDist d,
                                          unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < d.count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (__float_as_uint(a[i]) != __float_as_uint(labkit::ops::conv::conv_value(d, i))) {
      atomicAdd(differ, 1ull);
    }
  }
}

__global__ void empty_kernel() {}

// Counts the 32-bit words of `a` that differ from the generator's (uniform) or from `b`. Every
// count_* kernel is a tally, not a reduction: each differing element adds 1 on its own (one
// atomic per mismatch, none in the common case where nothing differs).
__global__ void count_not_uniform_f32_kernel(const float* a, size_t count, uint64_t seed, float lo,
                                             float hi, unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    const float want = uniform_f32(seed, i, lo, hi);
    if (__float_as_uint(a[i]) != __float_as_uint(want)) atomicAdd(differ, 1ull);
  }
}

__global__ void count_not_uniform_16_kernel(const uint16_t* a, size_t count, uint64_t seed,
                                            float lo, float hi, bool bf16,
                                            unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (a[i] != uniform_16(seed, i, lo, hi, bf16)) atomicAdd(differ, 1ull);
  }
}

// The histogram family's values (bytes or ints), one per index.
template <typename T>
__global__ void histogram_values_kernel(T* out, size_t count, ops::histogram::HistogramDist d) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<T>(ops::histogram::histogram_value(d, i));
  }
}
template <typename T>
__global__ void count_not_histogram_values_kernel(const T* a, size_t count,
                                                  ops::histogram::HistogramDist d,
                                                  unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (a[i] != static_cast<T>(ops::histogram::histogram_value(d, i))) atomicAdd(differ, 1ull);
  }
}

__global__ void count_not_uniform_i32_kernel(const int32_t* a, size_t count, uint64_t seed,
                                             int32_t lo, int32_t hi, unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (a[i] != uniform_i32(seed, i, lo, hi)) atomicAdd(differ, 1ull);
  }
}

__global__ void count_differences_kernel(const uint32_t* a, const uint32_t* b, size_t words,
                                         unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    if (a[i] != b[i]) atomicAdd(differ, 1ull);
  }
}

template <typename Launch>
uint64_t count_on_device(cudaStream_t stream, Launch&& launch) {
  // cudaMalloc, not the stream-ordered allocator: these run in the confined worker too
  // (generated inputs of a correctness call), where creating the allocator's pool opened a file.
  DeviceBuffer<unsigned long long> differ(1);
  CUDA_CHECK(cudaMemsetAsync(differ.get(), 0, sizeof(unsigned long long), stream));
  launch(differ.get());
  LABKIT_CHECK_LAUNCH();
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, differ.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

// Zeros over the thread's own stack: a frame of kBytes (the array fills it), written with plain
// local stores. Two blocks of 1024 threads fit an SM at once (32 registers each at most), so a
// grid of four per SM covers every warp slot of every SM.
constexpr int kScrubThreads = 1024;

template <int kBytes>
__global__ void __launch_bounds__(kScrubThreads, 2) scrub_local_kernel() {
  volatile uint32_t frame[kBytes / 4];
#pragma unroll 1
  for (int i = 0; i < kBytes / 4; ++i) frame[i] = 0;
}

template <int kBytes>
bool scrub_with(size_t frame, unsigned blocks, cudaStream_t stream) {
  if (frame > static_cast<size_t>(kBytes)) return false;
  scrub_local_kernel<kBytes><<<blocks, kScrubThreads, 0, stream>>>();
  return true;
}

// Over all of a block's shared memory: garbage in its dynamic window (a word of `pattern` mixed
// with its index: no two words alike, no value a kernel can count on, so one that reads shared
// memory before writing it, a histogram or a tree never zeroed, is wrong in the tests as it
// would be on any GPU), zeros in its reserved part (%reserved_smem_offset_begin..end, which any
// kernel can address through the shared window, and which the system's own uses expect clear;
// those registers exist from sm_80).
__global__ void scrub_shared_kernel(uint32_t pattern) {
  extern __shared__ uint4 window[];
  uint32_t dynamic_bytes = 0, reserved_begin = 0, reserved_end = 0;
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_bytes));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(reserved_begin));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(reserved_end));
#endif
  for (uint32_t i = threadIdx.x; i < dynamic_bytes / 16; i += blockDim.x) {
    const uint32_t w = pattern ^ (i * 0x9E3779B9u);
    window[i] = make_uint4(w, w * 0x85EBCA6Bu, w ^ 0xC2B2AE35u, ~w);
  }
  for (uint32_t at = reserved_begin + 4 * threadIdx.x; at + 4 <= reserved_end;
       at += 4 * blockDim.x) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(at), "r"(0u) : "memory");
  }
}

bool device_counts(int& sms, int& threads, int& shared_optin) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

}  // namespace

void launch_empty_kernel(cudaStream_t stream) { empty_kernel<<<1, 32, 0, stream>>>(); }

bool scrub_local_memory(size_t frame, cudaStream_t stream) {
  size_t stack = 0;
  int sms = 0, threads = 0, shared_optin = 0;
  if (cudaDeviceGetLimit(&stack, cudaLimitStackSize) != cudaSuccess ||
      !device_counts(sms, threads, shared_optin)) {
    cudaGetLastError();
    return false;
  }
  frame = std::max(frame, stack);
  const unsigned blocks = static_cast<unsigned>(sms) *
                          static_cast<unsigned>(std::max(1, threads / kScrubThreads)) * 2;
  // Frames of 1 KiB (the default stack) to 64 KiB: a larger frame would make the driver reserve
  // it for every thread the GPU can hold (17 GB at 64 KiB on 132 SMs).
  const bool launched =
      scrub_with<1 << 10>(frame, blocks, stream) || scrub_with<1 << 11>(frame, blocks, stream) ||
      scrub_with<1 << 12>(frame, blocks, stream) || scrub_with<1 << 13>(frame, blocks, stream) ||
      scrub_with<1 << 14>(frame, blocks, stream) || scrub_with<1 << 15>(frame, blocks, stream) ||
      scrub_with<1 << 16>(frame, blocks, stream);
  return launched && cudaGetLastError() == cudaSuccess;
}

bool scrub_shared_memory(cudaStream_t stream) {
  // Other garbage for every scrub. Not secret (a kernel reads its own shared memory anyway, and
  // subtracting what it read costs what zeroing does), only never zero and never the same twice
  // in a row; drawn without a system call (the executor's sandbox allows few).
  static uint64_t scrubs = 0;
  const uint32_t pattern = static_cast<uint32_t>(hash64(0x5C2BB1E5u, scrubs++) >> 32) | 1u;
  int sms = 0, threads = 0, shared_optin = 0, per_sm = 0, reserved = 0, device = 0;
  if (!device_counts(sms, threads, shared_optin) || cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device) !=
          cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  static const bool opted_in =
      cudaFuncSetAttribute(scrub_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           shared_optin) == cudaSuccess;
  if (!opted_in) {
    cudaGetLastError();
    return false;
  }
  // Where a block's shared memory lies depends on the SM's split between L1 and shared memory
  // (its configuration, chosen per launch from the kernel's needs and carveout): measured on an
  // H200, a kernel run in the smallest configuration (8 KiB) kept marks that a block of all 228
  // KiB never reached. So every configuration is cleared in turn: a carveout that selects it, and
  // blocks of a quarter of it each, four of which fill an SM and tile it.
  const int per_sm_kib = per_sm / 1024;
  for (int kib : {8, 16, 32, 64, 100, 132, 164, 196, 228, 256}) {
    const bool last = kib >= per_sm_kib;
    if (last) kib = per_sm_kib;
    const int block = kib * 1024 / 4 - reserved;
    if (block > 0 && block <= shared_optin) {
      if (cudaFuncSetAttribute(scrub_shared_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               (kib * 100 + per_sm_kib - 1) / per_sm_kib) != cudaSuccess) {
        cudaGetLastError();
        return false;
      }
      scrub_shared_kernel<<<static_cast<unsigned>(sms) * 8, 32, static_cast<size_t>(block),
                            stream>>>(pattern);
      if (cudaGetLastError() != cudaSuccess) return false;
    }
    if (last) break;
  }
  return true;
}

uint64_t count_not_uniform_f32(const float* a, size_t count, uint64_t seed, float lo, float hi,
                               cudaStream_t stream) {
  if (count == 0) return 0;
  return count_on_device(stream, [&](unsigned long long* d) {
    count_not_uniform_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, count, seed, lo, hi, d);
  });
}

uint64_t count_not_uniform_16(const void* a, bool bf16, size_t count, uint64_t seed, float lo,
                              float hi, cudaStream_t stream) {
  if (count == 0) return 0;
  return count_on_device(stream, [&](unsigned long long* d) {
    count_not_uniform_16_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const uint16_t*>(a), count, seed, lo, hi, bf16, d);
  });
}

uint64_t count_not_uniform_i32(const int32_t* a, size_t count, uint64_t seed, int32_t lo,
                               int32_t hi, cudaStream_t stream) {
  if (count == 0) return 0;
  return count_on_device(stream, [&](unsigned long long* d) {
    count_not_uniform_i32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, count, seed, lo, hi, d);
  });
}

uint64_t count_differences(const void* a, const void* b, size_t bytes, cudaStream_t stream) {
  const size_t words = bytes / 4;
  if (words == 0) return 0;
  return count_on_device(stream, [&](unsigned long long* d) {
    count_differences_kernel<<<blocks_for(words), kThreads, 0, stream>>>(
        static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), words, d);
  });
}

void fill_uniform_16(void* out, bool bf16, size_t count, uint64_t seed, float lo, float hi,
                     cudaStream_t stream) {
  if (count == 0) return;
  uniform_16_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<uint16_t*>(out),
                                                                count, seed, lo, hi, bf16);
  LABKIT_CHECK_LAUNCH();
}

void fill_uniform_f32(float* out, size_t count, uint64_t seed, float lo, float hi,
                      cudaStream_t stream) {
  if (count == 0) return;
  uniform_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(out, count, seed, lo, hi);
  LABKIT_CHECK_LAUNCH();
}

void fill_uniform_i32(int32_t* out, size_t count, uint64_t seed, int32_t lo, int32_t hi,
                      cudaStream_t stream) {
  if (count == 0) return;
  uniform_i32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(out, count, seed, lo, hi);
  LABKIT_CHECK_LAUNCH();
}

void fill_pattern32(void* out, size_t bytes, uint32_t pattern, cudaStream_t stream) {
  const size_t words = bytes / 4;
  if (words == 0) return;
  pattern32_kernel<<<blocks_for(words), kThreads, 0, stream>>>(static_cast<uint32_t*>(out), words,
                                                               pattern);
  LABKIT_CHECK_LAUNCH();
}

void fill_reduce_f32(float* out, size_t count, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  const auto d = ops::reduce::make_reduce_dist(seed, count);
  reduce_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(out, d);
  LABKIT_CHECK_LAUNCH();
}

uint64_t count_not_reduce_f32(const float* a, size_t count, uint64_t seed, cudaStream_t stream) {
  if (count == 0) return 0;
  const auto d = ops::reduce::make_reduce_dist(seed, count);
  return count_on_device(stream, [&](unsigned long long* differ) {
    count_not_reduce_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, d, differ);
  });
}

void fill_spmv_x(float* out, size_t count, uint64_t seed, float lo, float hi, cudaStream_t stream) {
  if (count == 0) return;
  spmv_x_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      out, ops::spmv::make_spmv_x(seed, count, lo, hi));
  LABKIT_CHECK_LAUNCH();
}

uint64_t count_not_spmv_x(const float* a, size_t count, uint64_t seed, float lo, float hi,
                          cudaStream_t stream) {
  if (count == 0) return 0;
  const auto d = ops::spmv::make_spmv_x(seed, count, lo, hi);
  return count_on_device(stream, [&](unsigned long long* differ) {
    count_not_spmv_x_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, d, differ);
  });
}

namespace {
ops::conv::ConvDist conv_dist(size_t count, size_t plane, bool weights, uint64_t seed) {
  return ops::conv::make_conv_dist(weights ? ops::conv::Tensor::kW : ops::conv::Tensor::kX, seed,
                                   count, plane);
}
}  // namespace

void fill_conv_f32(float* out, size_t count, size_t plane, bool weights, uint64_t seed,
                   cudaStream_t stream) {
  if (count == 0) return;
  conv_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(out, conv_dist(count, plane, weights, seed));
  LABKIT_CHECK_LAUNCH();
}

uint64_t count_not_conv_f32(const float* a, size_t count, size_t plane, bool weights,
                            uint64_t seed, cudaStream_t stream) {
  if (count == 0) return 0;
  const auto d = conv_dist(count, plane, weights, seed);
  return count_on_device(stream, [&](unsigned long long* differ) {
    count_not_conv_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, d, differ);
  });
}

void fill_row_ptr_even(int32_t* out, size_t count, uint64_t nnz, cudaStream_t stream) {
  if (count < 2) throw std::invalid_argument("labkit::fill_row_ptr_even: no rows");
  row_ptr_even_kernel<<<blocks_for(count), kThreads, 0, stream>>>(out, count, nnz);
  LABKIT_CHECK_LAUNCH();
}

uint64_t count_not_row_ptr_even(const int32_t* a, size_t count, uint64_t nnz, cudaStream_t stream) {
  if (count < 2) throw std::invalid_argument("labkit::count_not_row_ptr_even: no rows");
  return count_on_device(stream, [&](unsigned long long* differ) {
    count_not_row_ptr_even_kernel<<<blocks_for(count), kThreads, 0, stream>>>(a, count, nnz, differ);
  });
}

void fill_histogram_values(void* out, bool bytes, size_t count, uint64_t seed, uint32_t dist,
                           uint32_t bins, cudaStream_t stream) {
  if (count == 0) return;
  const auto d = ops::histogram::make_histogram_dist(seed, dist, bins);
  if (bytes) {
    histogram_values_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<uint8_t*>(out), count, d);
  } else {
    histogram_values_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<int32_t*>(out), count, d);
  }
  LABKIT_CHECK_LAUNCH();
}

uint64_t count_not_histogram_values(const void* a, bool bytes, size_t count, uint64_t seed,
                                    uint32_t dist, uint32_t bins, cudaStream_t stream) {
  if (count == 0) return 0;
  const auto d = ops::histogram::make_histogram_dist(seed, dist, bins);
  return count_on_device(stream, [&](unsigned long long* differ) {
    if (bytes) {
      count_not_histogram_values_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
          static_cast<const uint8_t*>(a), count, d, differ);
    } else {
      count_not_histogram_values_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
          static_cast<const int32_t*>(a), count, d, differ);
    }
  });
}

void fill_source(void* out, protocol::Source source, size_t count, uint64_t seed, double lo,
                 double hi, cudaStream_t stream, size_t plane) {
  switch (source) {
    case protocol::Source::kConvX:
    case protocol::Source::kConvW:
      fill_conv_f32(static_cast<float*>(out), count, plane, source == protocol::Source::kConvW,
                    seed, stream);
      return;
    case protocol::Source::kUniformF32:
      fill_uniform_f32(static_cast<float*>(out), count, seed, static_cast<float>(lo),
                       static_cast<float>(hi), stream);
      return;
    case protocol::Source::kUniformF16:
    case protocol::Source::kUniformBF16:
      fill_uniform_16(out, source == protocol::Source::kUniformBF16, count, seed,
                      static_cast<float>(lo), static_cast<float>(hi), stream);
      return;
    case protocol::Source::kUniformI32:
      fill_uniform_i32(static_cast<int32_t*>(out), count, seed, static_cast<int32_t>(lo),
                       static_cast<int32_t>(hi), stream);
      return;
    case protocol::Source::kReduceF32:
      fill_reduce_f32(static_cast<float*>(out), count, seed, stream);
      return;
    case protocol::Source::kSpmvX:
      fill_spmv_x(static_cast<float*>(out), count, seed, static_cast<float>(lo),
                  static_cast<float>(hi), stream);
      return;
    case protocol::Source::kRowPtrEven:
      fill_row_ptr_even(static_cast<int32_t*>(out), count, static_cast<uint64_t>(hi), stream);
      return;
    case protocol::Source::kHistogramU8:
    case protocol::Source::kHistogramI32:
      fill_histogram_values(out, source == protocol::Source::kHistogramU8, count, seed,
                            static_cast<uint32_t>(lo), static_cast<uint32_t>(hi), stream);
      return;
    case protocol::Source::kArena:
      break;
  }
  throw std::invalid_argument("labkit::fill_source: not a generated source");
}

uint64_t count_not_source(const void* a, protocol::Source source, size_t count, uint64_t seed,
                          double lo, double hi, cudaStream_t stream, size_t plane) {
  switch (source) {
    case protocol::Source::kConvX:
    case protocol::Source::kConvW:
      return count_not_conv_f32(static_cast<const float*>(a), count, plane,
                                source == protocol::Source::kConvW, seed, stream);
    case protocol::Source::kUniformF32:
      return count_not_uniform_f32(static_cast<const float*>(a), count, seed,
                                   static_cast<float>(lo), static_cast<float>(hi), stream);
    case protocol::Source::kUniformF16:
    case protocol::Source::kUniformBF16:
      return count_not_uniform_16(a, source == protocol::Source::kUniformBF16, count, seed,
                                  static_cast<float>(lo), static_cast<float>(hi), stream);
    case protocol::Source::kUniformI32:
      return count_not_uniform_i32(static_cast<const int32_t*>(a), count, seed,
                                   static_cast<int32_t>(lo), static_cast<int32_t>(hi), stream);
    case protocol::Source::kReduceF32:
      return count_not_reduce_f32(static_cast<const float*>(a), count, seed, stream);
    case protocol::Source::kSpmvX:
      return count_not_spmv_x(static_cast<const float*>(a), count, seed, static_cast<float>(lo),
                              static_cast<float>(hi), stream);
    case protocol::Source::kRowPtrEven:
      return count_not_row_ptr_even(static_cast<const int32_t*>(a), count,
                                    static_cast<uint64_t>(hi), stream);
    case protocol::Source::kHistogramU8:
    case protocol::Source::kHistogramI32:
      return count_not_histogram_values(a, source == protocol::Source::kHistogramU8, count, seed,
                                        static_cast<uint32_t>(lo), static_cast<uint32_t>(hi),
                                        stream);
    case protocol::Source::kArena:
      break;
  }
  throw std::invalid_argument("labkit::count_not_source: not a generated source");
}

void to_f64(const float* in, double* out, size_t count, bool square, cudaStream_t stream) {
  if (count == 0) return;
  to_f64_kernel<<<blocks_for(count), kThreads, 0, stream>>>(in, out, count, square);
  LABKIT_CHECK_LAUNCH();
}

void to_f64_16(const void* in, bool bf16, double* out, size_t count, bool square,
               cudaStream_t stream) {
  if (count == 0) return;
  to_f64_16_kernel<<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const uint16_t*>(in),
                                                               bf16, out, count, square);
  LABKIT_CHECK_LAUNCH();
}

void abs_f32(float* data, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  abs_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
  LABKIT_CHECK_LAUNCH();
}

}  // namespace labkit
