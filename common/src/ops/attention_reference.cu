// Lab 11's reference on the GPU (the benchmark's check of every timed call): attention in
// double, by cuBLAS's DGEMM, CUB's segmented reductions (each row's maximum and sum) and
// elementwise kernels, with the bound of attention.hpp: no hand-written reduction or softmax.
#include <cublas_v2.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/elementwise_fill.cuh"
#include "labkit/half.hpp"
#include "labkit/ops/attention.hpp"
#include "labkit/ops/attention_bench.hpp"

namespace labkit::ops::attention {
namespace {

using elementwise::blocks_for;
using elementwise::kThreads;

// x, |x| and x^2 of 16-bit values in double (any output may be null).
__global__ void widen(const uint16_t* in, bool bf16, size_t n, double* x, double* abs_x,
                      double* sq_x) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const double v = from_16_bits(in[i], bf16);
    if (x != nullptr) x[i] = v;
    if (abs_x != nullptr) abs_x[i] = fabs(v);
    if (sq_x != nullptr) sq_x[i] = v * v;
  }
}

// The scores scaled and masked: -inf where query i may not see key j (causal, j > i).
__global__ void scale_mask(double* s, size_t n, int seq, bool causal, double scale) {
  for (size_t e = blockIdx.x * size_t{blockDim.x} + threadIdx.x; e < n;
       e += size_t{gridDim.x} * blockDim.x) {
    const size_t j = e % seq, i = (e / seq) % seq;
    s[e] = causal && j > i ? -INFINITY : s[e] * scale;
  }
}

// e^(s - the row's max), in place.
__global__ void exp_minus_max(double* s, size_t n, int seq, const double* row_max) {
  for (size_t e = blockIdx.x * size_t{blockDim.x} + threadIdx.x; e < n;
       e += size_t{gridDim.x} * blockDim.x) {
    s[e] = exp(s[e] - row_max[e / seq]);
  }
}

// P = e / the row's sum, P^2, and P a (a: the scores' absolute sums, scaled), in place.
__global__ void normalise(double* s, double* p2, double* a, size_t n, int seq,
                          const double* row_sum, double scale) {
  for (size_t e = blockIdx.x * size_t{blockDim.x} + threadIdx.x; e < n;
       e += size_t{gridDim.x} * blockDim.x) {
    const double p = s[e] / row_sum[e / seq];
    s[e] = p;
    p2[e] = p * p;
    a[e] = p * a[e] * scale;
  }
}

// Counts the elements of o beyond the bound; writes the bound where asked.
__global__ void beyond(const uint16_t* o, bool bf16, size_t n, const double* ref,
                       const double* walk2, const double* score, int dim, double* bound_out,
                       unsigned long long* wrong) {
  for (size_t e = blockIdx.x * size_t{blockDim.x} + threadIdx.x; e < n;
       e += size_t{gridDim.x} * blockDim.x) {
    const double b = bound(ref[e], sqrt(walk2[e]), score[e], dim, bf16);
    if (bound_out != nullptr) bound_out[e] = b;
    const double got = from_16_bits(o[e], bf16);
    if (!(fabs(got - ref[e]) <= b)) atomicAdd(wrong, 1ull);
  }
}

}  // namespace

