#include "labkit/ops/scan_device.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>

#include "labkit/cuda_check.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/device_fill.hpp"

namespace labkit::ops::scan {
namespace {

const uint32_t* u32(const void* p) { return static_cast<const uint32_t*>(p); }

}  // namespace

DeviceReference::DeviceReference(DType dtype, size_t n) : dtype_(dtype), n_(n) {
  if (dtype_ == DType::kF32) {
    x_ = DeviceBuffer<double>(n_);
    ref_ = DeviceBuffer<double>(n_);
    sq_ = DeviceBuffer<double>(n_);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, x_.get(), ref_.get(), n_));
  } else {
    iref_ = DeviceBuffer<uint32_t>(n_);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, u32(nullptr), iref_.get(), n_));
  }
  temp_ = DeviceBuffer<char>(std::max<size_t>(temp_bytes_, 1));
}

double DeviceReference::scale() const {
  return kScanBoundC * std::sqrt(static_cast<double>(n_)) * std::ldexp(1.0, -24);
}

void DeviceReference::compute(const void* in, cudaStream_t s) {
  size_t bytes = temp_bytes_;
  if (dtype_ == DType::kF32) {
    const float* f = static_cast<const float*>(in);
    to_f64(f, x_.get(), n_, false, s);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), bytes, x_.get(), ref_.get(), n_, s));
    to_f64(f, x_.get(), n_, true, s);
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), bytes, x_.get(), sq_.get(), n_, s));
  } else {
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), bytes, u32(in), iref_.get(), n_, s));
  }
}

uint64_t DeviceReference::count_wrong(const void* out, cudaStream_t s) const {
  if (dtype_ == DType::kF32) {
    return count_beyond_walk_bound(static_cast<const float*>(out), ref_.get(), sq_.get(), n_,
                                   scale(), s);
  }
  return count_differences(out, iref_.get(), 4 * n_, s);
}

void DeviceReference::download(std::vector<double>* ref, std::vector<double>* bound) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  *ref = ref_.download();
  const std::vector<double> sq = sq_.download();
  ref->resize(n_);
  bound->assign(n_, 0.0);
  const double c = scale();
  for (size_t i = 0; i < n_; ++i) (*bound)[i] = c * (std::sqrt(sq[i]) + std::fabs((*ref)[i]));
}

void DeviceReference::download(std::vector<int64_t>* ref) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint32_t> u = iref_.download();
  ref->assign(n_, 0);
  for (size_t i = 0; i < n_; ++i) (*ref)[i] = static_cast<int32_t>(u[i]);
}

bool right_on_device(DType dtype, size_t n, const BufferSpec& in, const void* out) {
  DeviceBuffer<float> x(n);  // ints live here too, as their bits
  fill_source(x.get(), in.source, n, protocol::source_seed(in.seed, 0), in.lo, in.hi, nullptr);
  DeviceReference reference(dtype, n);
  reference.compute(x.get(), nullptr);
  return reference.count_wrong(out, nullptr) == 0;
}

}  // namespace labkit::ops::scan
