#include "labkit/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "labkit/compare.hpp"
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

}  // namespace

const char* dtype_name(DType d) { return d == DType::kF32 ? "f32" : "i32"; }

namespace {

// The inputs and references of one case's calls. The variants of a lab run the same cases one
// after the other, so the last one is kept: a gigabyte is generated and summed once, not once
// per variant.
struct Generated {
  size_t n = 0, workspace = 0;
  DType dtype = DType::kF32;
  uint64_t seed = 0;
  int calls = 0;
  std::vector<std::vector<Bytes>> inputs;  // [call]: in, out (empty), workspace garbage
  std::shared_ptr<const std::vector<Expected>> expected;
};

const Generated& generated(const Case& c) {
  static Generated last;
  if (last.expected && last.n == c.n && last.workspace == c.workspace && last.dtype == c.dtype &&
      last.seed == c.seed && last.calls == c.calls) {
    return last;
  }
  last = Generated{};
  auto expected = std::make_shared<std::vector<Expected>>();
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    Bytes in, garbage;
    if (c.dtype == DType::kF32) {
      const ReduceDist dist = make_reduce_dist(seed, c.n);
      in = generate<float>(c.n, [dist](size_t i) { return reduce_value(dist, i); });
      garbage = generate<float>(c.workspace, [seed](size_t i) {
        return uniform_f32(seed ^ 0x5A5A5A5Aull, i, 100.0f, 1000.0f);
      });
      expected->push_back(reference<float>(in));
    } else {
      // Positive: the sum is never 0 (a launcher that writes 0 fails at every n), and 2^28 + 1
      // of them stay below 2^31.
      in = generate<int>(c.n, [seed](size_t i) { return uniform_i32(seed, i, 1, 4); });
      garbage = generate<int>(c.workspace, [seed](size_t i) {
        return uniform_i32(seed ^ 0x5A5A5A5Aull, i, 100000, 1000000);
      });
      expected->push_back(reference<int>(in));
    }
    last.inputs.push_back({std::move(in), {}, std::move(garbage)});
  }
  last.n = c.n;
  last.workspace = c.workspace;
  last.dtype = c.dtype;
  last.seed = c.seed;
  last.calls = c.calls;
  last.expected = std::move(expected);
  return last;
}

}  // namespace

CheckSpec spec(const std::string& variant, const Case& c) {
  CheckSpec s;
  std::ostringstream what;
  what << variant << " (" << dtype_name(c.dtype) << ") on n=" << c.n << " [seed " << c.seed << "]";
  s.what = what.str();
  s.call.variant = variant;
  s.call.params = {static_cast<int64_t>(c.n), static_cast<int64_t>(c.dtype)};
  s.call.capture = c.capture;
  s.call.buffers = {{"in", protocol::Role::kInput, 4, c.n, {c.n}},
                    {"out", protocol::Role::kOutput, 4, 1, {1}},
                    {"workspace", protocol::Role::kInOut, 4, c.workspace, {c.workspace}}};
  const Generated& g = generated(c);
  s.call.inputs = g.inputs;
  const auto expected = g.expected;
  const DType dtype = c.dtype;
  const size_t n = c.n;
  s.verify = [expected, dtype, n](int call, const std::vector<Bytes>& outputs) -> std::string {
    const Expected& e = (*expected)[call];
    const VectorLayout layout{1, 1, {}, "out"};
    if (dtype == DType::kI32) {
      const CompareResult r = compare_vector_exact(observe(outputs[1], labkit::DType::kI32),
                                                   {e.int_sum}, layout);
      return r.ok() ? "" : "the sum of " + std::to_string(n) + " ints is not exact: " + r.report();
    }
    const double bound =
        kReduceBoundC * std::sqrt(static_cast<double>(n)) * std::ldexp(1.0, -24) * e.abs_sum;
    const CompareResult r =
        compare_vector(observe(outputs[1], labkit::DType::kF32), {e.sum}, {bound}, layout);
    return r.ok() ? "" : "the sum of " + std::to_string(n) + " floats is wrong: " + r.report();
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of `in` (the tail: n is not a "
      "multiple of the block or of the elements per thread) or past the partial sums of a level "
      "in `workspace`";
  return s;
}

::testing::AssertionResult check(const std::string& variant, const Case& c) {
  return labkit::check(spec(variant, c));
}

}  // namespace labkit::ops::reduce
