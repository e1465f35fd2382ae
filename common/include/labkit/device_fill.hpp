// Device-side fills used by the worker and the benchmark judge: counter-based random inputs
// (the same numbers labkit::uniform_f32 gives on the CPU) and 32-bit patterns (poison,
// canaries). Compiled by nvcc once, in labkit_cuda; callable from plain C++.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace labkit {

void fill_uniform_f32(float* out, size_t count, uint64_t seed, float lo, float hi,
                      cudaStream_t stream);
void fill_uniform_i32(int32_t* out, size_t count, uint64_t seed, int32_t lo, int32_t hi,
                      cudaStream_t stream);
// Writes `pattern` to every aligned 32-bit word of [out, out + bytes); bytes % 4 == 0.
void fill_pattern32(void* out, size_t bytes, uint32_t pattern, cudaStream_t stream);
// fabs of every element, in place (the benchmark's |A|, |B| for the error bound).
void abs_f32(float* data, size_t count, cudaStream_t stream);

}  // namespace labkit
