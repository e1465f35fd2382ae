#include "labkit/ops/scan_device.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "labkit/cuda_check.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::scan {
namespace {

const uint32_t* u32(const void* p) { return static_cast<const uint32_t*>(p); }

// CUB's scan operator, the same for every CUB version (cub::Sum is gone from CCCL 3).
struct Plus {
  template <typename T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

struct Max {
  __host__ __device__ double operator()(double a, double b) const { return fmax(a, b); }
};

constexpr int kThreads = 256;

unsigned blocks_for(size_t count) {
  const size_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 * 8 ? (blocks == 0 ? 1 : blocks) : 65536 * 8);
}

// The generated input of a test call (the sources draw_on_device gives `in`): element i of n.
struct Draw {
  protocol::Source source = protocol::Source::kArena;
  reduce::ReduceDist dist;  // reduce::kSourceF32
  uint64_t seed = 0;        // kUniformF32, kUniformI32
  float flo = 0, fhi = 0;
  int32_t ilo = 0, ihi = 0;
  __host__ __device__ float f(uint64_t i) const {
    return source == reduce::kSourceF32 ? reduce::reduce_value(dist, i)
                                                  : uniform_f32(seed, i, flo, fhi);
  }
  __host__ __device__ uint32_t u(uint64_t i) const {
    return static_cast<uint32_t>(uniform_i32(seed, i, ilo, ihi));
  }
};

// x[k] = element lo + k (or its square), in double, for k < m.
__global__ void draw_f64_kernel(Draw d, size_t lo, size_t m, bool square, double* x) {
  for (size_t k = blockIdx.x * size_t{blockDim.x} + threadIdx.x; k < m;
       k += size_t{gridDim.x} * blockDim.x) {
    const double v = d.f(lo + k);
    x[k] = square ? v * v : v;
  }
}

__global__ void draw_u32_kernel(Draw d, size_t lo, size_t m, uint32_t* x) {
  for (size_t k = blockIdx.x * size_t{blockDim.x} + threadIdx.x; k < m;
       k += size_t{gridDim.x} * blockDim.x) {
    x[k] = d.u(lo + k);
  }
}

__global__ void abs_f64_kernel(const double* in, double* out, size_t m) {
  for (size_t k = blockIdx.x * size_t{blockDim.x} + threadIdx.x; k < m;
       k += size_t{gridDim.x} * blockDim.x) {
    out[k] = fabs(in[k]);
  }
}

// peak[k] = max(|ref[0]|, ..., |ref[k]|), through `scratch` (m doubles, overwritten).
void running_peak(const double* ref, double* scratch, double* peak, size_t m, void* temp,
                  size_t temp_bytes, cudaStream_t s) {
  abs_f64_kernel<<<blocks_for(m), kThreads, 0, s>>>(ref, scratch, m);
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cub::DeviceScan::InclusiveScan(temp, temp_bytes, scratch, peak, Max{}, m, s));
}

size_t peak_temp_bytes(size_t m) {
  size_t b = 0;
  CUDA_CHECK(cub::DeviceScan::InclusiveScan(nullptr, b, static_cast<const double*>(nullptr),
                                            static_cast<double*>(nullptr), Max{}, m));
  return b;
}

template <typename T>
T last_of(const T* p, size_t m, cudaStream_t s) {
  T host{};
  CUDA_CHECK(cudaMemcpyAsync(&host, p + m - 1, sizeof(T), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  return host;
}

}  // namespace

DeviceReference::DeviceReference(DType dtype, size_t n) : dtype_(dtype), n_(n) {
  if (dtype_ == DType::kF32) {
    x_ = DeviceBuffer<double>(n_);
    ref_ = DeviceBuffer<double>(n_);
    sq_ = DeviceBuffer<double>(n_);
    peak_ = DeviceBuffer<double>(n_);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, x_.get(), ref_.get(), n_));
    temp_bytes_ = std::max(temp_bytes_, peak_temp_bytes(n_));
  } else {
    iref_ = DeviceBuffer<uint32_t>(n_);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, u32(nullptr), iref_.get(), n_));
  }
  temp_ = DeviceBuffer<char>(std::max<size_t>(temp_bytes_, 1));
}

double DeviceReference::scale() const { return bound_scale(n_); }

void DeviceReference::compute(const void* in, cudaStream_t s) {
  size_t bytes = temp_bytes_;
  if (dtype_ == DType::kF32) {
    const float* f = static_cast<const float*>(in);
    to_f64(f, x_.get(), n_, false, s);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), bytes, x_.get(), ref_.get(), n_, s));
    to_f64(f, x_.get(), n_, true, s);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), bytes, x_.get(), sq_.get(), n_, s));
    running_peak(ref_.get(), x_.get(), peak_.get(), n_, temp_.get(), temp_bytes_, s);
  } else {
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), bytes, u32(in), iref_.get(), n_, s));
  }
}

uint64_t DeviceReference::count_wrong(const void* out, cudaStream_t s) const {
  if (dtype_ == DType::kF32) {
    return count_beyond_peak_bound(static_cast<const float*>(out), ref_.get(), sq_.get(),
                                   peak_.get(), 0.0, n_, scale(), s);
  }
  return count_differences(out, iref_.get(), 4 * n_, s);
}

void DeviceReference::download(std::vector<double>* ref, std::vector<double>* bound) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  *ref = ref_.download();
  const std::vector<double> sq = sq_.download();
  const std::vector<double> peak = peak_.download();
  ref->resize(n_);
  bound->assign(n_, 0.0);
  const double c = scale();
  for (size_t i = 0; i < n_; ++i) (*bound)[i] = c * (std::sqrt(sq[i]) + peak[i]);
}

