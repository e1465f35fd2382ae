// The scan family's judge (labkit/ops/scan.hpp) without a GPU: its verify() against outputs made
// here from the same inputs. Honest scans pass (the exact prefix rounded once, and a plain
// sequential float scan, the longest chain of roundings), the shortcuts and slips a kernel makes
// fail (inclusive instead of exclusive, a lost planted value, a dropped tile, one int off by
// one, a stale call's output), inputs drawn on the device are drawn again right, and the report
// says where.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "labkit/device_buffer.hpp"
#include "labkit/gpu.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/scan.hpp"
#include "labkit/ops/scan_device.hpp"
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

// ---------------------------------------------------------------- the float bound's power
// FP32 scans in the orders honest kernels use, and the same scan with each tile's prefix
// rounded to bfloat16 once (the best a cheat that keeps its partial sums in 16 bits can do),
// on the lab's inputs. Each is judged by verify() (the judge's own check) and its worst
// |error| / (sqrt(n) 2^-24 (sqrt(S_i) + peak_i)) is the smallest c that passes it
// (docs/threat-model.md, "Detection power (scan)").

float to_bf16(float v) {  // round to nearest even, 8 significant bits
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b += 0x7FFFu + ((b >> 16) & 1u);
  b &= 0xFFFF0000u;
  float r;
  std::memcpy(&r, &b, 4);
  return r;
}

// A tile of v2: Blelloch's up- and down-sweep, exclusive, in place; returns the tile's total.
float blelloch_tile(float* a, size_t tile) {
  for (size_t off = 1; off < tile; off *= 2) {
    for (size_t k = 2 * off - 1; k < tile; k += 2 * off) a[k] = a[k - off] + a[k];
  }
  const float total = a[tile - 1];
  a[tile - 1] = 0;
  for (size_t off = tile / 2; off >= 1; off /= 2) {
    for (size_t k = 2 * off - 1; k < tile; k += 2 * off) {
      const float t = a[k - off];
      a[k - off] = a[k];
      a[k] = t + a[k];
    }
  }
  return total;
}

// A tile of v1: Hillis-Steele on the shifted tile (double-buffered); returns the tile's total.
float hillis_steele_tile(const float* x, size_t count, size_t tile, float* out) {
  std::vector<float> b(tile, 0.0f), c(tile);
  for (size_t t = 1; t < tile && t - 1 < count; ++t) b[t] = x[t - 1];
  for (size_t d = 1; d < tile; d *= 2) {
    for (size_t t = 0; t < tile; ++t) c[t] = t >= d ? b[t] + b[t - d] : b[t];
    std::swap(b, c);
  }
  for (size_t t = 0; t < count; ++t) out[t] = b[t];
  return count == tile ? b[tile - 1] + x[tile - 1] : b[tile - 1];
}

// Scan-then-propagate (v1, v2): tiles, their totals scanned the same way, added back.
void scan_in_levels(const std::vector<float>& x, std::vector<float>& out, size_t tile,
                    bool blelloch) {
  const size_t n = x.size(), tiles = (n + tile - 1) / tile;
  std::vector<float> totals(tiles), buf(tile);
  for (size_t t = 0; t < tiles; ++t) {
    const size_t count = std::min(tile, n - t * tile);
    if (blelloch) {
      std::fill(buf.begin(), buf.end(), 0.0f);
      std::copy(x.begin() + t * tile, x.begin() + t * tile + count, buf.begin());
      totals[t] = blelloch_tile(buf.data(), tile);
      std::copy(buf.begin(), buf.begin() + count, out.begin() + t * tile);
    } else {
      totals[t] = hillis_steele_tile(x.data() + t * tile, count, tile, out.data() + t * tile);
    }
  }
  if (tiles == 1) return;
  std::vector<float> offsets(tiles);
  scan_in_levels(totals, offsets, tile, blelloch);
  for (size_t k = tile; k < n; ++k) out[k] = offsets[k / tile] + out[k];
}

// v3: tiles of `tile`, each thread `items` in a row, the threads' sums scanned by Kogge-Stone;
// each tile's prefix from its predecessor's inclusive prefix (the longest chain a look-back
// makes). bf16: the tile's prefix rounded to bfloat16 before it is added.
void look_back(const std::vector<float>& x, std::vector<float>& out, size_t tile, size_t items,
               bool bf16) {
  const size_t n = x.size(), threads = tile / items;
  std::vector<float> a(threads), c(threads);
  float inclusive = 0;  // the predecessor's published prefix
  for (size_t base = 0; base < n; base += tile) {
    for (size_t j = 0; j < threads; ++j) {
      float s = 0;
      for (size_t k = 0; k < items && base + j * items + k < n; ++k) s += x[base + j * items + k];
      a[j] = s;
    }
    for (size_t d = 1; d < threads; d *= 2) {
      for (size_t j = 0; j < threads; ++j) c[j] = j >= d ? a[j - d] + a[j] : a[j];
      std::swap(a, c);
    }
    const float prefix = bf16 ? to_bf16(inclusive) : inclusive;
    for (size_t j = 0; j < threads; ++j) {
      float s = j == 0 ? 0.0f : a[j - 1];
      for (size_t k = 0; k < items && base + j * items + k < n; ++k) {
        const size_t i = base + j * items + k;
        out[i] = base == 0 ? s : prefix + s;
        s += x[i];
      }
    }
    inclusive = inclusive + a[threads - 1];
  }
}

