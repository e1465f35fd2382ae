#include "labkit/ops/histogram.hpp"

#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "labkit/cases.hpp"
#include "labkit/compare.hpp"
#include "labkit/keep_last.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::histogram {
namespace {

DType dtype_of(const std::string& name) {
  if (name == "u8") return DType::kU8;
  if (name == "i32") return DType::kI32;
  throw std::invalid_argument("dtype '" + name + "' is neither u8 nor i32");
}

// The exact counts of each call's draw, kept for the next version on the same case.
using Key = std::tuple<size_t, DType, uint32_t, uint32_t, uint64_t, int>;
using Expected = std::vector<std::vector<int64_t>>;  // [call][bin]
KeepLast<Key, Expected> last_case;

HistogramDist dist_of_call(const Case& c, int call) {
  return make_histogram_dist(protocol::source_seed(in_seed(c), static_cast<uint32_t>(call)),
                             c.dist, c.bins);
}

}  // namespace

std::string describe(const std::string& variant, const Case& c) {
  std::ostringstream what;
  what << variant << " (" << dtype_name(c.dtype) << ", " << dist_name(c.dist);
  if (c.dtype != DType::kU8) what << ", " << c.bins << " bins";
  what << ") on n=" << c.n;
  if (c.in_offset != 0) what << ", `in` " << c.in_offset << " bytes past a 16-byte boundary";
  what << " [seed " << c.seed << "]";
  return what.str();
}

uint64_t in_seed(const Case& c) { return mix_seed(c.seed, 0x4157u); }
uint64_t bins_seed(const Case& c) { return mix_seed(c.seed, 0xB175u); }

std::vector<int64_t> count_draw(const HistogramDist& d, size_t n) {
  // Fixed pieces (not one per core): the counts are the same on any machine, and each piece's
  // counts are 32-bit (a piece is below 2^32 elements).
  const size_t pieces = n < (size_t{1} << 16) ? 1 : (d.bins > (1u << 16) ? 16 : 64);
  std::vector<std::vector<uint32_t>> partial(pieces);
  parallel_for(pieces, 2, [&](size_t lo, size_t hi) {
    for (size_t p = lo; p < hi; ++p) {
      std::vector<uint32_t>& counts = partial[p];
      counts.assign(d.bins, 0);
      const size_t begin = n / pieces * p + std::min(p, n % pieces);
      const size_t end = begin + n / pieces + (p < n % pieces ? 1 : 0);
      for (size_t i = begin; i < end; ++i) ++counts[histogram_value(d, i)];
    }
  });
  std::vector<int64_t> total(d.bins, 0);
  for (const std::vector<uint32_t>& counts : partial) {
    for (uint32_t b = 0; b < d.bins; ++b) total[b] += counts[b];
  }
  return total;
}

Observed observe_counts(const Bytes& bins) {
  Observed got = observe(bins, DType::kI32);
  for (int64_t& count : got.ints) count = static_cast<uint32_t>(count);  // counts are unsigned
  return got;
}

