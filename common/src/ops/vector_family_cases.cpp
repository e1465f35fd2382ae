// register_vector_cases on its own: it takes the lab's suites, which only a lab's test program
// has (generated at configure time), so the families' judges and benchmarks link without it.
#include "labkit/cases.hpp"
#include "labkit/ops/vector_family.hpp"

namespace labkit::ops {

bool register_vector_cases(const std::vector<std::string>& variants, const VectorFamily& family) {
  return cases::at_start(
      [&] { register_vector_suites(cases::lab_suites(), variants, family); });
}

}  // namespace labkit::ops
