// An op family's signature: its buffers, declared once, in the order its launcher takes them.
//
// Each family (labkit/ops/<family>_signature.hpp) declares a struct `Sig` with its buffers as an
// enum (kA, kB, kC, kCount) and a table with one row per buffer, in that order: name, role,
// element type, and dims as a function of the family's `Sizes`. Everything else is derived
// from it: the worker takes `call.buffer<T>(Sig::kA)`, the judge's spec() and the benchmark
// build their BufferSpecs from the table (labkit::buffer_specs, judge.hpp), and every reader of
// outputs or inputs indexes by `Sig::kC`, never by a number. The table is checked when it is
// compiled (signature_ok: one row per enum value, in its order, names unique) and again by
// common/tests/signature_test.cpp against the judge's specs.
//
// Plain C++17: the workers include it too (their headers are compiled by nvcc as well).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "labkit/dtype.hpp"
#include "labkit/protocol.hpp"

namespace labkit {

using Dims = std::vector<uint64_t>;

// One buffer of a family's call. `Sizes` is the family's shape: what the buffer sizes depend on.
template <typename Sizes>
struct BufDecl {
  int index;             // the family's enum value for it: must equal the row's position
  const char* name;      // "C": in messages and the replay files
  protocol::Role role;   // kInput (read-only, checked unchanged), kOutput (poisoned before the
                         // call), kInOut (a workspace: fresh garbage before every call)
  DType dtype;           // its element type
  Dims (*dims)(const Sizes&);  // {rows, cols}, {n}, {n, c, h, w}: the count is their product
  // Where the element type is the call's (reduce: f32 or i32 by a parameter), the type for
  // these sizes; `dtype` is then the type of the family's default call.
  DType (*dtype_for)(const Sizes&) = nullptr;

  DType type(const Sizes& s) const { return dtype_for != nullptr ? dtype_for(s) : dtype; }
  uint64_t count(const Sizes& s) const {
    uint64_t n = 1;
    for (uint64_t d : dims(s)) n *= d;
    return n;
  }
};

namespace detail {
constexpr bool same_name(const char* a, const char* b) {
  for (; *a != '\0' && *a == *b; ++a, ++b) {
  }
  return *a == *b;
}
}  // namespace detail

// A table is well formed: `count` rows (the enum's kCount), row i declared for enum value i,
// every row with a name, a dims function and a valid role, and no two names alike.
template <typename Sizes, size_t N>
constexpr bool signature_ok(const BufDecl<Sizes> (&table)[N], int count) {
  if (static_cast<int>(N) != count) return false;
  for (size_t i = 0; i < N; ++i) {
    const BufDecl<Sizes>& row = table[i];
    if (row.index != static_cast<int>(i) || row.name == nullptr || row.name[0] == '\0' ||
        row.dims == nullptr) {
      return false;
    }
    if (row.role != protocol::Role::kInput && row.role != protocol::Role::kOutput &&
        row.role != protocol::Role::kInOut) {
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (detail::same_name(table[j].name, row.name)) return false;
    }
  }
  return true;
}

}  // namespace labkit
