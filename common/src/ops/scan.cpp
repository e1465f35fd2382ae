#include "labkit/ops/scan.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/keep_last.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/ops/scan_device.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::scan {
namespace {

using reduce::kIntHi;
using reduce::kIntLo;

// Past this many elements a failure's report shows a window of kReportWindow elements from the
// first wrong one (the whole output as doubles would be tens of gigabytes past 2^31).
constexpr size_t kFullReportMax = size_t{1} << 26;
constexpr size_t kReportWindow = size_t{1} << 24;
constexpr size_t kChunk = size_t{1} << 16;  // the reference's parallel pieces
constexpr size_t kSegment = 4096;           // the report's map cell: a tile of most scans

// One call's input, element by element: the bytes the judge sent, or (device_inputs) the
// numbers the worker's generator drew, drawn again here from the same seed.
struct Input {
  DType dtype = DType::kF32;
  const float* f = nullptr;
  const int32_t* i = nullptr;
  reduce::ReduceDist dist;
  uint64_t seed = 0;
  float fx(size_t k) const { return f != nullptr ? f[k] : reduce::reduce_value(dist, k); }
  int32_t ix(size_t k) const { return i != nullptr ? i[k] : uniform_i32(seed, k, kIntLo, kIntHi); }
};

// The reference at the start of every chunk of kChunk elements: the exclusive prefix of x and
// of x^2 in double and the largest |prefix| before the chunk (floats), the prefix of x modulo
// 2^32 (ints). Two passes over the cores (three for floats).
struct ChunkStarts {
  std::vector<double> sum, sq, peak;
  std::vector<uint32_t> isum;
};

ChunkStarts chunk_starts(const Input& in, size_t n) {
  const size_t chunks = (n + kChunk - 1) / kChunk;
  ChunkStarts s;
  s.sum.assign(chunks + 1, 0.0);
  s.sq.assign(chunks + 1, 0.0);
  s.isum.assign(chunks + 1, 0);
  parallel_for(chunks, 2, [&](size_t lo, size_t hi) {
    for (size_t c = lo; c < hi; ++c) {
      double sum = 0, sq = 0;
      uint32_t isum = 0;
      for (size_t k = c * kChunk; k < std::min(n, (c + 1) * kChunk); ++k) {
        if (in.dtype == DType::kF32) {
          const double x = in.fx(k);
          sum += x;
          sq += x * x;
        } else {
          isum += static_cast<uint32_t>(in.ix(k));
        }
      }
      s.sum[c + 1] = sum;
      s.sq[c + 1] = sq;
      s.isum[c + 1] = isum;
    }
  });
  for (size_t c = 0; c < chunks; ++c) {
    s.sum[c + 1] += s.sum[c];
    s.sq[c + 1] += s.sq[c];
    s.isum[c + 1] += s.isum[c];
  }
  s.peak.assign(chunks + 1, 0.0);
  if (in.dtype != DType::kF32) return s;
  // The largest |prefix| within each chunk, then before each chunk.
  parallel_for(chunks, 2, [&](size_t lo, size_t hi) {
    for (size_t c = lo; c < hi; ++c) {
      double sum = s.sum[c], peak = 0;
      for (size_t k = c * kChunk; k < std::min(n, (c + 1) * kChunk); ++k) {
        peak = std::max(peak, std::fabs(sum));
        sum += in.fx(k);
      }
      s.peak[c + 1] = peak;
    }
  });
  for (size_t c = 0; c < chunks; ++c) s.peak[c + 1] = std::max(s.peak[c + 1], s.peak[c]);
  return s;
}

// The reference's state before element `at`: the exclusive prefixes of x and x^2 and the
// largest |prefix| before it (floats), the prefix modulo 2^32 (ints).
struct Carry {
  size_t at = 0;
  double sum = 0, sq = 0, peak = 0;
  uint32_t isum = 0;
};

Carry chunk_carry(const ChunkStarts& s, size_t lo) {
  const size_t c = lo / kChunk;
  return {c * kChunk, s.sum[c], s.sq[c], s.peak[c], s.isum[c]};
}

// Walks the reference over [lo, hi), calling at(k, ref, bound) for floats (bound: the tests')
// or at(k, exact) for ints, from a carry at or before lo.
template <typename F, typename I>
void walk_from(const Input& in, size_t n, const Carry& from, size_t lo, size_t hi, F&& at_f,
               I&& at_i) {
  const double scale = bound_scale(n);
  double sum = from.sum, sq = from.sq, peak = from.peak;
  uint32_t isum = from.isum;
  for (size_t k = from.at; k < hi; ++k) {
    if (in.dtype == DType::kF32) {
      // The same order of operations as count_beyond_peak_bound (device_compare.cu).
      peak = std::max(peak, std::fabs(sum));
      if (k >= lo) at_f(k, sum, scale * (std::sqrt(sq) + peak));
      const double x = in.fx(k);
      sum += x;
      sq += x * x;
    } else {
      if (k >= lo) at_i(k, static_cast<int64_t>(static_cast<int32_t>(isum)));
      isum += static_cast<uint32_t>(in.ix(k));
    }
  }
}

template <typename F, typename I>
void walk(const Input& in, size_t n, const ChunkStarts& s, size_t lo, size_t hi, F&& at_f,
          I&& at_i) {
  walk_from(in, n, chunk_carry(s, lo), lo, hi, at_f, at_i);
}

// Whether one output element (its 4 bytes at `p`) is outside the tests' acceptance.
bool wrong_f32(const uint8_t* p, double ref, double bound) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  float got;
  std::memcpy(&got, &bits, 4);
  return bits == kPoisonBits || !std::isfinite(got) ||
         !(std::fabs(static_cast<double>(got) - ref) <= bound);
}

