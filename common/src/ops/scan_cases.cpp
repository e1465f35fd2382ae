#include "labkit/ops/scan_cases.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "labkit/cases.hpp"
#include "labkit/check.hpp"
#include "labkit/ops/scan.hpp"

namespace labkit::ops::scan {

namespace {

DType dtype_of(const std::string& name) {
  if (name == "f32") return DType::kF32;
  if (name == "i32") return DType::kI32;
  throw std::invalid_argument("dtype '" + name + "' is neither f32 nor i32");
}

}  // namespace

bool register_cases(const std::vector<std::string>& variants, size_t (*workspace)(size_t n)) {
  cases::Family family;
  family.name = "scan";
  family.parts = {{"dtype", ""}, {"n", "n"}, {"offset", "off"}};
  family.scalars = {"calls", "capture", "race"};
  family.run = [workspace](const std::string& variant, const cases::Row& row, uint64_t seed) {
    Case c;
    c.n = row.u64("n", 0);
    c.dtype = dtype_of(row.text("dtype"));
    c.seed = seed;
    c.workspace = workspace(c.n);
    c.calls = static_cast<int>(row.u64("calls", 1));
    c.capture = row.flag("capture", false);
    c.in_offset = static_cast<uint32_t>(row.u64("offset", 0));
    c.device_inputs = c.n >= kDeviceInputsFrom;
    if (row.flag("race", false)) {
      if (!sanitizer_available()) {
        GTEST_SKIP() << "no compute-sanitizer given (--labkit-sanitizer): the race check cannot run";
      }
      LABKIT_EXPECT_OK(check_races(spec(variant, c)));
    } else {
      LABKIT_EXPECT_OK(check(variant, c));
    }
  };
  cases::register_suites(cases::lab_suites(), variants, family);
  return true;
}

}  // namespace labkit::ops::scan
