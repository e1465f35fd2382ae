#include "labkit/ops/attention_bench.hpp"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/attention.hpp"
#include "labkit/ops/attention_signature.hpp"

namespace labkit::ops::attention {
namespace {

namespace fe = cudnn_frontend;

void check(fe::error_t status, const char* what) {
  if (status.is_bad()) {
    throw std::runtime_error(std::string("cuDNN frontend: ") + what + ": " +
                             status.get_message());
  }
}

std::string cudnn_version() {
  const size_t v = cudnnGetVersion();  // major * 10000 + minor * 100 + patch (cuDNN 9)
  return bench::version_text(static_cast<int>(v / 10000), static_cast<int>(v / 100 % 100),
                             static_cast<int>(v % 100));
}

// cuDNN's scaled dot-product attention, forward, inference (no statistics kept): the timed
// baseline, on Q, K, V drawn as the worker draws them. The graph is built once per benchmark
// (heuristics mode A: cuDNN's own choice of engine).
class CudnnAttention : public bench::Baseline {
 public:
  CudnnAttention(int heads, int seq, int dim, bool causal, DType dtype)
      : heads_(heads), seq_(seq), dim_(dim), causal_(causal), bf16_(dtype == DType::kBF16),
        q_(count()), k_(count()), v_(count()), o_(count()) {
    CUDNN_CHECK(cudnnCreate(&handle_));
    try {
      build();
    } catch (...) {
      cudnnDestroy(handle_);
      throw;
    }
  }
  ~CudnnAttention() override { cudnnDestroy(handle_); }

  void prepare(uint64_t seed, cudaStream_t s) override {
    DeviceBuffer<uint16_t>* bufs[] = {&q_, &k_, &v_};
    const int roles[] = {Sig::kQ, Sig::kK, Sig::kV};
    for (int b = 0; b < 3; ++b) {
      fill_uniform_16(bufs[b]->get(), bf16_, count(),
                      protocol::buffer_seed(seed, roles[b]), -kUnitRange, kUnitRange, s);
    }
  }

  void run(cudaStream_t s) override {
    CUDNN_CHECK(cudnnSetStream(handle_, s));
    std::unordered_map<int64_t, void*> pack = {
        {kQ, q_.get()}, {kK, k_.get()}, {kV, v_.get()}, {kO, o_.get()}};
    check(graph_->execute(handle_, pack, workspace_.get()), "execute");
  }

  bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kO || outputs[Sig::kO] == nullptr) return false;
    return count_beyond_bound(q_.get(), k_.get(), v_.get(), outputs[Sig::kO], heads_, seq_, dim_,
                              causal_, bf16_, s) == 0;
  }

  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kO || outputs[Sig::kO].size() != 2 * count()) {
      return "the output O has the wrong size";
    }
    DeviceBuffer<uint16_t> o(count());
    CUDA_CHECK(cudaMemcpy(o.get(), outputs[Sig::kO].data(), 2 * count(),
                          cudaMemcpyHostToDevice));
    std::vector<double> ref, bound;
    if (count_beyond_bound(q_.get(), k_.get(), v_.get(), o.get(), heads_, seq_, dim_, causal_,
                           bf16_, s, &ref, &bound) == 0) {
      return "";
    }
    const VectorLayout layout{ref.size(), static_cast<size_t>(dim_), {}, "O"};
    const CompareResult r = compare_vector(observe(outputs[Sig::kO], bf16_ ? DType::kBF16
                                                                          : DType::kF16),
                                           ref, bound, layout);
    return r.ok() ? "" : "O (segments are query rows) is wrong: " + r.report();
  }

 private:
  enum Uid : int64_t { kQ = 1, kK, kV, kO };
  size_t count() const { return size_t(heads_) * seq_ * dim_; }

  void build() {
    graph_ = std::make_shared<fe::graph::Graph>();
    graph_->set_io_data_type(bf16_ ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    // One batch of `heads` heads, [heads][seq][dim] contiguous.
    const std::vector<int64_t> dims = {1, heads_, seq_, dim_};
    const std::vector<int64_t> strides = {int64_t{heads_} * seq_ * dim_, int64_t{seq_} * dim_,
                                          dim_, 1};
    auto tensor = [&](const char* name, int64_t uid) {
      return graph_->tensor(
          fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(
              strides));
    };
    auto q = tensor("Q", kQ), k = tensor("K", kK), v = tensor("V", kV);
    auto options = fe::graph::SDPA_attributes()
                       .set_name("attention")
                       .set_generate_stats(false)
                       .set_attn_scale(1.0f / std::sqrt(static_cast<float>(dim_)))
                       .set_causal_mask(causal_);
    auto [o, stats] = graph_->sdpa(q, k, v, options);
    (void)stats;
    o->set_output(true).set_uid(kO).set_dim(dims).set_stride(strides);
    check(graph_->validate(), "validate");
    check(graph_->build_operation_graph(handle_), "build_operation_graph");
    check(graph_->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans");
    check(graph_->check_support(handle_), "check_support");
    check(graph_->build_plans(handle_), "build_plans");
    int64_t workspace = 0;
    check(graph_->get_workspace_size(workspace), "get_workspace_size");
    workspace_ = DeviceBuffer<char>(static_cast<size_t>(std::max<int64_t>(workspace, 1)));
  }

  int heads_, seq_, dim_;
  bool causal_, bf16_;
  cudnnHandle_t handle_ = nullptr;
  std::shared_ptr<fe::graph::Graph> graph_;
  DeviceBuffer<uint16_t> q_, k_, v_, o_;
  DeviceBuffer<char> workspace_;
};

}  // namespace

bench::Spec benchmark(const std::string& variant, DType dtype, int heads, int seq, int dim,
                      bool causal) {
  bench::Spec s;
  std::ostringstream name;
  name << "attention/" << variant << "/" << dtype_name(dtype) << "/"
       << (causal ? "causal" : "full") << "/h" << heads << "_s" << seq << "_d" << dim;
  s.name = name.str();
  const uint64_t H = heads, S = seq, D = dim;
  s.call.variant = variant;
  s.call.params = Sig::params(heads, seq, dim, causal, dtype);
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{H, S, D, dtype});
  for (const int b : {Sig::kQ, Sig::kK, Sig::kV}) {
    s.call.buffers[b].source = dtype == DType::kF16 ? protocol::Source::kUniformF16
                                                    : protocol::Source::kUniformBF16;
    s.call.buffers[b].lo = -kUnitRange;
    s.call.buffers[b].hi = kUnitRange;
  }
  // Two products of seq x seq x dim per head; causal does half of each.
  s.flop = 4.0 * H * S * S * D * (causal ? 0.5 : 1.0);
  s.bytes = 2.0 * 4 * H * S * D;
  s.baseline_name = std::string("cuDNN scaled dot-product attention (") +
                    (dtype == DType::kF16 ? "FP16" : "BF16") +
                    ", FP32 softmax and accumulation, fused, heuristics A; cuDNN " +
                    cudnn_version() + ", cuDNN frontend " + std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) +
                    "." + std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
                    std::to_string(CUDNN_FRONTEND_PATCH_VERSION) + ")";
  s.baseline = [dtype, heads, seq, dim, causal] {
    return std::make_unique<CudnnAttention>(heads, seq, dim, causal, dtype);
  };
  return s;
}

}  // namespace labkit::ops::attention
