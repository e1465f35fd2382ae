#include "labkit/device_fill.hpp"

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/half.hpp"
#include "labkit/elementwise_fill.cuh"
#include "labkit/random.hpp"
#include "labkit/source.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace labkit {
// The executor's scrubs (scrub_local_memory, scrub_shared_memory), outside any anonymous
// namespace so that their mangled names are fixed (scrub_kernel_names): racecheck leaves exactly
// these out of its tracking.
namespace scrub {

// Zeros over the thread's own stack: a frame of kBytes (the array fills it), written with plain
// local stores. Two blocks of 1024 threads fit an SM at once (32 registers each at most), so a
// grid of four per SM covers every warp slot of every SM.
constexpr int kScrubThreads = 1024;

template <int kBytes>
__global__ void __launch_bounds__(kScrubThreads, 2) local_kernel() {
  volatile uint32_t frame[kBytes / 4];
#pragma unroll 1
  for (int i = 0; i < kBytes / 4; ++i) frame[i] = 0;
}

template <int kBytes>
bool scrub_with(size_t frame, unsigned blocks, cudaStream_t stream) {
  if (frame > static_cast<size_t>(kBytes)) return false;
  local_kernel<kBytes><<<blocks, kScrubThreads, 0, stream>>>();
  return true;
}

// Over all of a block's shared memory: garbage in its dynamic window (a word of `pattern` mixed
// with its index: no two words alike, no value a kernel can count on, so one that reads shared
// memory before writing it, a histogram or a tree never zeroed, is wrong in the tests as it
// would be on any GPU), zeros in its reserved part (%reserved_smem_offset_begin..end, which any
// kernel can address through the shared window, and which the system's own uses expect clear;
// those registers exist from sm_80).
__global__ void shared_kernel(uint32_t pattern) {
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

constexpr int kFirstFrame = 10, kLastFrame = 16;  // local frames of 2^10 .. 2^16 bytes

}  // namespace scrub

std::vector<std::string> scrub_kernel_names() {
  // labkit::scrub::shared_kernel(unsigned int), labkit::scrub::local_kernel<N>()
  std::vector<std::string> names{"_ZN6labkit5scrub13shared_kernelEj"};
  for (int bits = scrub::kFirstFrame; bits <= scrub::kLastFrame; ++bits) {
    names.push_back("_ZN6labkit5scrub12local_kernelILi" + std::to_string(1 << bits) + "EEEvv");
  }
  return names;
}

namespace {

using elementwise::blocks_for;
using elementwise::kThreads;

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

__global__ void empty_kernel() {}

// Every 16-byte word of data[0, n) loaded once; the XOR of a thread's words is stored only if it
// equals a value no flush pattern gives, so that no load is dropped (L2Flusher).
__global__ void read_through_kernel(const uint4* data, size_t n, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x2545F491u) *sink = acc;
}

// Counts the 32-bit words of `a` that differ from the generator's (uniform) or from `b`. Every
// count_* kernel is a tally, not a reduction: each differing element adds 1 on its own (one
// atomic per mismatch, none in the common case where nothing differs).
__global__ void count_differences_kernel(const uint32_t* a, const uint32_t* b, size_t words,
                                         unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words;
       i += size_t{gridDim.x} * blockDim.x) {
    if (a[i] != b[i]) atomicAdd(differ, 1ull);
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

void read_through(const void* data, size_t bytes, cudaStream_t stream) {
  int sms = 0, threads = 0, shared_optin = 0;
  if (!device_counts(sms, threads, shared_optin)) throw std::runtime_error("no device to flush L2 on");
  static uint32_t* sink = nullptr;  // where the loads' XOR would go if it ever matched (never read)
  if (sink == nullptr) CUDA_CHECK(cudaMalloc(&sink, sizeof(uint32_t)));
  read_through_kernel<<<4 * sms, 256, 0, stream>>>(static_cast<const uint4*>(data), bytes / 16, sink);
  LABKIT_CHECK_LAUNCH();
}

void reset_persisting_l2() {
  const cudaError_t e = cudaCtxResetPersistingL2Cache();
  if (e == cudaErrorNotSupported) {
    (void)cudaGetLastError();
    return;
  }
  CUDA_CHECK(e);
}

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
                          static_cast<unsigned>(std::max(1, threads / scrub::kScrubThreads)) * 2;
  // Frames of 1 KiB (the default stack) to 64 KiB: a larger frame would make the driver reserve
  // it for every thread the GPU can hold (17 GB at 64 KiB on 132 SMs).
  const bool launched =
      // The frames of scrub::kFirstFrame .. kLastFrame (scrub_kernel_names lists them).
      scrub::scrub_with<1 << 10>(frame, blocks, stream) ||
      scrub::scrub_with<1 << 11>(frame, blocks, stream) ||
      scrub::scrub_with<1 << 12>(frame, blocks, stream) ||
      scrub::scrub_with<1 << 13>(frame, blocks, stream) ||
      scrub::scrub_with<1 << 14>(frame, blocks, stream) ||
      scrub::scrub_with<1 << 15>(frame, blocks, stream) ||
      scrub::scrub_with<1 << 16>(frame, blocks, stream);
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
      cudaFuncSetAttribute(scrub::shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
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
      if (cudaFuncSetAttribute(scrub::shared_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               (kib * 100 + per_sm_kib - 1) / per_sm_kib) != cudaSuccess) {
        cudaGetLastError();
        return false;
      }
      scrub::shared_kernel<<<static_cast<unsigned>(sms) * 8, 32, static_cast<size_t>(block),
                            stream>>>(pattern);
      if (cudaGetLastError() != cudaSuccess) return false;
    }
    if (last) break;
  }
  return true;
}