// The worst |out_i - R_i| / (sqrt(n) 2^-24 (sqrt(S_i) + peak_i)): the c the order needs.
double worst_ratio(const std::vector<float>& x, const std::vector<float>& out) {
  const double unit = sc::bound_scale(x.size()) / sc::kScanBoundC;
  double sum = 0, sq = 0, peak = 0, worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    peak = std::max(peak, std::fabs(sum));
    const double bound = unit * (std::sqrt(sq) + peak);
    const double err = std::fabs(static_cast<double>(out[i]) - sum);
    worst = std::max(worst, bound > 0 ? err / bound : (err > 0 ? 1e300 : 0.0));
    sum += x[i];
    sq += static_cast<double>(x[i]) * x[i];
  }
  return worst;
}

struct Order {
  const char* name;
  std::function<void(const std::vector<float>&, std::vector<float>&)> scan;
};

std::vector<Order> honest_orders() {
  return {
      {"sequential",
       [](const std::vector<float>& x, std::vector<float>& o) {
         float s = 0;
         for (size_t i = 0; i < x.size(); ++i) {
           o[i] = s;
           s += x[i];
         }
       }},
      {"v1 Hillis-Steele tiles of 256, levels",
       [](const std::vector<float>& x, std::vector<float>& o) { scan_in_levels(x, o, 256, false); }},
      {"v2 Blelloch tiles of 512, levels",
       [](const std::vector<float>& x, std::vector<float>& o) { scan_in_levels(x, o, 512, true); }},
      {"look-back, tiles of 1024, 4 items",
       [](const std::vector<float>& x, std::vector<float>& o) { look_back(x, o, 1024, 4, false); }},
      {"look-back, tiles of 4096, 32 items",
       [](const std::vector<float>& x, std::vector<float>& o) { look_back(x, o, 4096, 32, false); }},
      {"look-back, tiles of 8192, 32 items",
       [](const std::vector<float>& x, std::vector<float>& o) { look_back(x, o, 8192, 32, false); }},
  };
}

// The tests whose inputs are drawn on the device keep their output there (up to 2^32 + 2^20 + 7
// elements): the judge's check on the device, then, for a wrong output, a report made from the
// piece that holds its first wrong element alone (not the whole output on the host: that took
// a minute or two per wrong test past 2^32). Here past the first piece, with two wrong elements:
// the report names the first and the count, and shows the window from the first; the same
// whether or not the check ran before it. Needs a GPU (1 GiB).
TEST(ScanDeviceReport, NamesTheFirstWrongElementPastTheFirstPiece) {
  LABKIT_REQUIRE_GPU();
  const size_t n = sc::kCheckPiece + (size_t{1} << 20) + 5;
  const size_t wrong_at = sc::kCheckPiece + 12345, also_wrong = n - 1;
  for (DType dtype : {DType::kI32, DType::kF32}) {
    const sc::Case c = make(n, dtype, dtype == DType::kI32 ? 91 : 92, true);
    const CheckSpec s = sc::spec("v", c);
    ASSERT_TRUE(s.call.keep_on_device && s.right_on_device && s.report_on_device);
    std::vector<uint32_t> bits(n);
    if (dtype == DType::kI32) {
      const std::vector<int32_t> out = int_scan(ints_of(s, c, 0));
      std::memcpy(bits.data(), out.data(), 4 * n);
    } else {
      const std::vector<float> out = exact_scan(floats_of(s, c, 0));
      std::memcpy(bits.data(), out.data(), 4 * n);
    }
    DeviceBuffer<uint32_t> device(bits);
    std::vector<const void*> outputs(sc::Sig::kCount, nullptr);
    outputs[sc::Sig::kOut] = device.get();
    EXPECT_TRUE(s.right_on_device(outputs)) << "the right scan, " << dtype_name(dtype);

    for (size_t at : {wrong_at, also_wrong}) {
      bits[at] = dtype == DType::kI32 ? bits[at] + 1 : 0x7FC00000u;  // off by one; a NaN
    }
    device.upload(bits);
    EXPECT_FALSE(s.right_on_device(outputs));
    const std::string lead = std::string("2 elements wrong in all, the first at ") +
                             std::to_string(wrong_at) + ". Below: elements " +
                             std::to_string(wrong_at / 4096 * 4096) + "..";
    const Verdict after_check = s.report_on_device(outputs);
    EXPECT_FALSE(after_check.ok());
    EXPECT_NE(after_check.message.find(lead), std::string::npos) << after_check.message;
    // The window's elements are numbered from its first (element wrong_at / 4096 * 4096).
    EXPECT_NE(after_check.message.find("out[" + std::to_string(wrong_at % 4096) + "]"),
              std::string::npos)
        << after_check.message;
    const Verdict alone = sc::spec("v", c).report_on_device(outputs);
    EXPECT_EQ(alone.message, after_check.message);
  }
}

