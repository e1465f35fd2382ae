#include "labkit/ops/scan_bench.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/scan.hpp"
#include "labkit/ops/scan_device.hpp"

namespace labkit::ops::scan {
namespace {

// CUB's exclusive scan of the benchmark's inputs (the timed baseline), and the reference every
// timed student call is checked against (DeviceReference, labkit/ops/scan_device.hpp).
class CubScan : public bench::Baseline {
 public:
  CubScan(DType dtype, size_t n) : dtype_(dtype), n_(n), in_(n), out_(n), reference_(dtype, n) {
    if (dtype_ == DType::kF32) {
      CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, in_.get(), out_.get(), n_));
    } else {
      CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes_, i32(in_.get()),
                                               i32(out_.get()), n_));
    }
    temp_ = DeviceBuffer<char>(std::max<size_t>(temp_bytes_, 1));
  }

  void prepare(uint64_t seed, cudaStream_t s) override {
    const uint64_t in_seed = protocol::buffer_seed(seed, Sig::kIn);
    if (dtype_ == DType::kF32) {
      fill_source(in_.get(), reduce::kSourceF32, n_, in_seed, 0, 0, s);
    } else {
      fill_uniform_i32(i32(in_.get()), n_, in_seed, reduce::kIntLo, reduce::kIntHi, s);
    }
    reference_ready_ = false;
  }

  void run(cudaStream_t s) override {
    if (dtype_ == DType::kF32) {
      CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), temp_bytes_, in_.get(), out_.get(),
                                               n_, s));
    } else {
      CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), temp_bytes_, i32(in_.get()),
                                               i32(out_.get()), n_, s));
    }
  }

  bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kOut || outputs[Sig::kOut] == nullptr) return false;
    reference(s);
    return reference_.count_wrong(outputs[Sig::kOut], s) == 0;
  }

  // The report of a wrong call (right_on_device found a wrong element, or could not look).
  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kOut || outputs[Sig::kOut].size() != 4 * n_) {
      return "out has the wrong size";
    }
    reference(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    const VectorLayout layout{n_, 4096, {}, "out"};
    Observed got = observe(outputs[Sig::kOut], dtype_);
    if (dtype_ == DType::kF32) {
      std::vector<double> ref, bound;
      reference_.download(&ref, &bound);
      const CompareResult r = compare_vector(got, ref, bound, layout);
      return r.ok() ? "" : "out differs from the exclusive scan in double: " + r.report();
    }
    std::vector<int64_t> ref;
    reference_.download(&ref);
    for (size_t i = 0; i < n_; ++i) {
      if (got.unwritten[i] != 0 && got.ints[i] == ref[i]) got.unwritten[i] = 0;  // poison bits
    }
    const CompareResult r = compare_vector_exact(got, ref, layout);
    return r.ok() ? "" : "out differs from the exact exclusive scan (modulo 2^32): " + r.report();
  }

 private:
  static int* i32(float* p) { return reinterpret_cast<int*>(p); }

  // The reference of the last prepare()'s inputs, once per prepare().
  void reference(cudaStream_t s) {
    if (reference_ready_) return;
    reference_.compute(in_.get(), s);
    reference_ready_ = true;
  }

  DType dtype_;
  size_t n_;
  DeviceBuffer<float> in_, out_;  // ints live here too, as their bits
  DeviceReference reference_;
  size_t temp_bytes_ = 0;
  DeviceBuffer<char> temp_;
  bool reference_ready_ = false;
};

}  // namespace

bench::Spec benchmark(const std::string& variant, DType dtype, size_t n, size_t workspace) {
  bench::Spec s;
  s.name = "scan/" + variant + "/" + dtype_name(dtype) + "/" + std::to_string(n);
  s.call.variant = variant;
  s.call.params = Sig::params(n, dtype);
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{n, workspace, dtype});
  BufferSpec& in = s.call.buffers[Sig::kIn];
  if (dtype == DType::kF32) {
    in.source = reduce::kSourceF32;
    in.lo = in.hi = 0;
  } else {
    in.source = protocol::Source::kUniformI32;
    in.lo = reduce::kIntLo;
    in.hi = reduce::kIntHi;
  }
  // Garbage in the workspace, once: the launcher may not rely on its contents anyway (the
  // framework refills in-out buffers with fresh garbage before every timed call).
  std::vector<uint32_t> garbage(workspace);
  for (size_t i = 0; i < workspace; ++i) garbage[i] = static_cast<uint32_t>(hash64(0x5CA7, i));
  Bytes garbage_bytes(workspace * 4);
  std::memcpy(garbage_bytes.data(), garbage.data(), garbage_bytes.size());
  s.call.inputs.emplace_back(Sig::kCount);
  s.call.inputs[0][Sig::kWorkspace] = std::move(garbage_bytes);
  s.flop = static_cast<double>(n);
  s.bytes = 8.0 * static_cast<double>(n);
  s.baseline_name = "CUB DeviceScan::ExclusiveSum (CCCL " +
                    bench::version_text(CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION) + ")";
  s.baseline = [dtype, n] { return std::make_unique<CubScan>(dtype, n); };
  return s;
}

}  // namespace labkit::ops::scan
