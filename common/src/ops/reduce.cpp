#include "labkit/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::reduce {
namespace {

// Fills `count` elements of type T from the counter-based generators, over the CPU's cores
// (2^28 elements is a gigabyte).
template <typename T, typename Gen>
Bytes generate(size_t count, Gen gen) {
  Bytes bytes(count * sizeof(T));
  T* out = reinterpret_cast<T*>(bytes.data());
  parallel_for(count, size_t{1} << 20, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) out[i] = gen(i);
  });
  return bytes;
}

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

// Where a device_inputs case's buffers come from: the same distributions as the host's.
struct Sources {
  protocol::Source in, workspace;
  uint64_t in_seed, workspace_seed;
  double lo, hi, workspace_lo, workspace_hi;
};

Sources device_sources(const Case& c) {
  Sources s;
  s.in_seed = mix_seed(c.seed, 0x1AB0u);
  s.workspace_seed = mix_seed(c.seed, 0x5A5A5A5Au);
  if (c.dtype == DType::kF32) {
    s.in = protocol::Source::kReduceF32;
    s.lo = s.hi = 0;
    s.workspace = protocol::Source::kUniformF32;
    s.workspace_lo = kGarbageF32Lo;
    s.workspace_hi = kGarbageF32Hi;
  } else {
    s.in = protocol::Source::kUniformI32;
    s.lo = kIntLo;
    s.hi = kIntHi;
    s.workspace = protocol::Source::kUniformI32;
    s.workspace_lo = kGarbageI32Lo;
    s.workspace_hi = kGarbageI32Hi;
  }
  return s;
}

// The inputs and references of one case's calls. The variants of a lab run the same cases one
// after the other, so the last one is kept: a gigabyte is generated and summed once, not once
// per variant.
struct Generated {
  size_t n = 0, workspace = 0;
  DType dtype = DType::kF32;
  uint64_t seed = 0;
  int calls = 0;
  bool device_inputs = false;
  std::vector<std::vector<Bytes>> inputs;  // [call][Sig::Buf]: in, workspace garbage
  std::shared_ptr<const std::vector<Expected>> expected;
};

const Generated& generated(const Case& c) {
  static Generated last;
  if (last.expected && last.n == c.n && last.workspace == c.workspace && last.dtype == c.dtype &&
      last.seed == c.seed && last.calls == c.calls && last.device_inputs == c.device_inputs) {
    return last;
  }
  last = Generated{};
  auto expected = std::make_shared<std::vector<Expected>>();
  for (int call = 0; c.device_inputs && call < c.calls; ++call) {
    // What the worker draws (device_sources() below), drawn again here on the judge's GPU and
    // summed there: the reference never takes the worker's copy on trust.
    const Sources src = device_sources(c);
    const uint64_t seed = protocol::source_seed(src.in_seed, static_cast<uint32_t>(call));
    expected->push_back(with_gpu_memory([&] {
      DeviceBuffer<char> in(c.n * 4);
      fill_source(in.get(), src.in, c.n, seed, src.lo, src.hi, nullptr);
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
    last.inputs.emplace_back(Sig::kCount);
  }
  for (int call = 0; !c.device_inputs && call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    Bytes in, garbage;
    if (c.dtype == DType::kF32) {
      const ReduceDist dist = make_reduce_dist(seed, c.n);
      in = generate<float>(c.n, [dist](size_t i) { return reduce_value(dist, i); });
      garbage = generate<float>(c.workspace, [seed](size_t i) {
        return uniform_f32(seed ^ 0x5A5A5A5Aull, i, kGarbageF32Lo, kGarbageF32Hi);
      });
      expected->push_back(reference<float>(in));
    } else {
      // Positive: the sum is never 0 (a launcher that writes 0 fails at every n), and 2^28 + 1
      // of them stay below 2^31.
      in = generate<int>(c.n, [seed](size_t i) { return uniform_i32(seed, i, kIntLo, kIntHi); });
      garbage = generate<int>(c.workspace, [seed](size_t i) {
        return uniform_i32(seed ^ 0x5A5A5A5Aull, i, kGarbageI32Lo, kGarbageI32Hi);
      });
      expected->push_back(reference<int>(in));
    }
    std::vector<Bytes>& bufs = last.inputs.emplace_back(Sig::kCount);
    bufs[Sig::kIn] = std::move(in);
    bufs[Sig::kWorkspace] = std::move(garbage);
  }
  last.n = c.n;
  last.workspace = c.workspace;
  last.dtype = c.dtype;
  last.seed = c.seed;
  last.calls = c.calls;
  last.device_inputs = c.device_inputs;
  last.expected = std::move(expected);
  return last;
}

}  // namespace

CheckSpec spec(const std::string& variant, const Case& c) {
  CheckSpec s;
  std::ostringstream what;
  what << variant << " (" << dtype_name(c.dtype) << ") on n=" << c.n;
  if (c.in_offset != 0) what << ", `in` " << c.in_offset << " elements past a 16-byte boundary";
  what << " [seed " << c.seed << "]";
  s.what = what.str();
  s.call.variant = variant;
  s.call.params = Sig::params(c.n, c.dtype);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{c.n, c.workspace, c.dtype});
  s.call.buffers[Sig::kIn].offset = 4 * c.in_offset;
  if (c.device_inputs) {
    const Sources src = device_sources(c);
    BufferSpec& in = s.call.buffers[Sig::kIn];
    in.source = src.in;
    in.seed = src.in_seed;
    in.lo = src.lo;
    in.hi = src.hi;
    BufferSpec& ws = s.call.buffers[Sig::kWorkspace];
    ws.source = src.workspace;
    ws.seed = src.workspace_seed;
    ws.lo = src.workspace_lo;
    ws.hi = src.workspace_hi;
  }
  const Generated& g = generated(c);
  s.call.inputs = g.inputs;
  const auto expected = g.expected;
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
    const double bound =
        kReduceBoundC * std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24) * e.abs_sum;
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

::testing::AssertionResult check(const std::string& variant, const Case& c) {
  return labkit::check(spec(variant, c));
}

}  // namespace labkit::ops::reduce
