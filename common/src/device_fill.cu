#include "labkit/device_fill.hpp"

#include "labkit/cuda_check.hpp"
#include "labkit/random.hpp"

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

}  // namespace

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

void abs_f32(float* data, size_t count, cudaStream_t stream) {
  if (count == 0) return;
  abs_f32_kernel<<<blocks_for(count), kThreads, 0, stream>>>(data, count);
  LABKIT_CHECK_LAUNCH();
}

}  // namespace labkit
