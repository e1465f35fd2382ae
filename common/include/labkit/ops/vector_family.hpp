// What the op families over one vector share (reduce, lab 05; scan, lab 08): a launcher
// fn(in, out, n, workspace, stream) over n elements of f32 or i32, a workspace of garbage. One
// case type, one description, one draw of the inputs (on the host's cores, or named for the
// worker to draw on the GPU, with the same distributions: labkit/ops/reduce_dist.hpp), and one
// driver for their tests as data (labkit/cases.hpp). A family adds its signature, its reference
// and its bound.
//
// Tests as data, the keys of a row:
//   dtype     "f32" | "i32"                        in the name as f32, i32       (required)
//   n         elements                             in the name as n<N>           (required)
//   offset    `in` this many elements past a 16-byte boundary (0..3)   in the name as off<O>
//   calls     calls on the same buffers, fresh inputs and workspace garbage each (default 1)
//   capture   record the launcher under stream capture and replay it (default false)
//   race      compute-sanitizer racecheck instead of the plain check (default false; skipped,
//             visibly, when the judge was given no sanitizer)
// From kDeviceInputsFrom elements the inputs are drawn on the GPU, by the worker and again by the
// judge for its reference: nothing that size goes through the host. Drawn on the host's cores
// and sent, lab 05's hidden tests took 16.1 s in one judge on an H200, 8.2 s of it the judge's
// own (drawing, summing); drawn on the GPU from 2^20 elements, 4.7 s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "labkit/check.hpp"
#include "labkit/dtype.hpp"
#include "labkit/judge.hpp"

namespace labkit::cases {
struct Suite;
}

namespace labkit::ops {

inline constexpr size_t kDeviceInputsFrom = size_t{1} << 20;

struct VectorCase {
  size_t n = 1;
  DType dtype = DType::kF32;
  uint64_t seed = 1;
  size_t workspace = 1024;  // elements (the lab's <op>_workspace_size(n))
  int calls = 1;            // > 1: same buffers, fresh inputs and fresh garbage each call
  bool capture = false;     // record the launcher under stream capture
  uint32_t in_offset = 0;   // `in` starts this many elements past a 256-byte aligned address
                            // (0..63): the interface allows any pointer
  bool device_inputs = false;  // `in` and the workspace garbage drawn on the device by the
                               // worker (sizes that must not be sent through the host); the
                               // judge draws the same numbers again for its reference
};

// What a case's inputs and references depend on (not its offset or capture): the key under
// which the judge keeps the last case's (keep_last.hpp).
using VectorCaseKey = std::tuple<size_t, DType, uint64_t, size_t, int, bool>;
inline VectorCaseKey key(const VectorCase& c) {
  return {c.n, c.dtype, c.seed, c.workspace, c.calls, c.device_inputs};
}

// "v2_blelloch (f32) on n=1025, `in` 3 elements past a 16-byte boundary [seed 42]"
std::string describe(const std::string& variant, const VectorCase& c);

// The seeds of a device_inputs case's buffers (call k draws with protocol::source_seed(seed, k)).
uint64_t device_in_seed(const VectorCase& c);
uint64_t device_workspace_seed(const VectorCase& c);

// Points `in` and `workspace` at the worker's generators (device_inputs).
void draw_on_device(const VectorCase& c, BufferSpec* in, BufferSpec* workspace);

// Call `call`'s `in` and workspace garbage, drawn on the host's cores.
struct VectorInputs {
  Bytes in, workspace;
};
VectorInputs draw_inputs(const VectorCase& c, int call);

// What every vector family's check spec starts with: its description, the call (the variant,
// the parameters n and dtype, capture, the buffers of the family's signature, `in`'s offset) and,
// for device_inputs, the device's draws of `in` and the workspace.
template <typename Sig>
CheckSpec start_spec(const std::string& variant, const VectorCase& c) {
  CheckSpec s;
  s.what = describe(variant, c);
  s.call.variant = variant;
  s.call.params = Sig::params(c.n, c.dtype);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, typename Sig::Sizes{c.n, c.workspace, c.dtype});
  s.call.buffers[Sig::kIn].offset = 4 * c.in_offset;
  if (c.device_inputs) {
    draw_on_device(c, &s.call.buffers[Sig::kIn], &s.call.buffers[Sig::kWorkspace]);
  }
  return s;
}

// A vector family's tests as data: `spec` is the family's (reduce::spec, scan::spec), `workspace`
// the lab's workspace size for n elements. register_vector_suites registers `suites` (tests of
// the keys above) for `variants`; it throws std::invalid_argument naming the cases file and line
// for a row without dtype or n, a value its key cannot take (calls below 1), or a key the family
// does not know; then it registers none.
struct VectorFamily {
  std::string name;  // "reduce", for messages
  CheckSpec (*spec)(const std::string& variant, const VectorCase& c) = nullptr;
  size_t (*workspace)(size_t n) = nullptr;
};
void register_vector_suites(const std::vector<cases::Suite>& suites,
                            const std::vector<std::string>& variants, const VectorFamily& family);

// The same for the lab's own suites (labkit::cases::lab_suites(), generated into its test
// program); returns true, for a static initializer in the lab's tests/cases.cpp.
bool register_vector_cases(const std::vector<std::string>& variants, const VectorFamily& family);

}  // namespace labkit::ops
