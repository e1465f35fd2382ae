#include "labkit/device_compare.hpp"

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/elementwise_fill.cuh"

namespace labkit {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

// As compare.cpp: the poison (never written) and a non-finite element are wrong whatever the
// bound; otherwise wrong unless |got - ref| <= bound.
__device__ bool outside(float got, double ref, double bound) {
  if (__float_as_uint(got) == kPoisonBits || !isfinite(got)) return true;
  const double err = fabs(__dsub_rn(static_cast<double>(got), ref));
  return !(err <= bound);
}

// A tally, not a reduction: each element outside its bound adds 1 to the count, on its own.
__global__ void walk_bound_kernel(const float* got, const double* ref, const double* sq, size_t n,
                                  double scale, unsigned long long* wrong) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    if (outside(got[i], ref[i], __dmul_rn(scale, __dadd_rn(sqrt(sq[i]), fabs(ref[i]))))) {
      atomicAdd(wrong, 1ull);
    }
  }
}

__global__ void peak_bound_kernel(const float* got, const double* ref, const double* sq,
                                  const double* peak, double peak_before, size_t n, double scale,
                                  unsigned long long* wrong) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    mine += outside(got[i], ref[i],
                    __dmul_rn(scale, __dadd_rn(sqrt(sq[i]), fmax(peak_before, peak[i]))));
  }
  if (mine != 0) atomicAdd(wrong, mine);
}

__global__ void row_bound_kernel(const float* got, const double* ref, const double* abs_ref,
                                 const int32_t* row_ptr, size_t rows, double c_entry,
                                 double c_walk, unsigned long long* wrong) {
  for (size_t r = blockIdx.x * size_t{blockDim.x} + threadIdx.x; r < rows;
       r += size_t{gridDim.x} * blockDim.x) {
    const double len = static_cast<double>(static_cast<int64_t>(row_ptr[r + 1]) - row_ptr[r]);
    const double per = fmin(__dmul_rn(c_entry, len), __dmul_rn(c_walk, sqrt(len)));
    if (outside(got[r], ref[r], __dmul_rn(__dmul_rn(per, 0x1p-24), abs_ref[r]))) {
      atomicAdd(wrong, 1ull);
    }
  }
}

}  // namespace

uint64_t count_beyond_walk_bound(const float* got, const double* ref, const double* sq, size_t n,
                                 double scale, cudaStream_t stream) {
  if (n == 0) return 0;
  return elementwise::tally(stream, [&](unsigned long long* wrong) {
    walk_bound_kernel<<<blocks_for(n), kThreads, 0, stream>>>(got, ref, sq, n, scale, wrong);
  });
}

uint64_t count_beyond_peak_bound(const float* got, const double* ref, const double* sq,
                                 const double* peak, double peak_before, size_t n, double scale,
                                 cudaStream_t stream) {
  if (n == 0) return 0;
  return elementwise::tally(stream, [&](unsigned long long* wrong) {
    peak_bound_kernel<<<blocks_for(n), kThreads, 0, stream>>>(got, ref, sq, peak, peak_before, n,
                                                              scale, wrong);
  });
}

uint64_t count_beyond_row_bound(const float* got, const double* ref, const double* abs_ref,
                                const int32_t* row_ptr, size_t rows, double c_entry,
                                double c_walk, cudaStream_t stream) {
  if (rows == 0) return 0;
  return elementwise::tally(stream, [&](unsigned long long* wrong) {
    row_bound_kernel<<<blocks_for(rows), kThreads, 0, stream>>>(got, ref, abs_ref, row_ptr, rows,
                                                                c_entry, c_walk, wrong);
  });
}

}  // namespace labkit