// The core's generators (labkit/elementwise_fill.cuh): one value per index.
namespace gen {
struct UniformF32 {
  using value_type = float;
  uint64_t seed;
  float lo, hi;
  __device__ float operator()(uint64_t i) const { return uniform_f32(seed, i, lo, hi); }
};
struct UniformI32 {
  using value_type = int32_t;
  uint64_t seed;
  int32_t lo, hi;
  __device__ int32_t operator()(uint64_t i) const { return uniform_i32(seed, i, lo, hi); }
};
struct Uniform16 {
  using value_type = uint16_t;
  uint64_t seed;
  float lo, hi;
  bool bf16;
  __device__ uint16_t operator()(uint64_t i) const { return uniform_16(seed, i, lo, hi, bf16); }
};

}  // namespace gen

void fill_uniform_f32(float* out, size_t count, uint64_t seed, float lo, float hi,
                      cudaStream_t stream) {
  fill_elementwise(out, count, gen::UniformF32{seed, lo, hi}, stream);
}
uint64_t count_not_uniform_f32(const float* a, size_t count, uint64_t seed, float lo, float hi,
                               cudaStream_t stream) {
  return count_not_elementwise(a, count, gen::UniformF32{seed, lo, hi}, stream);
}
void fill_uniform_i32(int32_t* out, size_t count, uint64_t seed, int32_t lo, int32_t hi,
                      cudaStream_t stream) {
  fill_elementwise(out, count, gen::UniformI32{seed, lo, hi}, stream);
}
uint64_t count_not_uniform_i32(const int32_t* a, size_t count, uint64_t seed, int32_t lo,
                               int32_t hi, cudaStream_t stream) {
  return count_not_elementwise(a, count, gen::UniformI32{seed, lo, hi}, stream);
}
void fill_uniform_16(void* out, bool bf16, size_t count, uint64_t seed, float lo, float hi,
                     cudaStream_t stream) {
  fill_elementwise(out, count, gen::Uniform16{seed, lo, hi, bf16}, stream);
}
uint64_t count_not_uniform_16(const void* a, bool bf16, size_t count, uint64_t seed, float lo,
                              float hi, cudaStream_t stream) {
  return count_not_elementwise(a, count, gen::Uniform16{seed, lo, hi, bf16}, stream);
}

uint64_t count_differences(const void* a, const void* b, size_t bytes, cudaStream_t stream) {
  const size_t words = bytes / 4;
  if (words == 0) return 0;
  return elementwise::tally(stream, [&](unsigned long long* d) {
    count_differences_kernel<<<blocks_for(words), kThreads, 0, stream>>>(
        static_cast<const uint32_t*>(a), static_cast<const uint32_t*>(b), words, d);
  });
}