void DeviceReference::download(std::vector<int64_t>* ref) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint32_t> u = iref_.download();
  ref->assign(n_, 0);
  for (size_t i = 0; i < n_; ++i) (*ref)[i] = static_cast<int32_t>(u[i]);
}

DeviceCheck check_on_device(DType dtype, size_t n, const BufferSpec& in, const void* out) {
  // The reference a piece at a time, each piece's scan started from the exact carry of those
  // before it: the judge's memory is a few pieces, not n elements (a float reference of n
  // elements in double is 24 n bytes: 103 GB at 2^32, beside the worker's 34 GB of `in` and
  // `out` on the same GPU).
  Draw d;
  d.source = in.source;
  d.seed = protocol::source_seed(in.seed, 0);
  if (dtype == DType::kF32 && in.source == reduce::kSourceF32) {
    d.dist = reduce::make_reduce_dist(d.seed, n);
  } else if (dtype == DType::kF32 && in.source == protocol::Source::kUniformF32) {
    d.flo = static_cast<float>(in.lo);
    d.fhi = static_cast<float>(in.hi);
  } else if (dtype == DType::kI32 && in.source == protocol::Source::kUniformI32) {
    d.ilo = static_cast<int32_t>(in.lo);
    d.ihi = static_cast<int32_t>(in.hi);
  } else {
    throw std::invalid_argument("scan::check_on_device: `in` is not a source the scan tests draw");
  }
  const size_t piece = std::min(n, kCheckPiece);
  const size_t last = n - (n - 1) / piece * piece;  // the last piece's size
  cudaStream_t s = nullptr;
  DeviceCheck found;
  found.piece_size = piece;
  if (dtype == DType::kF32) {
    DeviceBuffer<double> x(piece), ref(piece), sq(piece), peak(piece);
    size_t temp_bytes = 0;
    for (size_t m : {piece, last}) {
      size_t b = 0;
      CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, b, x.get(), ref.get(), Plus{}, 0.0,
                                                static_cast<int>(m), s));
      temp_bytes = std::max({temp_bytes, b, peak_temp_bytes(m)});
    }
    DeviceBuffer<char> temp(std::max<size_t>(temp_bytes, 1));
    const double scale = bound_scale(n);
    double sum = 0, sumsq = 0;  // the exclusive prefixes at the piece's start
    double peak_before = 0;     // the largest |prefix| before it
    for (size_t lo = 0; lo < n; lo += piece) {
      const size_t m = std::min(piece, n - lo);
      size_t b = temp_bytes;
      draw_f64_kernel<<<blocks_for(m), kThreads, 0, s>>>(d, lo, m, false, x.get());
      LABKIT_CHECK_LAUNCH();
      CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp.get(), b, x.get(), ref.get(), Plus{}, sum,
                                                static_cast<int>(m), s));
      const double x_last = last_of(x.get(), m, s);
      const double ref_last = last_of(ref.get(), m, s);
      draw_f64_kernel<<<blocks_for(m), kThreads, 0, s>>>(d, lo, m, true, x.get());
      LABKIT_CHECK_LAUNCH();
      CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp.get(), b, x.get(), sq.get(), Plus{}, sumsq,
                                                static_cast<int>(m), s));
      running_peak(ref.get(), x.get(), peak.get(), m, temp.get(), temp_bytes, s);
      const uint64_t wrong = count_beyond_peak_bound(static_cast<const float*>(out) + lo, ref.get(),
                                                     sq.get(), peak.get(), peak_before, m, scale, s);
      if (wrong != 0 && found.wrong == 0) {
        found.piece_lo = lo;
        found.sum = sum;
        found.sumsq = sumsq;
        found.peak = peak_before;
      }
      found.wrong += wrong;
      peak_before = std::max(peak_before, last_of(peak.get(), m, s));
      sumsq = last_of(sq.get(), m, s) + x_last * x_last;
      sum = ref_last + x_last;
    }
  } else {
    DeviceBuffer<uint32_t> x(piece), ref(piece);
    size_t temp_bytes = 0;
    for (size_t m : {piece, last}) {
      size_t b = 0;
      CUDA_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, b, x.get(), ref.get(), Plus{}, 0u,
                                                static_cast<int>(m), s));
      temp_bytes = std::max(temp_bytes, b);
    }
    DeviceBuffer<char> temp(std::max<size_t>(temp_bytes, 1));
    uint32_t sum = 0;  // modulo 2^32
    for (size_t lo = 0; lo < n; lo += piece) {
      const size_t m = std::min(piece, n - lo);
      size_t b = temp_bytes;
      draw_u32_kernel<<<blocks_for(m), kThreads, 0, s>>>(d, lo, m, x.get());
      LABKIT_CHECK_LAUNCH();
      CUDA_CHECK(cub::DeviceScan::ExclusiveScan(temp.get(), b, x.get(), ref.get(), Plus{}, sum,
                                                static_cast<int>(m), s));
      const uint64_t wrong =
          count_differences(static_cast<const uint32_t*>(out) + lo, ref.get(), 4 * m, s);
      if (wrong != 0 && found.wrong == 0) {
        found.piece_lo = lo;
        found.isum = sum;
      }
      found.wrong += wrong;
      sum = last_of(ref.get(), m, s) + last_of(x.get(), m, s);
    }
  }
  return found;
}

}  // namespace labkit::ops::scan