TEST(ScanBound, Fp32OrdersPassWithMargin) {
  // The worst ratio over these draws: sequential up to 0.95 (2000 draws at 4096 and 400 at
  // 2^16 measured), the tile orders 0.2 at most; at c = 2 each passes with a margin of 2 or more.
  struct Size {
    size_t n;
    int seeds;
  };
  for (const Size z : {Size{4099, 64}, Size{(size_t{1} << 16) + 1, 16}, Size{(size_t{1} << 20) + 3, 2},
                       Size{(size_t{1} << 24) + 7, 1}}) {
    for (int seed = 0; seed < z.seeds; ++seed) {
      const sc::Case c = make(z.n, DType::kF32, 977 * seed + z.n);
      const CheckSpec s = sc::spec("v", c);
      const std::vector<float> x = floats_of(s, c, 0);
      std::vector<float> out(z.n);
      for (const Order& order : honest_orders()) {
        // A plain sequential float loop stagnates past about 2^24 of these inputs (an element
        // falls under half an ulp of the running sum): no GPU scan has such a chain.
        if (z.n > (size_t{1} << 22) && std::string(order.name) == "sequential") continue;
        order.scan(x, out);
        const double need = worst_ratio(x, out);
        EXPECT_LE(need, sc::kScanBoundC / 2) << order.name << ", n=" << z.n << ", seed " << seed;
        const Verdict v = s.verify(0, outputs_of(out));
        EXPECT_TRUE(v.ok()) << order.name << ", n=" << z.n << ": " << v.message;
      }
    }
  }
}

TEST(ScanBound, Bfloat16PrefixFails) {
  // Each tile's prefix rounded to bfloat16 once: its error is up to 2^-8 of the prefix, against
  // a bound of c sqrt(n) 2^-24: 2^16 / (c sqrt(n)) bounds at most, 32 at 2^20 and 8 at 2^24.
  // Measured (the worst element's ratio, the least over the draws): 58 at 2^16 + 1, 29 at
  // 2^20 + 3, 7.8 at 2^24 + 7; a quarter for every 16 times n gives 2 at 2^28.
  struct Size {
    size_t n;
    int seeds;
    double at_least;  // bounds off, at the worst element
  };
  for (const Size z : {Size{(size_t{1} << 16) + 1, 16, 50.0}, Size{(size_t{1} << 20) + 3, 4, 25.0},
                       Size{(size_t{1} << 24) + 7, 1, 6.0}}) {
    for (int seed = 0; seed < z.seeds; ++seed) {
      const sc::Case c = make(z.n, DType::kF32, 389 * seed + z.n + 1);
      const CheckSpec s = sc::spec("v", c);
      const std::vector<float> x = floats_of(s, c, 0);
      std::vector<float> out(z.n);
      look_back(x, out, 4096, 32, true);
      const double off = worst_ratio(x, out) / sc::kScanBoundC;
      EXPECT_GE(off, z.at_least) << "n=" << z.n << ", seed " << seed;
      const Verdict v = s.verify(0, outputs_of(out));
      EXPECT_FALSE(v.ok()) << "n=" << z.n << ", seed " << seed;
    }
  }
}

TEST(ScanBound, IndexWidthHint) {
  EXPECT_EQ(sc::index_width_hint(size_t{1} << 31, 5), "");
  EXPECT_NE(sc::index_width_hint((size_t{1} << 32) + 7, 3).find("n is past 2^32"), std::string::npos);
  EXPECT_NE(sc::index_width_hint((size_t{1} << 32) + 7, (size_t{1} << 32) + 1)
                .find("the first wrong element is past 2^32"),
            std::string::npos);
  EXPECT_NE(sc::index_width_hint((size_t{1} << 31) + 7, 3).find("n is past 2^31"), std::string::npos);
}

}  // namespace
}  // namespace labkit
