#include "labkit/ops/reduce.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/device_reference.hpp"
#include "labkit/keep_last.hpp"

namespace labkit::ops::reduce {
namespace {

struct Expected {
  double sum = 0;        // float: the double reference
  double abs_sum = 0;
  int64_t int_sum = 0;   // int: exact
};

template <typename T>
Expected reference(const Bytes& bytes) {
  const T* x = reinterpret_cast<const T*>(bytes.data());
  const size_t n = bytes.size() / sizeof(T);
  Expected e;
  for (size_t i = 0; i < n; ++i) {
    e.sum += static_cast<double>(x[i]);
    e.abs_sum += std::fabs(static_cast<double>(x[i]));
    e.int_sum += static_cast<int64_t>(x[i]);
  }
  return e;
}

// The inputs and references of one case's calls.
struct Generated {
  std::vector<std::vector<Bytes>> inputs;  // [call][Sig::Buf]: in, workspace garbage
  std::shared_ptr<const std::vector<Expected>> expected;
};

Generated generate(const Case& c) {
  Generated g;
  auto expected = std::make_shared<std::vector<Expected>>();
  for (int call = 0; c.device_inputs && call < c.calls; ++call) {
    // What the worker draws (draw_on_device, as spec() asks), drawn again here on the judge's GPU
    // and summed there: the reference never takes the worker's copy on trust.
    BufferSpec src, unused;
    draw_on_device(c, &src, &unused);
    const uint64_t seed = protocol::source_seed(src.seed, static_cast<uint32_t>(call));
    expected->push_back(with_gpu_memory(c.n * 4, [&] {
      DeviceBuffer<char> in(c.n * 4);
      fill_source(in.get(), src.source, c.n, seed, src.lo, src.hi, nullptr);
      Expected e;
      if (c.dtype == DType::kF32) {
        const SumAbs r = sum_abs_f64(reinterpret_cast<const float*>(in.get()), c.n, nullptr);
        e.sum = r.sum;
        e.abs_sum = r.abs_sum;
      } else {
        e.int_sum = sum_i32_i64(reinterpret_cast<const int32_t*>(in.get()), c.n, nullptr);
      }
      return e;
    }));
    g.inputs.emplace_back(Sig::kCount);
  }
  for (int call = 0; !c.device_inputs && call < c.calls; ++call) {
    VectorInputs v = draw_inputs(c, call);
    expected->push_back(c.dtype == DType::kF32 ? reference<float>(v.in) : reference<int>(v.in));
    std::vector<Bytes>& bufs = g.inputs.emplace_back(Sig::kCount);
    bufs[Sig::kIn] = std::move(v.in);
    bufs[Sig::kWorkspace] = std::move(v.workspace);
  }
  g.expected = std::move(expected);
  return g;
}

KeepLast<VectorCaseKey, Generated> last_case;

}  // namespace

CheckSpec spec(const std::string& variant, const Case& c) {
  CheckSpec s = start_spec<Sig>(variant, c);
  const std::shared_ptr<const Generated> g = last_case.get(key(c), [&] { return generate(c); });
  s.call.inputs = g->inputs;
  const auto expected = g->expected;
  const DType dtype = c.dtype;
  const size_t n = c.n;
  s.verify = [expected, dtype, n](int call, const std::vector<Bytes>& outputs) {
    const Expected& e = (*expected)[call];
    const VectorLayout layout{1, 1, {}, "out"};
    if (dtype == DType::kI32) {
      // An int holds the sum's low 32 bits (two's complement): all of it up to 2^29 elements
      // of at most 4, the sum modulo 2^32 beyond (what 32-bit additions give, in any order).
      const int64_t wrapped = static_cast<int32_t>(static_cast<uint32_t>(e.int_sum));
      const CompareResult r = compare_vector_exact(observe(outputs[Sig::kOut], DType::kI32),
                                                   {wrapped}, layout);
      const std::string modulo = wrapped == e.int_sum ? "" : " (modulo 2^32: the sum " +
                                 std::to_string(e.int_sum) + " does not fit in an int)";
      return verdict(r, "the sum of " + std::to_string(n) + " ints is not exact" + modulo + ": ");
    }
    const double bound = sum_bound(n, e.abs_sum);
    return verdict(
        compare_vector(observe(outputs[Sig::kOut], DType::kF32), {e.sum}, {bound}, layout),
        "the sum of " + std::to_string(n) + " floats is wrong: ");
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of `in` (the tail: n is not a "
      "multiple of the block or of the elements per thread) or past the partial sums of a level "
      "in `workspace`, or an index computed in 32 bits that wrapped (n past 2^31); a "
      "misaligned address means a vector load (float4, int4) from an address that is not a "
      "multiple of 16: `in` may be any pointer, so load its head and tail one element at a time";
  return s;
}

}  // namespace labkit::ops::reduce
