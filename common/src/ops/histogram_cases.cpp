// register_cases on its own: it takes the lab's suites, which only a lab's test program has
// (generated at configure time), so the family's judge and benchmark link without it.
#include "labkit/cases.hpp"
#include "labkit/ops/histogram.hpp"

namespace labkit::ops::histogram {

bool register_cases(const std::vector<std::string>& variants) {
  return cases::at_start([&] { register_suites(cases::lab_suites(), variants); });
}

}  // namespace labkit::ops::histogram
