#include "labkit/ops/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

#include "labkit/compare.hpp"
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

CheckSpec spec(const std::string& variant, const Case& c) {
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
  s.call.params = {m->rows, m->cols, static_cast<int64_t>(nnz)};
  s.call.capture = c.capture;
  const size_t ws_words = (c.workspace_bytes + 3) / 4;
  s.call.buffers = {{"row_ptr", protocol::Role::kInput, 4, rows + 1, {rows + 1}},
                    {"col_idx", protocol::Role::kInput, 4, nnz, {nnz}},
                    {"values", protocol::Role::kInput, 4, nnz, {nnz}},
                    {"x", protocol::Role::kInput, 4, cols, {cols}},
                    {"y", protocol::Role::kOutput, 4, rows, {rows}},
                    {"workspace", protocol::Role::kInOut, 4, ws_words, {ws_words}}};
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
    for (size_t w = 0; w < ws_words; ++w) {
      garbage[w] = uniform_f32(seed ^ 0x5A5A5A5Aull, w, 100.0f, 1000.0f);
    }
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
    s.call.inputs.push_back({row_ptr, col_idx, to_bytes(values), to_bytes(x), {}, to_bytes(garbage)});
  }
  const std::string name = c.name;
  s.verify = [expected, m, name](int call, const std::vector<Bytes>& outputs) -> std::string {
    const Expected& e = (*expected)[call];
    VectorLayout layout;
    layout.n = static_cast<size_t>(m->rows);
    layout.segment = 256;
    layout.name = "y";
    layout.group = [m](size_t r) { return length_class(m->row_length(static_cast<int32_t>(r))); };
    const CompareResult r =
        compare_vector(observe(outputs[4], labkit::DType::kF32), e.ref, e.bound, layout);
    if (r.ok()) return "";
    return "y = A x is wrong on " + name + " (y[i] is row i; empty rows must be exactly 0): " +
           r.report();
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of a buffer: x indexed by an "
      "entry instead of by its column (x[col_idx[e]]), values indexed by a column, a row "
      "index past rows - 1 (the last thread or warp of the grid), or row_ptr[row + 1] read "
      "for row = rows";
  return s;
}

::testing::AssertionResult check(const std::string& variant, const Case& c) {
  return labkit::check(spec(variant, c));
}

}  // namespace labkit::ops::spmv
