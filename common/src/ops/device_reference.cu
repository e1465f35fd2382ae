// The judges' double-precision references of the families' sums, on the GPU: a reduction's sum
// (lab 05) and a CSR matrix's row sums (lab 06). Compiled into labkit_references, which the
// reduce and spmv judges link (never a worker or the executor).
//
// Written with CUB's device-wide algorithms on purpose, not as hand-written kernels: this file
// ships in every student release, and a shared-memory tree or a warp-per-row SpMV here would be
// a lab's answer in working code. CUB is what every lab's policy refuses (its headers and its
// functions, grader/policy/rules.py), so nothing here earns anything pasted into a lab, and it is
// as fast as the labs' baseline. The only kernel of this file is a copy (split_kernel).
// docs/release.md, "Judge-side kernels", lists what a release may hold.
#include "labkit/ops/device_reference.hpp"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/elementwise_fill.cuh"

namespace labkit {
namespace {

using elementwise::blocks_for;
using elementwise::kThreads;

// A sum and a sum of absolute values, added together.
struct SumPair {
  double sum;
  double abs_sum;
};

struct AddPairs {
  __host__ __device__ SumPair operator()(const SumPair& a, const SumPair& b) const {
    return SumPair{a.sum + b.sum, a.abs_sum + b.abs_sum};
  }
};

struct FloatToPair {
  __host__ __device__ SumPair operator()(float v) const {
    const double d = v;
    return SumPair{d, fabs(d)};
  }
};

struct IntToWide {
  __host__ __device__ long long operator()(int32_t v) const { return v; }
};

// Entry e of a CSR matrix times its x, in double, and its absolute value.
struct EntryTerm {
  const int32_t* col_idx;
  const float* values;
  const float* x;
  __host__ __device__ SumPair operator()(long long e) const {
    const double t = static_cast<double>(values[e]) * static_cast<double>(x[col_idx[e]]);
    return SumPair{t, fabs(t)};
  }
};

// out_a[i] = in[i].sum, out_b[i] = in[i].abs_sum: a copy.
__global__ void split_kernel(const SumPair* in, size_t n, double* out_a, double* out_b) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out_a[i] = in[i].sum;
    out_b[i] = in[i].abs_sum;
  }
}

}  // namespace

SumAbs sum_abs_f64(const float* x, size_t count, cudaStream_t stream) {
  SumAbs r;
  if (count == 0) return r;
  const auto in = thrust::make_transform_iterator(x, FloatToPair{});
  DeviceBuffer<SumPair> out(1);
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out.get(), count, AddPairs{},
                                       SumPair{0.0, 0.0}, stream));
  DeviceBuffer<char> temp(bytes > 0 ? bytes : 1);
  CUDA_CHECK(cub::DeviceReduce::Reduce(temp.get(), bytes, in, out.get(), count, AddPairs{},
                                       SumPair{0.0, 0.0}, stream));
  SumPair host{0.0, 0.0};
  CUDA_CHECK(cudaMemcpyAsync(&host, out.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  r.sum = host.sum;
  r.abs_sum = host.abs_sum;
  return r;
}

int64_t sum_i32_i64(const int32_t* x, size_t count, cudaStream_t stream) {
  if (count == 0) return 0;
  // |x| < 2^31 and count < 2^32: the sum fits in 64 bits, exactly.
  const auto in = thrust::make_transform_iterator(x, IntToWide{});
  DeviceBuffer<long long> out(1);
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in, out.get(), count, stream));
  DeviceBuffer<char> temp(bytes > 0 ? bytes : 1);
  CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), bytes, in, out.get(), count, stream));
  long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, out.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<int64_t>(host);
}

void spmv_reference_f64(const int32_t* row_ptr, const int32_t* col_idx, const float* values,
                        const float* x, int64_t rows, double* ref, double* abs_ref,
                        cudaStream_t stream) {
  if (rows <= 0) return;
  // Each row a segment [row_ptr[r], row_ptr[r + 1]) of the entries' terms, summed by CUB.
  const auto terms = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                                     EntryTerm{col_idx, values, x});
  DeviceBuffer<SumPair> sums(static_cast<size_t>(rows));
  const int segments = static_cast<int>(rows);   // row_ptr has rows + 1 int32 entries
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(nullptr, bytes, terms, sums.get(), segments,
                                                row_ptr, row_ptr + 1, AddPairs{},
                                                SumPair{0.0, 0.0}, stream));
  DeviceBuffer<char> temp(bytes > 0 ? bytes : 1);
  CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(temp.get(), bytes, terms, sums.get(), segments,
                                                row_ptr, row_ptr + 1, AddPairs{},
                                                SumPair{0.0, 0.0}, stream));
  split_kernel<<<blocks_for(static_cast<size_t>(rows)), kThreads, 0, stream>>>(
      sums.get(), static_cast<size_t>(rows), ref, abs_ref);
  LABKIT_CHECK_LAUNCH();
  // `sums` and `temp` are freed on return: wait for the work that uses them.
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace labkit
