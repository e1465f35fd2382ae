// The scan family's judge (labkit/ops/scan.hpp) without a GPU: its verify() against outputs made
// here from the same inputs. Honest scans pass (the exact prefix rounded once, and a plain
// sequential float scan, the longest chain of roundings), the shortcuts and slips a kernel makes
// fail (inclusive instead of exclusive, a lost planted value, a dropped tile, one int off by
// one, a stale call's output), inputs drawn on the device are drawn again right, and the report
// says where.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "labkit/device_buffer.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/scan.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

namespace sc = ops::scan;

sc::Case make(size_t n, DType dtype, uint64_t seed, bool device_inputs = false, int calls = 1) {
  sc::Case c;
  c.n = n;
  c.dtype = dtype;
  c.seed = seed;
  c.workspace = n / 128 + 1024;
  c.calls = calls;
  c.device_inputs = device_inputs;
  return c;
}

// Call `call`'s input, as the worker gets it: the judge's bytes, or the device source redrawn.
std::vector<float> floats_of(const CheckSpec& s, const sc::Case& c, int call) {
  std::vector<float> x(c.n);
  if (c.device_inputs) {
    const uint64_t seed = protocol::source_seed(s.call.buffers[sc::Sig::kIn].seed, call);
    const auto d = ops::reduce::make_reduce_dist(seed, c.n);
    for (size_t i = 0; i < c.n; ++i) x[i] = ops::reduce::reduce_value(d, i);
  } else {
    std::memcpy(x.data(), s.call.inputs[call][sc::Sig::kIn].data(), 4 * c.n);
  }
  return x;
}

std::vector<int32_t> ints_of(const CheckSpec& s, const sc::Case& c, int call) {
  std::vector<int32_t> x(c.n);
  if (c.device_inputs) {
    const BufferSpec& in = s.call.buffers[sc::Sig::kIn];
    const uint64_t seed = protocol::source_seed(in.seed, call);
    for (size_t i = 0; i < c.n; ++i) {
      x[i] = uniform_i32(seed, i, static_cast<int32_t>(in.lo), static_cast<int32_t>(in.hi));
    }
  } else {
    std::memcpy(x.data(), s.call.inputs[call][sc::Sig::kIn].data(), 4 * c.n);
  }
  return x;
}

// The exact prefix (double), rounded once to float.
std::vector<float> exact_scan(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    out[i] = static_cast<float>(sum);
    sum += x[i];
  }
  return out;
}

std::vector<int32_t> int_scan(const std::vector<int32_t>& x) {
  std::vector<int32_t> out(x.size());
  uint32_t sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    out[i] = static_cast<int32_t>(sum);
    sum += static_cast<uint32_t>(x[i]);
  }
  return out;
}

template <typename T>
std::vector<Bytes> outputs_of(const std::vector<T>& out) {
  std::vector<Bytes> o(sc::Sig::kCount);
  o[sc::Sig::kOut].resize(4 * out.size());
  std::memcpy(o[sc::Sig::kOut].data(), out.data(), 4 * out.size());
  return o;
}

TEST(ScanReference, HonestFloatScansPass) {
  for (size_t n : {size_t{1}, size_t{2}, size_t{1025}, size_t{65537}, (size_t{1} << 20) + 3}) {
    for (bool device_inputs : {false, true}) {
      const sc::Case c = make(n, DType::kF32, 11 * n + 5, device_inputs);
      const CheckSpec s = sc::spec("v", c);
      const std::vector<float> x = floats_of(s, c, 0);
      const Verdict exact = s.verify(0, outputs_of(exact_scan(x)));
      EXPECT_TRUE(exact.ok()) << "n=" << n << ": " << exact.message;
      // The longest chain of float roundings an honest scan makes: one after the other.
      std::vector<float> seq(n);
      float sum = 0;
      for (size_t i = 0; i < n; ++i) {
        seq[i] = sum;
        sum += x[i];
      }
      const Verdict sequential = s.verify(0, outputs_of(seq));
      EXPECT_TRUE(sequential.ok()) << "n=" << n << ": " << sequential.message;
    }
  }
}

