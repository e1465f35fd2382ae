// The worker: the process that runs the student's code, and nothing a verdict rests on.
//
// A lab's worker is its variant table bound through its op family, plus this runner:
//
//   // labs/01_naive_matmul/worker.cpp
//   #include "labkit/ops/matmul_worker.hpp"
//   #include "matmul.h"
//   int main(int argc, char** argv) {
//     return labkit::worker::main(argc, argv, labkit::ops::matmul::bind({MATMUL_VARIANTS(LABKIT_WORKER_ENTRY)}));
//   }
//
// The runner reads requests from the judge (protocol.hpp), owns every device buffer (canary
// zones, poisoned outputs), calls the launcher, and sends back raw outputs and measurements.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace labkit::worker {

// One launcher call as the judge described it: integer parameters and device buffers, in the
// order the op family declares them.
struct Call {
  const int64_t* params = nullptr;
  int n_params = 0;
  void* const* buffers = nullptr;
  int n_buffers = 0;
  cudaStream_t stream = nullptr;
  const uint64_t* buffer_bytes = nullptr;  // the executor's: each buffer's size

  int64_t param(int i) const {
    if (i < 0 || i >= n_params) throw std::out_of_range("labkit::worker::Call: no such parameter");
    return params[i];
  }
  template <typename T>
  T* buffer(int i) const {
    if (i < 0 || i >= n_buffers) throw std::out_of_range("labkit::worker::Call: no such buffer");
    return static_cast<T*>(buffers[i]);
  }
};

struct Variant {
  std::string name;
  std::function<void(const Call&)> launch;
  // The executor's variants (planned): gets the call's plan from the planner and, for a test's
  // first call and every benchmark call, loads a fresh copy of the device code, before the call
  // and outside any capture or timed window. The launch that follows runs that plan; without a
  // prepare first, launch prepares itself. `timed`: a benchmark's call; `first`: a test's first
  // call, or a benchmark's first since its buffers were set up.
  std::function<void(const Call&, bool captured, bool timed, bool first)> prepare;
};

// A lab's variant table, each launcher called through the op family's `invoke`.
template <typename Fn>
std::vector<Variant> bind(std::initializer_list<std::pair<const char*, Fn>> table,
                          void (*invoke)(Fn, const Call&)) {
  std::vector<Variant> out;
  for (const auto& [name, fn] : table) {
    Fn f = fn;
    out.push_back({name, [f, invoke](const Call& call) { invoke(f, call); }, nullptr});
  }
  return out;
}

// Serves the judge on the protocol descriptors; `--replay FILE` runs one saved request
// standalone (for compute-sanitizer) and prints what happened.
int main(int argc, char** argv, const std::vector<Variant>& variants);

// The executor (labkit_executor): `--serve --planner PATH [--helpers]` starts the planner PATH
// (the lab's <lab>_worker: the student's object linked against the recording runtime), loads
// the device code of PATH's .nv_fatbin section, and serves the judge as main() does, running
// the planner's plans; `--replay FILE --planner PATH` replays one saved request.
int executor_main(int argc, char** argv);

// Called by the runner once CUDA is up, before the process confines itself (the executor loads
// the device code and sends the planner its snapshot here); a non-empty result is why the
// worker cannot serve.
void set_after_cuda_init(std::function<std::string()> hook);

// Writes the plan of the executor's last call (plan.hpp, SavedPlan) into `out` (at most `cap`
// bytes); its size, or -1 when there is none or it does not fit (protocol.hpp, kPlanOf).
void set_plan_of(std::function<int64_t(char* out, uint64_t cap)> hook);

}  // namespace labkit::worker

// One row of a lab's X-macro variant table, for labkit::*::bind({...}).
#define LABKIT_WORKER_ENTRY(name, fn) {#name, &fn},
// One row as a name only, for the judge's tests: {LAB_VARIANTS(LABKIT_VARIANT_NAME)}.
#define LABKIT_VARIANT_NAME(name, fn) #name,