bool wrong_i32(const uint8_t* p, int64_t ref) {
  int32_t got;
  std::memcpy(&got, p, 4);
  return got != ref;
}

// How many elements of `out` are wrong and the first of them, over the cores, without building
// the reference (a right output, the common case, costs two passes and no memory).
struct Count {
  size_t wrong = 0;
  size_t first = SIZE_MAX;
};

Count count_wrong(const Input& in, size_t n, const ChunkStarts& s, const uint8_t* out) {
  const size_t chunks = (n + kChunk - 1) / kChunk;
  std::atomic<size_t> wrong{0};
  std::mutex mu;
  Count total;
  parallel_for(chunks, 2, [&](size_t lo, size_t hi) {
    size_t mine = 0, first = SIZE_MAX;
    const auto bad = [&](size_t k) {
      ++mine;
      first = std::min(first, k);
    };
    walk(
        in, n, s, lo * kChunk, std::min(n, hi * kChunk),
        [&](size_t k, double ref, double bound) {
          if (wrong_f32(out + 4 * k, ref, bound)) bad(k);
        },
        [&](size_t k, int64_t ref) {
          if (wrong_i32(out + 4 * k, ref)) bad(k);
        });
    wrong += mine;
    std::lock_guard<std::mutex> lock(mu);
    total.first = std::min(total.first, first);
  });
  total.wrong = wrong;
  return total;
}

// The report of a wrong output: compare_vector's, over the whole output, or past
// kFullReportMax over a window from the first wrong element. `out` holds the output's elements
// from `base` on (the whole output: base 0), at least to the window's end; `from` is the
// reference's state at or before the window.
size_t window_lo(size_t n, size_t first) {
  return n > kFullReportMax ? first / kSegment * kSegment : 0;
}

