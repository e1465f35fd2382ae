#include "labkit/ops/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/device_reference.hpp"
#include "labkit/keep_last.hpp"
#include "labkit/ops/spmv_dist.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::spmv {
namespace {

template <typename T>
Bytes to_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

struct Expected {
  std::vector<double> ref, bound;
};

}  // namespace

std::string length_class(int64_t len) {
  if (len == 0) return "rows of length 0";
  if (len <= 8) return "rows of length 1-8";
  if (len <= 32) return "rows of length 9-32";
  if (len <= 256) return "rows of length 33-256";
  return "rows of length >256";
}

double row_bound(int64_t len, double abs_sum) {
  const double n = static_cast<double>(len);
  return std::min(kSpmvBoundC * n, kSpmvWalkC * std::sqrt(n)) * std::ldexp(1.0, -24) * abs_sum;
}

namespace {

// The length of row r of a DeviceMatrix (row_ptr[r] = floor(r * nnz / rows)).
int64_t even_row_start(const DeviceMatrix& d, int64_t r) {
  return static_cast<int64_t>(static_cast<uint64_t>(r) * static_cast<uint64_t>(d.nnz) /
                              static_cast<uint64_t>(d.rows));
}
int64_t even_row_length(const DeviceMatrix& d, int64_t r) {
  return even_row_start(d, r + 1) - even_row_start(d, r);
}

// What a device case's references depend on (rows, cols, nnz, seed, calls), and the last
// one's, kept (keep_last.hpp).
using Key = std::tuple<int32_t, int32_t, int64_t, uint64_t, int>;
KeepLast<Key, std::vector<Expected>> last_device_case;

CheckSpec device_spec(const std::string& variant, const Case& c) {
  const DeviceMatrix d = c.device;
  if (d.rows < 1 || d.cols < 1 || d.nnz < 0 || d.nnz > kMaxNnz) {
    throw std::invalid_argument("spmv::Case " + c.name + ": a device matrix out of range");
  }
  const size_t rows = static_cast<size_t>(d.rows), cols = static_cast<size_t>(d.cols),
               nnz = static_cast<size_t>(d.nnz);
  CheckSpec s;
  std::ostringstream what;
  what << variant << " on " << c.name << " (rows " << rows << ", cols " << cols << ", nnz " << nnz
       << ", drawn on the GPU) [seed " << c.seed << "]";
  s.what = what.str();
  s.call.variant = variant;
  s.call.params = Sig::params(d.rows, d.cols, d.nnz);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{rows, cols, nnz, c.workspace_bytes});
  using protocol::Source;
  auto draw = [&](int b, Source source, double lo, double hi) {
    s.call.buffers[b].source = source;
    s.call.buffers[b].lo = lo;
    s.call.buffers[b].hi = hi;
  };
  draw(Sig::kRowPtr, kSourceRowPtrEven, 0, static_cast<double>(nnz));
  draw(Sig::kColIdx, Source::kUniformI32, 0, static_cast<double>(d.cols - 1));
  draw(Sig::kValues, Source::kUniformF32, kValueLo, kValueHi);
  draw(Sig::kX, kSourceX, kXLo, kXHi);
  draw(Sig::kWorkspace, Source::kUniformF32, 100.0, 1000.0);
  for (uint32_t b = 0; b < s.call.buffers.size(); ++b) {
    s.call.buffers[b].seed = mix_seed(c.seed, 0xD3u + b);
  }
  // The reference, call by call: the same draws on the judge's GPU (freed before the worker
  // allocates its own), multiplied in double. Kept for the next variant on the same case (the
  // tests run each case for every variant in a row).
  for (int call = 0; call < c.calls; ++call) s.call.inputs.emplace_back(Sig::kCount);
  const Key key{d.rows, d.cols, d.nnz, c.seed, c.calls};
  const auto expected = last_device_case.get(key, [&] {
    std::vector<Expected> out;
    for (int call = 0; call < c.calls; ++call) {
      const uint64_t bytes = 4 * (rows + 1) + 8 * nnz + 4 * cols + 16 * rows;  // as below
      out.push_back(with_gpu_memory(bytes, [&] {
        DeviceBuffer<int32_t> row_ptr(rows + 1), col_idx(nnz);
        DeviceBuffer<float> values(nnz), x(cols);
        DeviceBuffer<double> ref(rows), abs_ref(rows);
        const std::pair<int, void*> inputs[] = {{Sig::kRowPtr, row_ptr.get()},
                                                {Sig::kColIdx, col_idx.get()},
                                                {Sig::kValues, values.get()},
                                                {Sig::kX, x.get()}};
        for (const auto& [b, ptr] : inputs) {
          const BufferSpec& spec = s.call.buffers[b];
          fill_source(ptr, spec.source, spec.count,
                      protocol::source_seed(spec.seed, static_cast<uint32_t>(call)), spec.lo,
                      spec.hi, nullptr);
        }
        spmv_reference_f64(row_ptr.get(), col_idx.get(), values.get(), x.get(), d.rows, ref.get(),
                           abs_ref.get(), nullptr);
        CUDA_CHECK(cudaDeviceSynchronize());
        Expected e;
        e.ref = ref.download();
        e.bound = abs_ref.download();
        parallel_for(rows, size_t{1} << 16, [&](size_t lo, size_t hi) {
          for (size_t r = lo; r < hi; ++r) {
            e.bound[r] = row_bound(even_row_length(d, static_cast<int64_t>(r)), e.bound[r]);
          }
        });
        return e;
      }));
    }
    return out;
  });
  const std::string name = c.name;
  s.verify = [expected, d, name](int call, const std::vector<Bytes>& outputs) {
    const Expected& e = (*expected)[call];
    VectorLayout layout;
    layout.n = static_cast<size_t>(d.rows);
    layout.segment = 256;
    layout.name = "y";
    layout.group = [d](size_t r) { return length_class(even_row_length(d, static_cast<int64_t>(r))); };
    return verdict(compare_vector(observe(outputs[Sig::kY], DType::kF32), e.ref, e.bound, layout),
                   "y = A x is wrong on " + name + " (y[i] is row i): ");
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of a buffer; with nnz near "
      "2^31 - 1, also an entry index stepped in 32 bits (e += 32 wraps past 2^31 - 1: step it in "
      "int64_t) or a thread number computed in int";
  return s;
}

}  // namespace

