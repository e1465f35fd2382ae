#include "labkit/ops/reduce_bench.hpp"

#include <cub/device/device_reduce.cuh>

#include <cmath>
#include <cstring>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/device_reference.hpp"
#include "labkit/ops/reduce.hpp"

namespace labkit::ops::reduce {
namespace {

class CubSum : public bench::Baseline {
 public:
  explicit CubSum(size_t n) : n_(n), in_(n), out_(1) {
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes_, in_.get(), out_.get(), n_));
    temp_ = DeviceBuffer<char>(std::max<size_t>(temp_bytes_, 1));
  }

  void prepare(uint64_t seed, cudaStream_t s) override {
    fill_source(in_.get(), kSourceF32, n_, protocol::buffer_seed(seed, Sig::kIn), 0, 0, s);
  }

  void run(cudaStream_t s) override {
    CUDA_CHECK(cub::DeviceReduce::Sum(temp_.get(), temp_bytes_, in_.get(), out_.get(), n_, s));
  }

  // The student's sum against this call's inputs summed in double, with the tests' bound.
  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kOut || outputs[Sig::kOut].size() != sizeof(float)) {
      return "out has the wrong size";
    }
    const SumAbs ref = sum_abs_f64(in_.get(), n_, s);
    const double bound = sum_bound(n_, ref.abs_sum);
    const CompareResult r = compare_vector(observe(outputs[Sig::kOut], DType::kF32), {ref.sum},
                                           {bound}, VectorLayout{1, 1, {}, "out"});
    return r.ok() ? "" : r.report();
  }

 private:
  size_t n_;
  DeviceBuffer<float> in_, out_;
  size_t temp_bytes_ = 0;
  DeviceBuffer<char> temp_;
};

}  // namespace

bench::Spec benchmark(const std::string& variant, size_t n, size_t workspace) {
  bench::Spec s;
  s.name = "reduce/" + variant + "/" + std::to_string(n);
  s.call.variant = variant;
  s.call.params = Sig::params(n, DType::kF32);
  // Garbage in the workspace, once: the launcher may not rely on its contents anyway.
  std::vector<float> garbage(workspace);
  for (size_t i = 0; i < workspace; ++i) garbage[i] = 100.0f + static_cast<float>(i % 997);
  Bytes garbage_bytes(workspace * sizeof(float));
  std::memcpy(garbage_bytes.data(), garbage.data(), garbage_bytes.size());
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{n, workspace, DType::kF32});
  BufferSpec& in = s.call.buffers[Sig::kIn];
  in.source = ops::reduce::kSourceF32;
  in.lo = in.hi = 0;
  s.call.inputs.emplace_back(Sig::kCount);
  s.call.inputs[0][Sig::kWorkspace] = std::move(garbage_bytes);
  s.flop = static_cast<double>(n);
  s.bytes = 4.0 * static_cast<double>(n);
  s.baseline_name = "CUB DeviceReduce::Sum (CCCL " +
                    bench::version_text(CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION) + ")";
  s.baseline = [n] { return std::make_unique<CubSum>(n); };
  return s;
}

}  // namespace labkit::ops::reduce
