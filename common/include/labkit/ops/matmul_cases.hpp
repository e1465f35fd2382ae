// The matmul family's tests as data (labkit/cases.hpp): what a row of a lab's cases file means.
//   shape     "MxNxK", e.g. "127x129x33" (decimal, no leading zeros, each >= 1)
//                                                   in the name as M127_N129_K33
//   calls     calls on the same buffers, fresh inputs each (default 1)
//   capture   record the launcher under stream capture and replay it (default false)
//   race      compute-sanitizer racecheck instead of the plain check (default false; skipped,
//             visibly, when the judge was given no sanitizer)
//   dtype     lab 10 only (16-bit inputs), required: "f16" or "bf16", in the name before the shape
//             (v1_wmma_f16_M128_N128_K32)
// A lab with a size promise (labs 02, 03) passes it: a shape outside it stops the program
// before any test runs, naming the cases file and line.
#pragma once

#include <string>
#include <vector>

#include "labkit/cases.hpp"

namespace labkit::ops::matmul {

struct Shape {
  int M = 1, N = 1, K = 1;
};

// "127x129x33" -> {127, 129, 33}. Throws std::invalid_argument for anything else (a missing or
// extra side, a 0, a leading zero, a side past INT_MAX).
Shape parse_shape(const std::string& text);

// What a lab promises its kernels about the sizes: M and N multiples of `mn`, K of `k`.
struct SizePromise {
  int mn = 1;
  int k = 1;
  bool half_inputs = false;  // lab 10: A and B in a 16-bit float, the rows' `dtype`
};
bool keeps(const SizePromise& promise, const Shape& s);

// The family (its keys, its check of every row against `promise`, its runner).
cases::Family family(SizePromise promise = {});

// Registers the lab's suites (labkit::cases::lab_suites()) for `variants`. Returns true, for a
// static initializer in the lab's test program.
bool register_cases(const std::vector<std::string>& variants, SizePromise promise = {});

}  // namespace labkit::ops::matmul