TEST(ScanReference, HonestIntScansPass) {
  for (size_t n : {size_t{1}, size_t{33}, size_t{65537}, (size_t{1} << 20) + 3}) {
    for (bool device_inputs : {false, true}) {
      const sc::Case c = make(n, DType::kI32, 7 * n + 1, device_inputs, 2);
      const CheckSpec s = sc::spec("v", c);
      for (int call = 0; call < 2; ++call) {
        const Verdict v = s.verify(call, outputs_of(int_scan(ints_of(s, c, call))));
        EXPECT_TRUE(v.ok()) << "n=" << n << " call " << call << ": " << v.message;
      }
    }
  }
}

TEST(ScanReference, InclusiveInsteadOfExclusiveFails) {
  for (DType dtype : {DType::kF32, DType::kI32}) {
    const size_t n = 4097;
    const sc::Case c = make(n, dtype, 99);
    const CheckSpec s = sc::spec("v", c);
    Verdict v;
    if (dtype == DType::kF32) {
      const std::vector<float> x = floats_of(s, c, 0);
      std::vector<float> out = exact_scan(x);
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(out[i]) + x[i]);
      v = s.verify(0, outputs_of(out));
    } else {
      const std::vector<int32_t> x = ints_of(s, c, 0);
      std::vector<int32_t> out = int_scan(x);
      for (size_t i = 0; i < n; ++i) out[i] += x[i];
      v = s.verify(0, outputs_of(out));
    }
    ASSERT_FALSE(v.ok()) << dtype_name(dtype);
    EXPECT_NE(v.message.find("exclusive scan of 4097"), std::string::npos) << v.message;
    EXPECT_NE(v.where, "") << dtype_name(dtype);
  }
}

TEST(ScanReference, LostPlantedValueFails) {
  // Every prefix after the planted element moves by it: far past the bound, at any size.
  for (size_t n : {size_t{1000}, size_t{1} << 20}) {
    const sc::Case c = make(n, DType::kF32, 1234 + n);
    const CheckSpec s = sc::spec("v", c);
    std::vector<float> x = floats_of(s, c, 0);
    const auto d = ops::reduce::make_reduce_dist(mix_seed(c.seed, 0), n);
    ASSERT_EQ(x[d.pos[0]], d.planted[0]);
    if (d.pos[0] + 1 == n) continue;  // the last element: no prefix holds it
    x[d.pos[0]] = 0;
    const Verdict v = s.verify(0, outputs_of(exact_scan(x)));
    EXPECT_FALSE(v.ok()) << "n=" << n << ", planted at " << d.pos[0];
  }
}

TEST(ScanReference, DroppedTileAndOneIntOffFail) {
  const size_t n = 10000;
  {
    const sc::Case c = make(n, DType::kF32, 5);
    const CheckSpec s = sc::spec("v", c);
    std::vector<float> out = exact_scan(floats_of(s, c, 0));
    for (size_t i = 8192; i < n; ++i) std::memcpy(&out[i], &kPoisonBits, 4);  // the last tile
    const Verdict v = s.verify(0, outputs_of(out));
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.message.find("never written"), std::string::npos) << v.message;
  }
  {
    const sc::Case c = make(n, DType::kI32, 6);
    const CheckSpec s = sc::spec("v", c);
    std::vector<int32_t> out = int_scan(ints_of(s, c, 0));
    out[7777] += 1;
    const Verdict v = s.verify(0, outputs_of(out));
    ASSERT_FALSE(v.ok());
    EXPECT_NE(v.message.find("7777"), std::string::npos) << v.message;
  }
}

TEST(ScanReference, AnotherCallsOutputFails) {
  // Two calls on fresh inputs: call 1 answered with call 0's scan (a cached result).
  for (DType dtype : {DType::kF32, DType::kI32}) {
    const sc::Case c = make(3000, dtype, 77, false, 2);
    const CheckSpec s = sc::spec("v", c);
    const Verdict v = dtype == DType::kF32 ? s.verify(1, outputs_of(exact_scan(floats_of(s, c, 0))))
                                           : s.verify(1, outputs_of(int_scan(ints_of(s, c, 0))));
    EXPECT_FALSE(v.ok()) << dtype_name(dtype);
  }
}

}  // namespace
}  // namespace labkit
