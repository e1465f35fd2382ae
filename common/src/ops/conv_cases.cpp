#include "labkit/ops/conv_cases.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <stdexcept>

#include "labkit/check.hpp"
#include "labkit/ops/conv.hpp"

namespace labkit::ops::conv {

namespace {

// A shape's fields, in Shape's order; then the others it may have.
constexpr const char* kSizes[] = {"n", "c_in", "h", "w", "c_out", "k", "stride", "pad"};
constexpr const char* kFieldList = "n, c_in, h, w, c_out, k, stride, pad and bias";

std::string shape_name(const cases::Row& row) {
  return row.has("shape") ? "shape '" + row.text("shape") + "'" : "the shape";
}

}  // namespace

Shape row_shape(const cases::Row& row) {
  if (!row.has("shape")) {
    throw std::invalid_argument(std::string("no 'shape' (a named shape [shape.<name>] with ") +
                                kFieldList + ")");
  }
  const std::string what = shape_name(row);
  // Fields the family does not know (a misspelt one would otherwise be ignored).
  for (const auto& [key, text] : row.values()) {
    if (key.rfind("shape.", 0) != 0) continue;
    const std::string field = key.substr(6);
    bool known = field == "bias" || field == "name";
    for (const char* size : kSizes) known = known || field == size;
    if (!known) {
      throw std::invalid_argument(what + " has a field '" + field + "' the conv family does " +
                                  "not know (" + kFieldList + ", and name)");
    }
  }
  int64_t v[8];
  for (int i = 0; i < 8; ++i) {
    const std::string key = std::string("shape.") + kSizes[i];
    if (!row.has(key)) {
      throw std::invalid_argument(what + " has no '" + kSizes[i] + "' ([shape." +
                                  row.text("shape") + "] needs " + kFieldList + ")");
    }
    uint64_t x = 0;
    try {
      x = row.u64(key, 0);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(what + ": " + e.what());
    }
    if (x > uint64_t(INT_MAX)) {
      throw std::invalid_argument(what + ": '" + key + "' is past " + std::to_string(INT_MAX) +
                                  " (the lab's shape holds ints)");
    }
    v[i] = int64_t(x);
  }
  if (!row.has("shape.bias")) {
    throw std::invalid_argument(what + " has no 'bias' ([shape." + row.text("shape") +
                                "] needs " + kFieldList + ")");
  }
  try {
    row.flag("shape.bias", true);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  Shape s;
  s.n = v[0];
  s.c_in = v[1];
  s.h = v[2];
  s.w = v[3];
  s.c_out = v[4];
  s.k = v[5];
  s.stride = v[6];
  s.pad = v[7];
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(what + ": " + e.what());
  }
  return s;
}

cases::Family family(WorkspaceSize workspace) {
  if (workspace == nullptr) throw std::invalid_argument("the conv family has no workspace size");
  cases::Family f;
  f.name = "conv";
  f.parts = {{"shape", "", nullptr, "name"}};
  f.scalars = {"calls", "capture"};
  f.check = [](const cases::Row& row) {
    row_shape(row);
    cases::calls_of(row);
  };
  f.run = [workspace](const std::string& variant, const cases::Row& row, uint64_t seed) {
    Case c;
    c.shape = row_shape(row);
    c.bias = row.flag("shape.bias", true);
    c.seed = seed;
    c.workspace = workspace(c.shape);
    const cases::Calls calls = cases::calls_of(row);
    c.calls = calls.calls;
    c.capture = calls.capture;
    cases::expect_ok(calls, [&] { return spec(variant, c); });
  };
  return f;
}

bool register_cases(const std::vector<std::string>& variants, WorkspaceSize workspace) {
  return cases::at_start(
      [&] { cases::register_suites(cases::lab_suites(), variants, family(workspace)); });
}

}  // namespace labkit::ops::conv