Verdict report(const Input& in, size_t n, const Carry& from, const uint8_t* out, size_t base,
               Count count) {
  size_t lo = 0, hi = n;
  std::ostringstream lead;
  lead << "the exclusive scan of " << n << (in.dtype == DType::kF32 ? " floats" : " ints")
       << " is wrong";
  if (in.dtype == DType::kI32) lead << " (ints exactly, modulo 2^32)";
  if (n > kFullReportMax) {
    lo = window_lo(n, count.first);
    hi = std::min(n, lo + kReportWindow);
    lead << "; " << count.wrong << " elements wrong in all, the first at " << count.first
         << index_width_hint(n, count.first) << ". Below: elements " << lo << ".." << hi - 1
         << " only, numbered from " << lo;
  }
  lead << ": ";
  const size_t m = hi - lo;
  Bytes window(out + 4 * (lo - base), out + 4 * (hi - base));
  Observed got = observe(window, in.dtype);
  VectorLayout layout{m, kSegment, {}, "out"};
  if (in.dtype == DType::kF32) {
    std::vector<double> ref(m), bound(m);
    walk_from(
        in, n, from, lo, hi,
        [&](size_t k, double r, double b) {
          ref[k - lo] = r;
          bound[k - lo] = b;
        },
        [](size_t, int64_t) {});
    return verdict(compare_vector(got, ref, bound, layout), lead.str());
  }
  std::vector<int64_t> ref(m);
  walk_from(in, n, from, lo, hi, [](size_t, double, double) {},
            [&](size_t k, int64_t r) { ref[k - lo] = r; });
  // A right int prefix may have the poison's bits (0x7FC0DEAD: once the prefixes pass 2^31):
  // written, not "never written".
  for (size_t k = 0; k < m; ++k) {
    if (got.unwritten[k] != 0 && got.ints[k] == ref[k]) got.unwritten[k] = 0;
  }
  return verdict(compare_vector_exact(got, ref, layout), lead.str());
}

// The inputs of one case's calls ([call][Sig::Buf]: in, workspace garbage; empty when drawn on
// the device).
using Inputs = std::vector<std::vector<Bytes>>;

Inputs generate(const Case& c) {
  Inputs inputs;
  for (int call = 0; call < c.calls; ++call) {
    std::vector<Bytes>& bufs = inputs.emplace_back(Sig::kCount);
    if (c.device_inputs) continue;
    VectorInputs v = draw_inputs(c, call);
    bufs[Sig::kIn] = std::move(v.in);
    bufs[Sig::kWorkspace] = std::move(v.workspace);
  }
  return inputs;
}

KeepLast<VectorCaseKey, Inputs> last_case;

}  // namespace

std::string index_width_hint(size_t n, size_t first_wrong) {
  constexpr size_t k2p31 = size_t{1} << 31, k2p32 = size_t{1} << 32;
  if (n <= k2p31) return "";
  std::ostringstream os;
  os << " (n is past 2^" << (n > k2p32 ? 32 : 31)
     << ": an index, a tile's offset or a count held in 32 bits goes wrong here, an int from "
        "element 2^31 on, an unsigned from element 2^32 on";
  if (first_wrong >= k2p32 && first_wrong < n) {
    os << "; the first wrong element is past 2^32";
  } else if (first_wrong >= k2p31 && first_wrong < n) {
    os << "; the first wrong element is past 2^31";
  }
  os << ": compute them in size_t)";
  return os.str();
}

