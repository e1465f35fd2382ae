// Lab 02's tests are data (tests/cases.toml, and hidden/cases.toml where the hidden tests are in
// the build); this binds them to matmul.h: its versions and its size promise (M, N multiples of
// MATMUL_SIZE_MULTIPLE, any K >= 1), which every shape must keep (the driver refuses one
// outside it, naming the file and line). What the data cannot say: each file's shape lists vary
// inside the promise (checked here, when the test program starts).
#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "labkit/ops/matmul_cases.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace {

namespace mm = labkit::ops::matmul;

constexpr int t = MATMUL_SIZE_MULTIPLE;
constexpr bool is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

// Each must hold for at least one shape of a file's lists.
struct Variety {
  const char* what;
  bool (*holds)(const mm::Shape&);
};
const Variety kVariety[] = {
    {"one block tile only (M = N = 64)", [](const mm::Shape& s) { return s.M == t && s.N == t; }},
    {"K = 1", [](const mm::Shape& s) { return s.K == 1; }},
    {"an odd K > 1", [](const mm::Shape& s) { return s.K % 2 == 1 && s.K > 1; }},
    {"M, N, K all different",
     [](const mm::Shape& s) { return s.M != s.N && s.N != s.K && s.M != s.K; }},
    {"M an odd multiple of 64 (not of a 128 tile)",
     [](const mm::Shape& s) { return (s.M / t) % 2 == 1 && s.M > t; }},
    {"N an odd multiple of 64 (not of a 128 tile)",
     [](const mm::Shape& s) { return (s.N / t) % 2 == 1 && s.N > t; }},
    {"M / 64 not a power of two", [](const mm::Shape& s) { return !is_power_of_two(s.M / t); }},
    {"tall (M >= 8 N)", [](const mm::Shape& s) { return s.M >= 8 * s.N; }},
    {"wide (N >= 8 M)", [](const mm::Shape& s) { return s.N >= 8 * s.M; }},
};

// The shapes of each file's shape lists (a single shape, as the stream and repeat tests have,
// is not a variation), and where the file's first list is.
bool vary_inside_promise() {
  std::map<std::string, std::pair<std::string, std::vector<mm::Shape>>> files;
  for (const labkit::cases::Suite& s : labkit::cases::lab_suites()) {
    for (const labkit::cases::Param& p : s.params) {
      if (p.key != "shape" || !p.in_name) continue;
      auto& [where, shapes] = files[s.file];
      if (where.empty()) where = s.file + ":" + std::to_string(s.line);
      for (const std::string& v : p.values) shapes.push_back(mm::parse_shape(v));
    }
  }
  for (const auto& [file, listed] : files) {
    const auto& [where, shapes] = listed;
    for (const Variety& v : kVariety) {
      if (std::none_of(shapes.begin(), shapes.end(), v.holds)) {
        throw std::invalid_argument(where + ": the shapes do not vary enough inside the size " +
                                    "promise: none is " + v.what);
      }
    }
  }
  return true;
}

const bool registered =
    mm::register_cases({MATMUL_VARIANTS(LABKIT_VARIANT_NAME)}, {MATMUL_SIZE_MULTIPLE, 1}) &&
    labkit::cases::at_start([] { vary_inside_promise(); });

}  // namespace
