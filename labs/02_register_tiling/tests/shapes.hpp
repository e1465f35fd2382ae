// What the public and hidden tests of lab 02 share: the variant names, the size promise and
// the test naming.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "labkit/ops/matmul.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace lab02 {

// The variant names of matmul.h (the judge never links the launchers: the worker runs them).
inline const std::vector<std::string> kVariants = {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)};

struct Shape {
  int M, N, K;
};
inline void PrintTo(const Shape& s, std::ostream* os) { *os << labkit::shape_label(s.M, s.N, s.K); }

// The size promise of matmul.h, exactly: M and N positive multiples of 64, K >= 1. Every shape
// a test uses must keep it (checked at compile time below each shape list): a kernel written
// for the promise may do anything outside it, so a shape outside would grade the promise, not
// the kernel.
constexpr bool inside_promise(const Shape& s) {
  return s.M > 0 && s.N > 0 && s.K >= 1 && s.M % MATMUL_SIZE_MULTIPLE == 0 &&
         s.N % MATMUL_SIZE_MULTIPLE == 0;
}

template <size_t n>
constexpr bool all_inside_promise(const Shape (&shapes)[n]) {
  for (const Shape& s : shapes) {
    if (!inside_promise(s)) return false;
  }
  return true;
}

// The shapes vary inside the promise: each predicate must hold for at least one shape.
template <size_t n, typename Pred>
constexpr bool any_shape(const Shape (&shapes)[n], Pred pred) {
  for (const Shape& s : shapes) {
    if (pred(s)) return true;
  }
  return false;
}
constexpr bool is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

// One block tile only; K = 1; odd K; M, N, K all different; an odd multiple of 64 (not a
// multiple of a 128 tile) along M and along N; tall (M >= 8 N) and wide (N >= 8 M).
template <size_t n>
constexpr bool varied_inside_promise(const Shape (&shapes)[n]) {
  constexpr int t = MATMUL_SIZE_MULTIPLE;
  return any_shape(shapes, [](const Shape& s) { return s.M == t && s.N == t; }) &&
         any_shape(shapes, [](const Shape& s) { return s.K == 1; }) &&
         any_shape(shapes, [](const Shape& s) { return s.K % 2 == 1 && s.K > 1; }) &&
         any_shape(shapes, [](const Shape& s) { return s.M != s.N && s.N != s.K && s.M != s.K; }) &&
         any_shape(shapes, [](const Shape& s) { return (s.M / t) % 2 == 1 && s.M > t; }) &&
         any_shape(shapes, [](const Shape& s) { return (s.N / t) % 2 == 1 && s.N > t; }) &&
         any_shape(shapes, [](const Shape& s) { return !is_power_of_two(s.M / t); }) &&
         any_shape(shapes, [](const Shape& s) { return s.M >= 8 * s.N; }) &&
         any_shape(shapes, [](const Shape& s) { return s.N >= 8 * s.M; });
}

using VariantShape = std::tuple<std::string, Shape>;

// "v2_register_tiled_M192_N128_K7"
inline std::string variant_shape_name(const ::testing::TestParamInfo<VariantShape>& info) {
  const Shape& s = std::get<1>(info.param);
  return std::get<0>(info.param) + "_" + labkit::shape_label(s.M, s.N, s.K);
}

}  // namespace lab02
