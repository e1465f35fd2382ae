#include "labkit/ops/vector_family.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

#include "labkit/cases.hpp"
#include "labkit/ops/reduce_dist.hpp"
#include "labkit/parallel.hpp"
#include "labkit/random.hpp"

namespace labkit::ops {

namespace {

using reduce::kGarbageF32Hi;
using reduce::kGarbageF32Lo;
using reduce::kGarbageI32Hi;
using reduce::kGarbageI32Lo;
using reduce::kIntHi;
using reduce::kIntLo;

// Fills `count` elements of type T from the counter-based generators, over the CPU's cores
// (2^28 elements is a gigabyte).
template <typename T, typename Gen>
Bytes generate(size_t count, Gen gen) {
  Bytes bytes(count * sizeof(T));
  T* out = reinterpret_cast<T*>(bytes.data());
  parallel_for(count, size_t{1} << 20, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) out[i] = gen(i);
  });
  return bytes;
}

DType dtype_of(const std::string& name) {
  if (name == "f32") return DType::kF32;
  if (name == "i32") return DType::kI32;
  throw std::invalid_argument("dtype '" + name + "' is neither f32 nor i32");
}

}  // namespace

std::string describe(const std::string& variant, const VectorCase& c) {
  std::ostringstream what;
  what << variant << " (" << dtype_name(c.dtype) << ") on n=" << c.n;
  if (c.in_offset != 0) what << ", `in` " << c.in_offset << " elements past a 16-byte boundary";
  what << " [seed " << c.seed << "]";
  return what.str();
}

uint64_t device_in_seed(const VectorCase& c) { return mix_seed(c.seed, 0x1AB0u); }
uint64_t device_workspace_seed(const VectorCase& c) { return mix_seed(c.seed, 0x5A5A5A5Au); }

void draw_on_device(const VectorCase& c, BufferSpec* in, BufferSpec* workspace) {
  in->seed = device_in_seed(c);
  workspace->seed = device_workspace_seed(c);
  if (c.dtype == DType::kF32) {
    in->source = reduce::kSourceF32;
    in->lo = in->hi = 0;
    workspace->source = protocol::Source::kUniformF32;
    workspace->lo = kGarbageF32Lo;
    workspace->hi = kGarbageF32Hi;
  } else {
    in->source = protocol::Source::kUniformI32;
    in->lo = kIntLo;
    in->hi = kIntHi;
    workspace->source = protocol::Source::kUniformI32;
    workspace->lo = kGarbageI32Lo;
    workspace->hi = kGarbageI32Hi;
  }
}

VectorInputs draw_inputs(const VectorCase& c, int call) {
  const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
  const uint64_t garbage_seed = mix_seed(seed, 0x5A5A5A5Aull);  // one-way: the garbage gives away no input
  VectorInputs v;
  if (c.dtype == DType::kF32) {
    const reduce::ReduceDist dist = reduce::make_reduce_dist(seed, c.n);
    v.in = generate<float>(c.n, [dist](size_t i) { return reduce::reduce_value(dist, i); });
    v.workspace = generate<float>(c.workspace, [garbage_seed](size_t i) {
      return uniform_f32(garbage_seed, i, kGarbageF32Lo, kGarbageF32Hi);
    });
  } else {
    // Positive: a sum or prefix is never 0 (a launcher that writes 0 fails at every n), and
    // 2^28 + 1 of them stay below 2^31.
    v.in = generate<int>(c.n, [seed](size_t i) { return uniform_i32(seed, i, kIntLo, kIntHi); });
    v.workspace = generate<int>(c.workspace, [garbage_seed](size_t i) {
      return uniform_i32(garbage_seed, i, kGarbageI32Lo, kGarbageI32Hi);
    });
  }
  return v;
}

void register_vector_suites(const std::vector<cases::Suite>& suites,
                            const std::vector<std::string>& variants, const VectorFamily& family) {
  if (family.spec == nullptr || family.workspace == nullptr) {
    throw std::invalid_argument("the " + family.name + " family has no spec or workspace size");
  }
  cases::Family f;
  f.name = family.name;
  f.parts = {{"dtype", ""}, {"n", "n"}, {"offset", "off"}};
  f.scalars = {"calls", "capture", "race"};
  // A row without its size or type, or with a value its key cannot take, stops the program
  // before any test runs.
  f.check = [](const cases::Row& row) {
    for (const char* key : {"dtype", "n"}) {
      if (!row.has(key)) throw std::invalid_argument(std::string("no '") + key + "'");
    }
    dtype_of(row.text("dtype"));
    row.u64("n", 0);
    row.u64("offset", 0);
    cases::calls_of(row);
  };
  f.run = [family](const std::string& variant, const cases::Row& row, uint64_t seed) {
    VectorCase c;
    c.n = row.u64("n", 0);
    c.dtype = dtype_of(row.text("dtype"));
    c.seed = seed;
    c.workspace = family.workspace(c.n);
    const cases::Calls calls = cases::calls_of(row);
    c.calls = calls.calls;
    c.capture = calls.capture;
    c.in_offset = static_cast<uint32_t>(row.u64("offset", 0));
    c.device_inputs = c.n >= kDeviceInputsFrom;
    cases::expect_ok(calls, [&] { return family.spec(variant, c); });
  };
  cases::register_suites(suites, variants, f);
}

}  // namespace labkit::ops
