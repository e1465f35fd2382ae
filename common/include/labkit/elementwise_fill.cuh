// The one pair of kernels behind every generated source (labkit/source.hpp): a source is a value
// per index, `Gen`, a functor with `__device__ value_type operator()(uint64_t i) const` and a
// `value_type`; `fill_elementwise` writes gen(i) to out[i], `count_not_elementwise` counts the
// elements of `a` that differ from it bit for bit (a tally: one atomic per differing element,
// none in the common case where nothing differs, no reduction). For .cu files: a family's source
// instantiates them with its own generator (common/src/ops/*_source.cu). The profile stage
// tells these kernels from the student's by their mangled names (_ZN6labkit...): ncu's default
// names print a template kernel without its scope ("fill_kernel"), which parse_profile would
// take for the student's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/source.hpp"

namespace labkit {
namespace elementwise {

inline constexpr int kThreads = 256;

inline unsigned blocks_for(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 * 8 ? (blocks == 0 ? 1 : blocks) : 65536 * 8);
}

template <size_t kBytes> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

template <typename T>
__device__ inline bool same_bits(const T& a, const T& b) {
  typename Word<sizeof(T)>::type x, y;
  memcpy(&x, &a, sizeof(T));
  memcpy(&y, &b, sizeof(T));
  return x == y;
}

template <typename Gen>
__global__ void fill_kernel(typename Gen::value_type* out, size_t count, Gen gen) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = gen(i);
  }
}

template <typename Gen>
__global__ void count_not_kernel(const typename Gen::value_type* a, size_t count, Gen gen,
                                 unsigned long long* differ) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (!same_bits(a[i], gen(i))) atomicAdd(differ, 1ull);
  }
}

// Runs `launch(differ)` on `stream` with a zeroed device counter and returns the count it left;
// synchronises. cudaMalloc, not the stream-ordered allocator: these run in the confined executor
// too (generated inputs of a correctness call), where creating the allocator's pool opened a file.
template <typename Launch>
uint64_t tally(cudaStream_t stream, Launch&& launch) {
  DeviceBuffer<unsigned long long> differ(1);
  CUDA_CHECK(cudaMemsetAsync(differ.get(), 0, sizeof(unsigned long long), stream));
  launch(differ.get());
  LABKIT_CHECK_LAUNCH();
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, differ.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace elementwise

template <typename Gen>
void fill_elementwise(void* out, size_t count, const Gen& gen, cudaStream_t stream) {
  if (count == 0) return;
  elementwise::fill_kernel<<<elementwise::blocks_for(count), elementwise::kThreads, 0, stream>>>(
      static_cast<typename Gen::value_type*>(out), count, gen);
  LABKIT_CHECK_LAUNCH();
}

// Synchronises `stream`.
template <typename Gen>
uint64_t count_not_elementwise(const void* a, size_t count, const Gen& gen, cudaStream_t stream) {
  if (count == 0) return 0;
  return elementwise::tally(stream, [&](unsigned long long* differ) {
    elementwise::count_not_kernel<<<elementwise::blocks_for(count), elementwise::kThreads, 0,
                                    stream>>>(static_cast<const typename Gen::value_type*>(a),
                                              count, gen, differ);
  });
}

// A family's generated source (labkit/source.hpp) from `Make`, a function of the draw's
// arguments that returns its generator: the fill and the bit-for-bit check draw the same values
// (constexpr: the entries are initialised before any other static initialiser reads them).
template <auto Make>
constexpr SourceKind generated_source(protocol::Source id, const char* name, uint32_t elem_size,
                            size_t (*plane)(const std::vector<uint64_t>&, const std::string&) =
                                nullptr) {
  return {id, name, elem_size,
          [](void* out, const SourceArgs& a, cudaStream_t s) {
            fill_elementwise(out, a.count, Make(a), s);
          },
          [](const void* x, const SourceArgs& a, cudaStream_t s) {
            return count_not_elementwise(x, a.count, Make(a), s);
          },
          plane};
}

}  // namespace labkit
