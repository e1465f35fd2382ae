#include "labkit/ops/matmul_cases.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>

#include "labkit/check.hpp"
#include "labkit/ops/matmul.hpp"

namespace labkit::ops::matmul {

namespace {

// One side: decimal digits, no leading zero, 1..INT_MAX. Returns -1 when it is not one.
long long side(const std::string& text) {
  if (text.empty() || text.size() > 10 || text[0] == '0') return -1;
  long long v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v <= INT_MAX ? v : -1;
}

// "f16" or "bf16" (lab 10's inputs).
DType half_dtype(const std::string& text) {
  if (text == "f16") return DType::kF16;
  if (text == "bf16") return DType::kBF16;
  throw std::invalid_argument("dtype '" + text + "' is neither f16 nor bf16");
}

}  // namespace

Shape parse_shape(const std::string& text) {
  const size_t a = text.find('x');
  const size_t b = a == std::string::npos ? a : text.find('x', a + 1);
  const long long m = side(text.substr(0, a));
  const long long n = b == std::string::npos ? -1 : side(text.substr(a + 1, b - a - 1));
  const long long k = b == std::string::npos ? -1 : side(text.substr(b + 1));
  if (m < 0 || n < 0 || k < 0) {
    throw std::invalid_argument("'" + text + "' is not a shape MxNxK (e.g. 127x129x33: sides " +
                                "from 1, no leading zeros)");
  }
  return {static_cast<int>(m), static_cast<int>(n), static_cast<int>(k)};
}

bool keeps(const SizePromise& promise, const Shape& s) {
  return s.M % promise.mn == 0 && s.N % promise.mn == 0 && s.K % promise.k == 0;
}

cases::Family family(SizePromise promise) {
  if (promise.mn < 1 || promise.k < 1) throw std::invalid_argument("a size promise of multiples below 1");
  cases::Family f;
  f.name = "matmul";
  if (promise.half_inputs) {
    f.parts.push_back({"dtype", "", [](const std::string& v) {
                         return std::string(dtype_name(half_dtype(v)));
                       }});
  }
  f.parts.push_back({"shape", "", [](const std::string& v) {
                       const Shape s = parse_shape(v);
                       return shape_label(s.M, s.N, s.K);
                     }});
  f.scalars = {"calls", "capture", "race"};
  f.check = [promise](const cases::Row& row) {
    if (!row.has("shape")) throw std::invalid_argument("no 'shape' (MxNxK)");
    if (promise.half_inputs) {
      if (!row.has("dtype")) throw std::invalid_argument("no 'dtype' (f16 or bf16)");
      half_dtype(row.text("dtype"));
    }
    Shape s;
    try {
      s = parse_shape(row.text("shape"));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("'shape': ") + e.what());
    }
    if (!keeps(promise, s)) {
      throw std::invalid_argument(
          "shape " + row.text("shape") + " breaks the lab's size promise (M and N multiples of " +
          std::to_string(promise.mn) + ", K of " + std::to_string(promise.k) + ")");
    }
    cases::calls_of(row);
  };
  f.run = [promise](const std::string& variant, const cases::Row& row, uint64_t seed) {
    const Shape s = parse_shape(row.text("shape"));
    Case c;
    if (promise.half_inputs) c.dtype = half_dtype(row.text("dtype"));
    c.M = s.M;
    c.N = s.N;
    c.K = s.K;
    c.seed = seed;
    const cases::Calls calls = cases::calls_of(row);
    c.calls = calls.calls;
    c.capture = calls.capture;
    cases::expect_ok(calls, [&] { return spec(variant, c); });
  };
  return f;
}

bool register_cases(const std::vector<std::string>& variants, SizePromise promise) {
  return cases::at_start(
      [&] { cases::register_suites(cases::lab_suites(), variants, family(promise)); });
}

}  // namespace labkit::ops::matmul