void fill_pattern32(void* out, size_t bytes, uint32_t pattern, cudaStream_t stream) {
  const size_t words = bytes / 4;
  if (words == 0) return;
  pattern32_kernel<<<blocks_for(words), kThreads, 0, stream>>>(static_cast<uint32_t*>(out), words,
                                                               pattern);
  LABKIT_CHECK_LAUNCH();
}

// ---- The generated sources (labkit/source.hpp): the core's, then the families'.
namespace {

float f32(double v) { return static_cast<float>(v); }
int32_t i32(double v) { return static_cast<int32_t>(v); }

const SourceKind kUniformF32Kind{
    protocol::Source::kUniformF32, "uniform f32", 4,
    [](void* out, const SourceArgs& a, cudaStream_t s) {
      fill_uniform_f32(static_cast<float*>(out), a.count, a.seed, f32(a.lo), f32(a.hi), s);
    },
    [](const void* x, const SourceArgs& a, cudaStream_t s) {
      return count_not_uniform_f32(static_cast<const float*>(x), a.count, a.seed, f32(a.lo),
                                   f32(a.hi), s);
    }};
const SourceKind kUniformI32Kind{
    protocol::Source::kUniformI32, "uniform i32", 4,
    [](void* out, const SourceArgs& a, cudaStream_t s) {
      fill_uniform_i32(static_cast<int32_t*>(out), a.count, a.seed, i32(a.lo), i32(a.hi), s);
    },
    [](const void* x, const SourceArgs& a, cudaStream_t s) {
      return count_not_uniform_i32(static_cast<const int32_t*>(x), a.count, a.seed, i32(a.lo),
                                   i32(a.hi), s);
    }};
const SourceKind kUniformF16Kind{
    protocol::Source::kUniformF16, "uniform f16", 2,
    [](void* out, const SourceArgs& a, cudaStream_t s) {
      fill_uniform_16(out, false, a.count, a.seed, f32(a.lo), f32(a.hi), s);
    },
    [](const void* x, const SourceArgs& a, cudaStream_t s) {
      return count_not_uniform_16(x, false, a.count, a.seed, f32(a.lo), f32(a.hi), s);
    }};
const SourceKind kUniformBF16Kind{
    protocol::Source::kUniformBF16, "uniform bf16", 2,
    [](void* out, const SourceArgs& a, cudaStream_t s) {
      fill_uniform_16(out, true, a.count, a.seed, f32(a.lo), f32(a.hi), s);
    },
    [](const void* x, const SourceArgs& a, cudaStream_t s) {
      return count_not_uniform_16(x, true, a.count, a.seed, f32(a.lo), f32(a.hi), s);
    }};

}  // namespace

const SourceKind* find_source(protocol::Source id) {
  for (const SourceKind* k : {&kUniformF32Kind, &kUniformI32Kind, &kUniformF16Kind,
                              &kUniformBF16Kind}) {
    if (k->id == id) return k;
  }
  for (const SourceKind* k : family_sources()) {
    if (k->id == id) return k;
  }
  return nullptr;
}

const SourceKind& source_or_throw(protocol::Source id, const char* who) {
  const SourceKind* k = find_source(id);
  if (k == nullptr) {
    throw std::invalid_argument(std::string(who) + ": source " +
                                std::to_string(static_cast<uint32_t>(id)) +
                                " is not a generated source");
  }
  return *k;
}

void fill_source(void* out, protocol::Source source, size_t count, uint64_t seed, double lo,
                 double hi, cudaStream_t stream, size_t plane) {
  source_or_throw(source, "labkit::fill_source").fill(out, {count, seed, lo, hi, plane}, stream);
}

uint64_t count_not_source(const void* a, protocol::Source source, size_t count, uint64_t seed,
                          double lo, double hi, cudaStream_t stream, size_t plane) {
  return source_or_throw(source, "labkit::count_not_source")
      .count_not(a, {count, seed, lo, hi, plane}, stream);
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