CheckSpec spec(const std::string& variant, const Case& c) {
  if (c.dtype == DType::kU8 && c.bins != kByteBins) {
    throw std::invalid_argument("histogram: bytes have 256 bins");
  }
  if (c.bins < 1 || c.bins > kMaxBins) throw std::invalid_argument("histogram: 1 to 2^20 bins");
  CheckSpec s;
  s.what = describe(variant, c);
  s.call.variant = variant;
  s.call.params = Sig::params(c.n, c.dtype, c.bins);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{c.n, c.bins, c.dtype});
  BufferSpec& in = s.call.buffers[Sig::kIn];
  in.offset = c.in_offset;
  in.source = c.dtype == DType::kU8 ? kSourceU8
                                    : kSourceI32;
  in.lo = c.dist;
  in.hi = c.bins;
  in.seed = in_seed(c);
  // The bins hold fresh garbage before every call, not the harness's poison: a launcher that
  // skips zeroing them cannot fold a known value into its counts.
  BufferSpec& bins = s.call.buffers[Sig::kBins];
  bins.source = protocol::Source::kUniformI32;
  bins.lo = kGarbageLo;
  bins.hi = kGarbageHi;
  bins.seed = bins_seed(c);
  for (int call = 0; call < c.calls; ++call) s.call.inputs.emplace_back(Sig::kCount);

  const Key key{c.n, c.dtype, c.bins, c.dist, c.seed, c.calls};
  const std::shared_ptr<const Expected> expected = last_case.get(key, [&] {
    Expected e;
    for (int call = 0; call < c.calls; ++call) e.push_back(count_draw(dist_of_call(c, call), c.n));
    return e;
  });
  const Case k = c;
  s.verify = [expected, k](int call, const std::vector<Bytes>& outputs) {
    const std::vector<int64_t>& ref = (*expected)[call];
    Observed got = observe_counts(outputs[Sig::kBins]);
    const HistogramDist d = dist_of_call(k, call);
    const bool one_special = d.kind == kHot || d.kind == kSame;
    VectorLayout layout{ref.size(), std::max<size_t>(ref.size() / 16, 1), {}, "bins"};
    if (one_special) {
      const uint32_t special = d.special;
      layout.group = [special](size_t b) {
        return b == special ? std::string("the hot bin") : std::string("the other bins");
      };
    }
    const CompareResult r = compare_vector_exact(got, ref, layout);
    if (r.ok()) return verdict(r);
    // The garbage the bins held before this call: left as it was, or counted on top of.
    const uint64_t garbage_seed = protocol::source_seed(bins_seed(k), static_cast<uint32_t>(call));
    size_t untouched = 0, on_top = 0;
    for (size_t b = 0; b < ref.size(); ++b) {
      const uint32_t before =
          static_cast<uint32_t>(uniform_i32(garbage_seed, b, kGarbageLo, kGarbageHi));
      const uint32_t now = static_cast<uint32_t>(got.ints[b]);
      if (now == before && ref[b] != 0) ++untouched;
      if (now != static_cast<uint32_t>(ref[b]) && now - before == static_cast<uint32_t>(ref[b])) {
        ++on_top;
      }
    }
    // What the counts add up to says which kind of mistake it is.
    int64_t sum = 0;
    for (size_t b = 0; b < got.ints.size(); ++b) sum += got.ints[b];
    const bool summable = untouched == 0 && on_top == 0;
    std::ostringstream lead;
    lead << "the counts of " << k.n << " " << (k.dtype == DType::kU8 ? "bytes" : "ints") << " in "
         << k.bins << " bins (" << dist_name(d.kind);
    if (one_special) lead << ", value " << d.special << " in " << (d.kind == kSame ? "all" : "most");
    lead << ") are wrong";
    if (on_top > 0) {
      lead << "; " << on_top << " bin" << (on_top == 1 ? " holds" : "s hold")
           << " the right count added to the garbage the bins held before the call (zero `bins` "
              "every call: cudaMemsetAsync on the stream)";
    }
    if (untouched > 0) {
      lead << "; " << untouched << " bin" << (untouched == 1 ? " is" : "s are")
           << " still the garbage it held before the call (never written)";
    }
    if (summable && sum != static_cast<int64_t>(k.n)) {
      lead << "; they add up to " << sum << ", not n = " << k.n
           << (sum < static_cast<int64_t>(k.n)
                   ? " (elements not counted: a tail, a lost update - a non-atomic increment or "
                     "a merge that overwrote - or a bin not zeroed and then overwritten)"
                   : " (elements counted twice, or bins not zeroed before counting)");
    }
    lead << ": ";
    return verdict(r, lead.str());
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of `in` (the tail: n is not a "
      "multiple of the block or of the elements per load), a bin index past num_bins (a "
      "shared-memory histogram sized for 256 bins used for more), or an index computed in 32 bits "
      "that wrapped (n past 2^31); a misaligned address means a vector load (uint4, int4) from an "
      "address that is not a multiple of 16: `in` may be any pointer, so load its head and tail "
      "one element at a time";
  s.launch_hint =
      "check the grid and block shape and the dynamic shared memory your launcher asks for at "
      "this bin count (at most 48 KiB without cudaFuncSetAttribute's opt-in, 227 KiB with it)";
  return s;
}

void register_suites(const std::vector<cases::Suite>& suites,
                     const std::vector<std::string>& variants) {
  cases::Family f;
  f.name = "histogram";
  f.parts = {{"dtype", ""}, {"dist", ""}, {"bins", "b"}, {"n", "n"}, {"offset", "off"}};
  f.scalars = {"calls", "capture", "race"};
  f.check = [](const cases::Row& row) {
    for (const char* key : {"dtype", "n"}) {
      if (!row.has(key)) throw std::invalid_argument(std::string("no '") + key + "'");
    }
    const DType dtype = dtype_of(row.text("dtype"));
    if (row.has("dist")) dist_of(row.text("dist"));
    if (row.u64("n", 0) < 1) throw std::invalid_argument("n is at least 1");
    if (dtype == DType::kU8 && row.has("bins") && row.u64("bins", 0) != kByteBins) {
      throw std::invalid_argument("bytes have 256 bins");
    }
    if (dtype == DType::kI32) {
      if (!row.has("bins")) throw std::invalid_argument("no 'bins' (i32 rows name their count)");
      const uint64_t bins = row.u64("bins", 0);
      if (bins < 1 || bins > kMaxBins) throw std::invalid_argument("bins is 1 to 2^20");
    }
    const uint64_t offset = row.u64("offset", 0);
    if (offset % 4 != 0 || offset >= 16) throw std::invalid_argument("offset is 0, 4, 8 or 12");
    cases::calls_of(row);
  };
  f.run = [](const std::string& variant, const cases::Row& row, uint64_t seed) {
    Case c;
    c.n = row.u64("n", 0);
    c.dtype = dtype_of(row.text("dtype"));
    c.bins = c.dtype == DType::kU8 ? kByteBins : static_cast<uint32_t>(row.u64("bins", 0));
    c.dist = row.has("dist") ? dist_of(row.text("dist")) : kUniform;
    c.seed = seed;
    const cases::Calls calls = cases::calls_of(row);
    c.calls = calls.calls;
    c.capture = calls.capture;
    c.in_offset = static_cast<uint32_t>(row.u64("offset", 0));
    cases::expect_ok(calls, [&] { return spec(variant, c); });
  };
  cases::register_suites(suites, variants, f);
}

}  // namespace labkit::ops::histogram