CheckSpec spec(const std::string& variant, const Case& c) {
  CheckSpec s = start_spec<Sig>(variant, c);
  const std::shared_ptr<const Inputs> inputs = last_case.get(key(c), [&] { return generate(c); });
  s.call.inputs = *inputs;
  const Case k = c;
  // Call `call`'s input, element by element.
  auto input = [inputs, k](int call) {
    Input in;
    in.dtype = k.dtype;
    if (k.device_inputs) {
      // What the worker drew (protocol::source_seed), drawn again here: the reference never
      // takes the worker's copy on trust.
      const uint64_t seed = protocol::source_seed(device_in_seed(k), static_cast<uint32_t>(call));
      in.dist = reduce::make_reduce_dist(seed, k.n);
      in.seed = seed;
    } else if (k.dtype == DType::kF32) {
      in.f = reinterpret_cast<const float*>((*inputs)[call][Sig::kIn].data());
    } else {
      in.i = reinterpret_cast<const int32_t*>((*inputs)[call][Sig::kIn].data());
    }
    return in;
  };
  if (c.device_inputs && c.calls == 1 && !c.capture) {
    // Checked where it is: the output of gigabytes never crosses the host. A wrong one's report
    // takes the piece that holds its first wrong element (half a gigabyte), whatever n.
    s.call.keep_on_device = true;
    const BufferSpec in_spec = s.call.buffers[Sig::kIn];
    // What the check found, for the report that follows it in the same check() (a spec is made
    // for one test; without the check before it, the report checks).
    auto found = std::make_shared<std::optional<DeviceCheck>>();
    s.right_on_device = [k, in_spec, found](const std::vector<const void*>& outputs) {
      *found = check_on_device(k.dtype, k.n, in_spec, outputs.at(Sig::kOut));
      return (*found)->wrong == 0;
    };
    s.report_on_device = [k, in_spec, found, input](const std::vector<const void*>& outputs) {
      const void* out = outputs.at(Sig::kOut);
      if (!found->has_value()) *found = check_on_device(k.dtype, k.n, in_spec, out);
      const DeviceCheck& d = **found;
      if (d.wrong == 0) return Verdict{};
      const Input in = input(0);
      // The first wrong element, in the piece the device named, and the report's window after
      // it: elements piece_lo .. piece_lo + piece + kReportWindow to the host.
      const size_t base = d.piece_lo;
      const size_t end = std::min(k.n, base + d.piece_size + kReportWindow);
      Bytes got(4 * (end - base));
      CUDA_CHECK(cudaMemcpy(got.data(), static_cast<const uint8_t*>(out) + 4 * base, got.size(),
                            cudaMemcpyDeviceToHost));
      Carry from;
      from.at = base;
      from.sum = d.sum;
      from.sq = d.sumsq;
      from.peak = d.peak;
      from.isum = d.isum;
      // The host's reference sums in another order than the device's: where they disagree on
      // an element at the bound, the piece's start stands for the first.
      Count count{static_cast<size_t>(d.wrong), base};
      const size_t piece_end = std::min(k.n, base + d.piece_size);
      bool seen = false;
      walk_from(
          in, k.n, from, base, piece_end,
          [&](size_t i, double ref, double bound) {
            if (!seen && wrong_f32(got.data() + 4 * (i - base), ref, bound)) {
              seen = true;
              count.first = i;
            }
          },
          [&](size_t i, int64_t ref) {
            if (!seen && wrong_i32(got.data() + 4 * (i - base), ref)) {
              seen = true;
              count.first = i;
            }
          });
      if (k.n <= kFullReportMax) {
        // The whole output fits a report (never the case for the sizes drawn on the device).
        Bytes all(4 * k.n);
        CUDA_CHECK(cudaMemcpy(all.data(), out, all.size(), cudaMemcpyDeviceToHost));
        return report(in, k.n, Carry{}, all.data(), 0, count);
      }
      return report(in, k.n, from, got.data(), base, count);
    };
  }
  s.verify = [input, k](int call, const std::vector<Bytes>& outputs) {
    const Bytes& out = outputs[Sig::kOut];
    if (out.size() != 4 * k.n) return Verdict{"out has the wrong size", ""};
    const Input in = input(call);
    const ChunkStarts starts = chunk_starts(in, k.n);
    const Count count = count_wrong(in, k.n, starts, out.data());
    if (count.wrong == 0) return Verdict{};
    return report(in, k.n, chunk_carry(starts, window_lo(k.n, count.first)), out.data(), 0, count);
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of `in` or `out` (the last tile "
      "is partial: n is not a multiple of the tile), past the tile totals of a level or the "
      "status words in `workspace`, or an index computed in 32 bits that wrapped (an int "
      "past 2^31 elements, an unsigned past 2^32); a misaligned address means a vector load or "
      "store (float4, int4) from an address that is not a multiple of 16: `in` may be any "
      "pointer";
  return s;
}

}  // namespace labkit::ops::scan