size_t count_beyond_bound(const void* q, const void* k, const void* v, const void* o, int heads,
                          int seq, int dim, bool causal, bool bf16, cudaStream_t stream,
                          std::vector<double>* ref, std::vector<double>* bound_out) {
  const size_t S = seq, D = dim, head = S * D, square = S * S;
  // Heads a chunk at a time: three seq x seq matrices of doubles per head, at most ~3 GiB.
  const size_t chunk = std::max<size_t>(
      1, std::min<size_t>(heads, (size_t{3} << 30) / (3 * square * sizeof(double))));
  DeviceBuffer<double> qd(chunk * head), qa(chunk * head), kd(chunk * head), ka(chunk * head),
      vd(chunk * head), va(chunk * head), v2(chunk * head), out(chunk * head),
      walk2(chunk * head), score(chunk * head), bnd(bound_out != nullptr ? chunk * head : 0),
      s(chunk * square), p2(chunk * square), a(chunk * square);
  uint64_t wrong = 0;
  // Each row of the scores a segment, for CUB's segmented max and sum.
  std::vector<int64_t> row_starts(chunk * S + 1);
  for (size_t r = 0; r < row_starts.size(); ++r) row_starts[r] = static_cast<int64_t>(r * S);
  DeviceBuffer<int64_t> offsets(row_starts);
  DeviceBuffer<double> row_stat(chunk * S);
  size_t temp_bytes = 0, sum_bytes = 0;
  CUDA_CHECK(cub::DeviceSegmentedReduce::Max(nullptr, temp_bytes, s.get(), row_stat.get(),
                                             static_cast<int>(chunk * S), offsets.get(),
                                             offsets.get() + 1, stream));
  CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, sum_bytes, s.get(), row_stat.get(),
                                             static_cast<int>(chunk * S), offsets.get(),
                                             offsets.get() + 1, stream));
  temp_bytes = std::max<size_t>({temp_bytes, sum_bytes, 1});
  DeviceBuffer<char> temp(temp_bytes);
  if (ref != nullptr) ref->resize(size_t(heads) * head);
  if (bound_out != nullptr) bound_out->resize(size_t(heads) * head);
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  const double one = 1.0, zero = 0.0, scale = 1.0 / std::sqrt(static_cast<double>(dim));
  const long long strideH = static_cast<long long>(head), strideS = static_cast<long long>(square);
  try {
    for (size_t h0 = 0; h0 < static_cast<size_t>(heads); h0 += chunk) {
      const size_t g = std::min<size_t>(chunk, heads - h0), n = g * head;
      const auto* q16 = static_cast<const uint16_t*>(q) + h0 * head;
      const auto* k16 = static_cast<const uint16_t*>(k) + h0 * head;
      const auto* v16 = static_cast<const uint16_t*>(v) + h0 * head;
      widen<<<blocks_for(n), kThreads, 0, stream>>>(q16, bf16, n, qd.get(), qa.get(), nullptr);
      widen<<<blocks_for(n), kThreads, 0, stream>>>(k16, bf16, n, kd.get(), ka.get(), nullptr);
      widen<<<blocks_for(n), kThreads, 0, stream>>>(v16, bf16, n, vd.get(), va.get(), v2.get());
      CUDA_CHECK(cudaGetLastError());
      // Row-major S = Q K^T is column-major S^T = K Q^T: (K as stored)^T times Q as stored.
      auto scores = [&](const double* kk, const double* qq, double* c) {
        CUBLAS_CHECK(cublasDgemmStridedBatched(handle, CUBLAS_OP_T, CUBLAS_OP_N, seq, seq, dim,
                                               &one, kk, dim, strideH, qq, dim, strideH, &zero,
                                               c, seq, strideS, static_cast<int>(g)));
      };
      scores(kd.get(), qd.get(), s.get());
      scores(ka.get(), qa.get(), a.get());
      const size_t m = g * square;
      const int rows = static_cast<int>(g * S);
      scale_mask<<<blocks_for(m), kThreads, 0, stream>>>(s.get(), m, seq, causal, scale);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cub::DeviceSegmentedReduce::Max(temp.get(), temp_bytes, s.get(), row_stat.get(),
                                                 rows, offsets.get(), offsets.get() + 1,
                                                 stream));
      exp_minus_max<<<blocks_for(m), kThreads, 0, stream>>>(s.get(), m, seq, row_stat.get());
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(temp.get(), temp_bytes, s.get(), row_stat.get(),
                                                 rows, offsets.get(), offsets.get() + 1,
                                                 stream));
      normalise<<<blocks_for(m), kThreads, 0, stream>>>(s.get(), p2.get(), a.get(), m, seq,
                                                      row_stat.get(), scale);
      CUDA_CHECK(cudaGetLastError());
      // Row-major O = P V is column-major O^T = V^T P^T: V as stored times P as stored.
      auto weighted = [&](const double* vv, const double* pp, double* c) {
        CUBLAS_CHECK(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, dim, seq, seq,
                                               &one, vv, dim, strideH, pp, seq, strideS, &zero,
                                               c, dim, strideH, static_cast<int>(g)));
      };
      weighted(vd.get(), s.get(), out.get());
      weighted(v2.get(), p2.get(), walk2.get());
      weighted(va.get(), a.get(), score.get());
      wrong += elementwise::tally(stream, [&](unsigned long long* count) {
        beyond<<<blocks_for(n), kThreads, 0, stream>>>(
            static_cast<const uint16_t*>(o) + h0 * head, bf16, n, out.get(), walk2.get(),
            score.get(), dim, bound_out != nullptr ? bnd.get() : nullptr, count);
      });
      if (ref != nullptr) {
        CUDA_CHECK(cudaMemcpyAsync(ref->data() + h0 * head, out.get(), n * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream));
      }
      if (bound_out != nullptr) {
        CUDA_CHECK(cudaMemcpyAsync(bound_out->data() + h0 * head, bnd.get(), n * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream));
      }
      // The next chunk reuses the scratch: the stream orders it.
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    cublasDestroy(handle);
    return static_cast<size_t>(wrong);
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
}

}  // namespace labkit::ops::attention
