// The judge's side of the worker protocol: starts the student's worker in a sandbox, sends it
// requests, checks every reply, and survives whatever the worker does (crash, hang, garbage,
// a sticky CUDA error): the request in flight fails, the next one gets a fresh worker.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "labkit/protocol.hpp"
#include "labkit/signature.hpp"

namespace labkit {

struct WorkerOptions {
  std::string path;            // the worker binary: the planner (the student's launcher)
  // The executor that runs the planner's plans (labkit_executor, --labkit-executor=PATH). Empty:
  // `path` is a self-contained runner (the calibration worker, the harness's self-test worker).
  std::string executor;
  bool helpers = false;        // the executor runs the lab's helpers (--labkit-worker-for routes)
  // The lab refuses shared memory (--labkit-no-shared-memory, from the grader where its policy
  // forbids the shared_memory family): the executor refuses any launch with dynamic shared
  // memory and any opt-in to it, which no SASS rule can see.
  bool no_shared_memory = false;
  std::string null_path;       // the calibration worker (no student code): labkit_null_worker
  // One request's limit, the most a call may take (grading.toml's test_timeout_s); a hang is
  // killed after it. A correctness call gets less: what its data needs (check.cpp,
  // call_timeout_for), and less again in a variant that has hung before.
  double call_timeout_s = 60;
  // The judge's tests together (--labkit-test-budget, grading.toml's test_budget_s; 0: none):
  // once spent, the remaining calls are failed without running.
  double test_budget_s = 0;
  std::string sanitizer;       // compute-sanitizer: race checks, re-runs ("" = none)
  // Nsight Compute's ncu (--labkit-profiler=PATH; "" = no profile): the bench judge replays one
  // timed call of each benchmark under it (Worker::profile).
  std::string profiler;
  // The benchmarks profiled when `profiler` is set (--labkit-profile-only=NAME,...: those a
  // lab's [[lesson]] entries grade, when the grading was not asked for every profile); empty:
  // every benchmark of the run. A name matches itself and the names it is a prefix of, up to
  // a '/'.
  std::vector<std::string> profile_only;
  // The race audit (--labkit-race-audit, `grade --race-audit`): the bench judge replays each
  // benchmark's last timed call under compute-sanitizer racecheck (`sanitizer`), at the
  // benchmark's size. Minutes per benchmark; hazards found fail the benchmark.
  bool race_audit = false;
  bool memcheck = true;        // re-run failing calls under memcheck (needs `sanitizer`)
  // Variants that run in a worker binary of their own (--labkit-worker-for=VARIANT=PATH): the
  // one linked with what a lab gives those variants only (add_cuda_lab's HELPER_VARIANTS, lab
  // 07's cuBLAS GEMM for v1_im2col). Every other variant runs in `path`, which lacks it: a
  // library that is not loaded in a process cannot be found from it (the sandbox forbids
  // loading one), so only the variants named here can reach the helper, by any route.
  std::map<std::string, std::string> variant_paths;
  // A lock file shared by every grading on this GPU (--labkit-memory-lock=PATH, from the
  // grader): a call of more than kLargeCallBytes of buffers, and the judge's own large work on
  // the GPU, hold it exclusively, so that large tests of gradings side by side take turns
  // instead of failing to allocate and waiting ("" = no lock: the retries alone).
  std::string memory_lock;
  // A file the judges of one lab's tests share (--labkit-streaks=PATH, from the grader, which
  // splits a lab's tests among judges side by side): each variant's run of hangs and crashes is
  // counted there, across them, so a kernel that always faults or never ends costs one run of
  // calls, not one per judge ("" = this judge's own count).
  std::string streaks;
};

// Set by the judge's main from its command line (--labkit-worker, --labkit-worker-for,
// --labkit-call-timeout, --labkit-sanitizer); the default worker is <this program's name,
// _test/_bench -> _worker>.
void set_worker_options(const WorkerOptions& options);
const WorkerOptions& worker_options();

// The worker binary that runs `variant`: its --labkit-worker-for entry, else options.path.
const std::string& worker_path_for(const WorkerOptions& options, const std::string& variant);

// One buffer of an op call, in the order the op family's launcher takes them.
struct BufferSpec {
  std::string name;                 // "C": for messages
  protocol::Role role = protocol::Role::kInput;
  uint32_t elem_size = 4;
  uint64_t count = 0;
  std::vector<uint64_t> dims;       // for messages: {rows, cols}, {n}, {n, c, h, w}
  // Or drawn on the device (protocol.hpp). For an output: what it holds before every call, drawn
  // fresh for each call in place of the harness's poison (a launcher that zeroes or overwrites
  // it cannot fold a known initial value into its answer; the report then cannot say "never
  // written" from the poison, and the family's verify says it instead).
  protocol::Source source = protocol::Source::kArena;
  double lo = -1.0, hi = 1.0;       // generator range
  // Correctness calls only: a generated source's seed (call c draws with
  // protocol::source_seed(seed, c); OpCall::inputs holds no bytes for that buffer), and how many
  // bytes past an aligned address the buffer starts (protocol::BufferDesc::offset).
  uint64_t seed = 0;
  uint32_t offset = 0;
  uint64_t bytes() const { return count * elem_size; }
};

// The buffers of one call of an op family, from its signature (labkit/signature.hpp): one per
// row of its table, in its order, sized for `sizes`. Sources, seeds and offsets stay the
// defaults (arena bytes); a spec or a benchmark sets them by name: buffers[Sig::kX].source.
template <typename Sizes, size_t N>
std::vector<BufferSpec> buffer_specs(const BufDecl<Sizes> (&table)[N], const Sizes& sizes) {
  std::vector<BufferSpec> out;
  out.reserve(N);
  for (const BufDecl<Sizes>& row : table) {
    BufferSpec b;
    b.name = row.name;
    b.role = row.role;
    b.elem_size = static_cast<uint32_t>(elem_size(row.type(sizes)));
    b.dims = row.dims(sizes);
    b.count = row.count(sizes);
    out.push_back(std::move(b));
  }
  return out;
}

using Bytes = std::vector<uint8_t>;

// What the judge asks the worker to run.
struct OpCall {
  std::string variant;
  std::vector<int64_t> params;
  std::vector<BufferSpec> buffers;
  std::vector<std::vector<Bytes>> inputs;  // [call][buffer]; empty for outputs; 1..8 calls
  bool capture = false;                    // record under stream capture (the stream rule)
  // One call whose outputs stay on the GPU (OpResult::device_outputs) for a check there: the
  // gigabytes of a large output never go through the host.
  bool keep_on_device = false;
};

enum class Outcome {
  kOk,
  kLaunchError,     // the launch was refused (bad grid/block)
  kRunError,        // the kernel faulted while running
  kCaptureProblem,  // not all of the launcher's work went onto its stream
  kCrashed,         // the worker process died
  kTimeout,         // killed after the call timeout
  kProtocolError,   // the worker sent something that is not a valid reply
  kNoDevice,        // the worker could not use the GPU
  kRefused,         // unknown variant, bad request, out of memory
  kHostCompute,     // the worker spent more CPU time on the call than moving its data needs
};
const char* outcome_name(Outcome o);

struct OpResult {
  Outcome outcome = Outcome::kOk;
  std::string message;          // what the worker or the judge saw
  int cuda_error = 0;
  int failed_call = 0;
  std::vector<std::vector<Bytes>> outputs;  // [call][buffer]; empty for inputs
  // keep_on_device: [buffer] the worker's output data, mapped into this process (nullptr for
  // inputs); valid until this worker's next request. `outputs` is then empty.
  std::vector<const void*> device_outputs;
  std::vector<protocol::GuardInfo> guards;  // per buffer, worst over the calls
  uint32_t inputs_changed = 0;              // bit b: input buffer b changed
  std::string log;                          // the worker's own output during the call (tail)
  double worker_cpu_ms = -1;                // the worker's CPU time during the call (-1: unknown)
  bool ok() const { return outcome == Outcome::kOk; }
};

struct TimedCall {
  Outcome outcome = Outcome::kOk;
  std::string message;
  double event_ms = 0;  // the worker's events around the launcher (untrusted: only a floor)
  double judge_ms = 0;  // this process's clock from before `open` to after `close`
};

// A benchmark buffer the worker allocated and hands to the judge (CUDA IPC): the handle of the
// whole allocation; the buffer starts protocol::kGuardBytes into it, after a canary zone.
struct SharedBuffer {
  std::array<char, protocol::kIpcHandleBytes> handle{};
};

inline constexpr const char* kRaceReplayWithoutPlan =
    "  (not run: the executor kept no plan of the graded call to replay, and a plan made again "
    "by a fresh copy of the launcher need not be the graded one)\n";
// What Worker::sanitize returns when the tool did not finish within its limit (or the judge's
// time left): the call under the tool is too slow, which says nothing of hazards.
inline constexpr const char* kSanitizerTimedOut = "  (compute-sanitizer did not finish in time)\n";

// compute-sanitizer's command line for `tool` (memcheck, racecheck) writing its report to
// `report`; the replayed command follows it. Racecheck leaves out the executor's own scrubs
// (kScrubKernels): they run before every call, graded or replayed, and write all of every
// block's shared memory, which under racecheck's tracking took about 1 of a replay's 2.4 s on an
// H200.
std::vector<std::string> sanitizer_argv(const std::string& sanitizer, const std::string& tool,
                                        const std::string& report);
// The scrubs' mangled names exactly (device_fill.hpp, scrub_kernel_names: labkit::scrub::
// shared_kernel(unsigned), labkit::scrub::local_kernel<N>()), anchored at both ends. No student
// kernel matches it: the policy refuses device functions in namespace labkit:: and C-linkage
// definitions, and a demangled name, were the tool to match those too, ends in its parameter
// list. A pattern open at its end took in a plain identifier that starts _ZN6labkit once
// demangled (red team round 38, 05_reduction/racecheck_demangled_exclude).
inline constexpr const char* kScrubKernels =
    "^_ZN6labkit5scrub(13shared_kernelEj|12local_kernelILi[0-9]+EEEvv)$";

// What the profile stage measured of one call (Worker::profile): its kernels' hardware counters
// from Nsight Compute, summed over the kernels (occupancy: weighted by each kernel's time).
enum class ProfileStatus : int {
  kNotAsked = 0,      // no profiler given
  kOk = 1,
  kNoPermission = 2,  // the GPU's counters are open to administrators only (ERR_NVGPUCTRPERM)
  kNoKernels = 3,     // the tool ran but profiled no kernel (no counters on this machine?)
  kTimedOut = 4,
  kToolFailed = 5,
  kWrongOutput = 6,   // the profiled call's output is wrong (the bench judge checks it)
};
struct Profile {
  ProfileStatus status = ProfileStatus::kToolFailed;
  std::string why;                  // when not kOk
  int kernels = 0;
  // The executor's own kernels the profiler measured (its fills of the call's inputs, which run
  // before any kernel of the student's): none means the profiler measured nothing on this
  // machine, whatever the student's code did (grader: a lesson is then not graded).
  int own_kernels = 0;
  double dram_read_bytes = 0, dram_write_bytes = 0;
  double ld_sectors = 0, ld_requests = 0;   // global loads: 32-byte sectors, and requests
  double st_sectors = 0, st_requests = 0;   // global stores
  double atom_sectors = 0;                  // value-returning global atomics (ATOMG)
  // Of the bytes those sectors moved, the share the warps asked for (100: coalesced), weighted
  // by each kernel's sectors.
  double ld_sector_use_pct = 0, st_sector_use_pct = 0;
  // The least of them over the kernels that move at least kSectorUseFloorSectors (32 MiB) each
  // (for loads: what a kernel reads through loads and value-returning atomics together)
  // (where none does, over every kernel that moved a sector: work split into many small
  // kernels is not averaged either): a kernel added to the call, however coalesced, cannot
  // raise it (a lesson reads it).
  double ld_sector_use_worst_pct = 0, st_sector_use_worst_pct = 0;
  double shared_bank_conflicts = 0;         // shared-memory loads and stores
  double gpu_ns = 0;                        // the kernels' time under the profiler
  double occupancy_pct = 0;                 // achieved occupancy, % of the SM's peak warps
  double registers = 0;                     // the most registers per thread of any kernel
  // The profiled call's output buffers ([buffer]; empty for the others), as the replayed
  // executor left them: the bench judge checks them like a timed call's (kOk only).
  std::vector<Bytes> outputs;
};
// A kernel counts towards the worst sector use when it moves at least this many 32-byte sectors.
inline constexpr double kSectorUseFloorSectors = double(1u << 20);
// The ncu metrics Worker::profile asks for, comma-separated.
std::string profile_metrics();
// Reads ncu's --csv --print-units base report (one row per kernel and metric); a status that is
// not kOk when it holds no counters, with why.
Profile parse_profile(const std::string& report);
// Whether the bench judge profiles the benchmark `name`: a profiler is set and `profile_only` is
// empty or holds `name` or a prefix of it ending where a '/' follows.
bool profile_wanted(const WorkerOptions& options, const std::string& name);

class Worker {
 public:
  explicit Worker(WorkerOptions options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // One correctness call: the worker's outputs, canaries and the judge's findings, killed
  // after `timeout_s` per call (0: the options' call_timeout_s). A call whose
  // worker CPU time is over host_cpu_allowance_ms is made once more in a fresh worker (a new
  // process, arena, log and scratch folder: nothing of the first attempt reaches it), and is
  // host_compute only when that one is over too.
  OpResult run(const OpCall& call, double timeout_s = 0);
  // After a call with keep_on_device, once its outputs are checked: unmaps them and has the
  // worker free them at once (else they stay until its next request).
  void release_kept();

  // Benchmarks: the worker allocates one shape's buffers (one per call.buffers entry) and hands
  // them over (`buffers`), then one timed call at a time. The judge's clock runs from before
  // `open` (the judge writes the fresh inputs there) to after `close` (it copies the outputs
  // there): anything the worker does to produce them happens inside it. Every request carries
  // a fresh nonce; a reply out of turn is a protocol error.
  OpResult bench_setup(const OpCall& call, std::vector<SharedBuffer>* buffers);
  TimedCall bench_timed(const std::function<void()>& open, const std::function<void()>& close);

  // Re-runs `call` in a fresh worker under compute-sanitizer (`tool`: memcheck, racecheck) and
  // returns its findings, "" when it found nothing; `clean` is set when the tool ran and
  // reported no error. The run is killed after the tool's deadline (racecheck 300 s, memcheck
  // 180 s), or after `max_s` seconds when that is positive and shorter. A race check of a
  // planned call replays the plan the executor kept of the graded call; without it the replay
  // is not run, and the findings are kRaceReplayWithoutPlan (never clean).
  std::string sanitize(const OpCall& call, const std::string& tool, bool* clean = nullptr,
                       double max_s = 0);

  // Replays `call` (the graded call's saved plan, as the race check does) in a fresh executor
  // under ncu (options.profiler) and returns its kernels' counters summed over the call
  // (profile_metrics). Never a verdict: a status says why there are none. Killed after
  // `max_s` seconds (at most 120).
  Profile profile(const OpCall& call, double max_s = 0);

  // "seccomp, uid 65534 (dropped from root)" or "seccomp, same user as the judge"; the GPU the
  // worker sees.
  std::string sandbox();
  std::string device();
  std::vector<std::string> variants();

 private:
  OpResult run_once(const OpCall& call, double timeout_s);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CPU time a correctness call may cost the worker: its own copies of `bytes` (inputs and
// outputs, all calls) and the launcher's enqueueing. More is computing on the CPU, which a
// launcher may not do; the worker cannot start threads (sandbox.hpp), so one core's worth of
// CPU work on a large call shows. Measured from outside (/proc/<pid>/stat).
double host_cpu_allowance_ms(uint64_t bytes);

// The size of the device allocation that starts at `ptr` (the driver's cuMemGetAddressRange,
// found through the runtime: the judges do not link the driver library); 0 when `ptr` is not
// the start of one.
size_t device_allocation_size(const void* ptr);

// The judge's worker for the variants without a worker of their own, started on first use with
// worker_options().
Worker& shared_worker();

// The worker that runs `variant` (worker_path_for): shared_worker(), or one judge-wide worker
// per --labkit-worker-for binary, started on first use. Every call is routed by its variant,
// tests and benchmarks alike, so one judge process serves a lab whose variants run in
// different binaries (a judge per variant would repeat the listing and the start-up).
Worker& worker_for(const std::string& variant);

// Kills every process this judge has adopted (it is a child subreaper: whatever a worker
// started and left behind is reparented here) except the live workers'. Called after every
// worker ends; returns how many it killed.
int kill_strays();

}  // namespace labkit