CheckSpec spec(const std::string& variant, const Case& c) {
  if (!c.matrix && c.device.rows > 0) return device_spec(variant, c);
  if (!c.matrix) throw std::invalid_argument("spmv::Case without a matrix");
  const std::string problem = validate(*c.matrix);
  if (!problem.empty()) throw std::invalid_argument("spmv::Case " + c.name + ": " + problem);
  const auto m = c.matrix;
  const size_t rows = static_cast<size_t>(m->rows), cols = static_cast<size_t>(m->cols),
               nnz = static_cast<size_t>(m->nnz());
  CheckSpec s;
  std::ostringstream what;
  what << variant << " on " << c.name << " (rows " << rows << ", cols " << cols << ", nnz " << nnz
       << ") [seed " << c.seed << "]";
  s.what = what.str();
  s.call.variant = variant;
  s.call.params = Sig::params(m->rows, m->cols, static_cast<int64_t>(nnz));
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{rows, cols, nnz, c.workspace_bytes});
  const size_t ws_words = s.call.buffers[Sig::kWorkspace].count;
  const Bytes row_ptr = to_bytes(m->row_ptr), col_idx = to_bytes(m->col_idx);
  auto expected = std::make_shared<std::vector<Expected>>();
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    std::vector<float> values(nnz), x(cols), garbage(ws_words);
    parallel_for(nnz, size_t{1} << 20, [&](size_t lo, size_t hi) {
      for (size_t e = lo; e < hi; ++e) values[e] = uniform_f32(seed, e, kValueLo, kValueHi);
    });
    const SpmvX xd = make_spmv_x(seed ^ 0x7A11ull, cols, kXLo, kXHi);
    for (size_t j = 0; j < cols; ++j) x[j] = spmv_x_value(xd, j);
    const uint64_t garbage_seed = mix_seed(seed, 0x5A5A5A5Aull);  // one-way: gives away no input
    for (size_t w = 0; w < ws_words; ++w) garbage[w] = uniform_f32(garbage_seed, w, 100.0f, 1000.0f);
    Expected e;
    e.ref.assign(rows, 0.0);
    e.bound.assign(rows, 0.0);
    parallel_for(rows, size_t{1} << 16, [&](size_t lo, size_t hi) {
      for (size_t r = lo; r < hi; ++r) {
        double sum = 0, abs_sum = 0;
        for (int32_t k = m->row_ptr[r]; k < m->row_ptr[r + 1]; ++k) {
          const double term =
              static_cast<double>(values[k]) * static_cast<double>(x[m->col_idx[k]]);
          sum += term;
          abs_sum += std::fabs(term);
        }
        e.ref[r] = sum;
        e.bound[r] = row_bound(m->row_length(static_cast<int32_t>(r)), abs_sum);
      }
    });
    expected->push_back(std::move(e));
    std::vector<Bytes>& in = s.call.inputs.emplace_back(Sig::kCount);
    in[Sig::kRowPtr] = row_ptr;
    in[Sig::kColIdx] = col_idx;
    in[Sig::kValues] = to_bytes(values);
    in[Sig::kX] = to_bytes(x);
    in[Sig::kWorkspace] = to_bytes(garbage);
  }
  const std::string name = c.name;
  s.verify = [expected, m, name](int call, const std::vector<Bytes>& outputs) {
    const Expected& e = (*expected)[call];
    VectorLayout layout;
    layout.n = static_cast<size_t>(m->rows);
    layout.segment = 256;
    layout.name = "y";
    layout.group = [m](size_t r) { return length_class(m->row_length(static_cast<int32_t>(r))); };
    return verdict(compare_vector(observe(outputs[Sig::kY], DType::kF32), e.ref, e.bound, layout),
                   "y = A x is wrong on " + name +
                       " (y[i] is row i; empty rows must be exactly 0): ");
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of a buffer: x indexed by an "
      "entry instead of by its column (x[col_idx[e]]), values indexed by a column, a row "
      "index past rows - 1 (the last thread or warp of the grid), or row_ptr[row + 1] read "
      "for row = rows";
  return s;
}

}  // namespace labkit::ops::spmv
