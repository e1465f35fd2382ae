// register_cases on its own: it takes the lab's suites, which only a lab's test program has
// (generated at configure time), so the family's judge and benchmark link without it.
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/cases.hpp"
#include "labkit/ops/attention.hpp"

namespace labkit::ops::attention {
namespace {

DType dtype_of(const std::string& text) {
  if (text == "f16") return DType::kF16;
  if (text == "bf16") return DType::kBF16;
  throw std::invalid_argument("dtype '" + text + "' is neither f16 nor bf16");
}

bool large_of(const std::string& text) {
  if (text == "unit") return false;
  if (text == "large") return true;
  throw std::invalid_argument("scale '" + text + "' is neither unit nor large");
}

bool causal_of(const std::string& text) {
  if (text == "full") return false;
  if (text == "causal") return true;
  throw std::invalid_argument("mask '" + text + "' is neither full nor causal");
}

}  // namespace

bool register_cases(const std::vector<std::string>& variants) {
  cases::Family f;
  f.name = "attention";
  f.parts = {{"dtype", ""}, {"mask", ""}, {"scale", ""}, {"heads", "h"}, {"seq", "s"},
             {"dim", "d"}};
  f.scalars = {"calls", "capture", "race"};
  f.check = [](const cases::Row& row) {
    for (const char* key : {"dtype", "heads", "seq", "dim"}) {
      if (!row.has(key)) throw std::invalid_argument(std::string("no '") + key + "'");
    }
    dtype_of(row.text("dtype"));
    if (row.has("mask")) causal_of(row.text("mask"));
    if (row.has("scale")) large_of(row.text("scale"));
    const uint64_t heads = row.u64("heads", 0), seq = row.u64("seq", 0), dim = row.u64("dim", 0);
    if (heads < 1 || heads > 65535) throw std::invalid_argument("heads is 1 to 65535");
    if (seq < 1 || seq > (1u << 20)) throw std::invalid_argument("seq is 1 to 2^20");
    if (dim != 64 && dim != 128) throw std::invalid_argument("dim is 64 or 128");
    cases::calls_of(row);
  };
  f.run = [](const std::string& variant, const cases::Row& row, uint64_t seed) {
    Case c;
    c.dtype = dtype_of(row.text("dtype"));
    c.heads = static_cast<int>(row.u64("heads", 1));
    c.seq = static_cast<int>(row.u64("seq", 1));
    c.dim = static_cast<int>(row.u64("dim", 64));
    c.causal = row.has("mask") && causal_of(row.text("mask"));
    c.large = row.has("scale") && large_of(row.text("scale"));
    c.seed = seed;
    const cases::Calls calls = cases::calls_of(row);
    c.calls = calls.calls;
    c.capture = calls.capture;
    cases::expect_ok(calls, [&] { return spec(variant, c); });
  };
  return cases::at_start([&] { cases::register_suites(cases::lab_suites(), variants, f); });
}

}  // namespace labkit::ops::attention
