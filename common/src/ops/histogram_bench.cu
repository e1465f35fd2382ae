#include "labkit/ops/histogram_bench.hpp"

#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/histogram.hpp"
#include "labkit/ops/histogram_dist.hpp"
#include "labkit/ops/histogram_signature.hpp"

namespace labkit::ops::histogram {
namespace {

// CUB's histogram of the benchmark's inputs (the timed baseline); its counts of the same inputs,
// made once per prepare() into a buffer of their own, are what every timed student call must
// equal (counts are exact: CUB's are the counts).
class CubHistogram : public bench::Baseline {
 public:
  CubHistogram(DType dtype, uint32_t bins, size_t n, uint32_t dist)
      : dtype_(dtype), bins_(bins), n_(n), dist_(dist), in_(n * elem_size(dtype)), hist_(bins),
        reference_(bins) {
    histogram(nullptr, temp_bytes_, hist_.get(), nullptr);
    temp_ = DeviceBuffer<char>(std::max<size_t>(temp_bytes_, 1));
  }

  void prepare(uint64_t seed, cudaStream_t s) override {
    fill_source(in_.get(), dtype_ == DType::kU8 ? kSourceU8 : kSourceI32, n_,
                protocol::buffer_seed(seed, Sig::kIn), dist_, bins_, s);
    reference_ready_ = false;
  }

  void run(cudaStream_t s) override { histogram(temp_.get(), temp_bytes_, hist_.get(), s); }

  bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kBins || outputs[Sig::kBins] == nullptr) return false;
    std::vector<uint32_t> got(bins_);
    CUDA_CHECK(cudaMemcpyAsync(got.data(), outputs[Sig::kBins], 4 * bins_,
                               cudaMemcpyDeviceToHost, s));
    return got == reference(s);
  }

  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kBins || outputs[Sig::kBins].size() != 4 * size_t{bins_}) {
      return "bins has the wrong size";
    }
    const std::vector<uint32_t>& ref = reference(s);
    const std::vector<int64_t> expected(ref.begin(), ref.end());
    const VectorLayout layout{bins_, std::max<size_t>(bins_ / 16, 1), {}, "bins"};
    const CompareResult r = compare_vector_exact(observe_counts(outputs[Sig::kBins]), expected,
                                                 layout);
    return r.ok() ? "" : "bins differ from the exact counts: " + r.report();
  }

 private:
  // CUB's counts of the last prepare()'s inputs, once per prepare().
  const std::vector<uint32_t>& reference(cudaStream_t s) {
    if (!reference_ready_) {
      histogram(temp_.get(), temp_bytes_, reference_.get(), s);
      reference_host_.resize(bins_);
      CUDA_CHECK(cudaMemcpyAsync(reference_host_.data(), reference_.get(), 4 * bins_,
                                 cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      reference_ready_ = true;
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    return reference_host_;
  }

  // One bin per value: bins + 1 evenly spaced levels from 0 to bins.
  void histogram(void* temp, size_t& temp_bytes, unsigned int* out, cudaStream_t s) {
    const int levels = static_cast<int>(bins_) + 1;
    const auto n = static_cast<int64_t>(n_);
    if (dtype_ == DType::kU8) {
      CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
          temp, temp_bytes, reinterpret_cast<const unsigned char*>(in_.get()), out, levels, 0,
          static_cast<int>(bins_), n, s));
    } else {
      CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
          temp, temp_bytes, reinterpret_cast<const int*>(in_.get()), out, levels, 0,
          static_cast<int>(bins_), n, s));
    }
  }

  DType dtype_;
  uint32_t bins_;
  size_t n_;
  uint32_t dist_;
  DeviceBuffer<char> in_;
  DeviceBuffer<unsigned int> hist_, reference_;
  std::vector<uint32_t> reference_host_;
  size_t temp_bytes_ = 0;
  DeviceBuffer<char> temp_;
  bool reference_ready_ = false;
};

}  // namespace

bench::Spec benchmark(const std::string& variant, DType dtype, uint32_t bins, size_t n,
                      uint32_t dist) {
  bench::Spec s;
  std::ostringstream name;
  name << "histogram/" << variant << "/" << dtype_name(dtype) << "/" << bins << "/" << n;
  if (dist != kUniform) name << "/" << dist_name(dist);
  s.name = name.str();
  s.call.variant = variant;
  s.call.params = Sig::params(n, dtype, bins);
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{n, bins, dtype});
  BufferSpec& in = s.call.buffers[Sig::kIn];
  in.source = dtype == DType::kU8 ? kSourceU8
                                  : kSourceI32;
  in.lo = dist;
  in.hi = bins;
  // Fresh garbage in the bins before every timed call, as in the tests (histogram.hpp).
  BufferSpec& out = s.call.buffers[Sig::kBins];
  out.source = protocol::Source::kUniformI32;
  out.lo = kGarbageLo;
  out.hi = kGarbageHi;
  s.flop = static_cast<double>(n);
  s.bytes = static_cast<double>(n) * static_cast<double>(elem_size(dtype)) + 4.0 * bins;
  s.baseline_name = "CUB DeviceHistogram::HistogramEven (CCCL " +
                    bench::version_text(CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION) + ")";
  s.baseline = [dtype, bins, n, dist] {
    return std::make_unique<CubHistogram>(dtype, bins, n, dist);
  };
  return s;
}

}  // namespace labkit::ops::histogram
