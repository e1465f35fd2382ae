// The judge <-> worker wire format (docs/architecture.md, "The worker protocol"). The worker the
// judge speaks it with is the executor (labkit_executor: trusted, it owns the GPU, the buffers
// and the events, and runs the student's device code by the plans it gets from the planner,
// the process of the student's host code, over a wire of their own: plan.hpp) or a
// self-contained runner started directly (the calibration worker, the harness's self-test
// workers); both serve it with the runner of worker.cpp. The planner never sees a message of
// this protocol. The judge holds the reference, the comparison and the clock.
//
// Messages are fixed-size plain structs sent over pipes. Correctness tests move their bulk data
// (inputs, outputs) through a shared memory arena both processes map (inputs too large for the
// host are drawn on the device: Source); benchmarks through the worker's device buffers, which
// the judge maps by CUDA IPC and fills and reads itself. Every request carries a fresh nonce the
// reply must echo. The judge checks every field of every reply and takes none on trust: the
// student's device code runs in the worker's context, on its buffers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace labkit::protocol {

inline constexpr uint32_t kMagic = 0x4C424B34u;  // "LBK4"
inline constexpr int kMaxParams = 16;
inline constexpr int kMaxBuffers = 8;
inline constexpr int kMaxCalls = 8;
inline constexpr int kMaxVariants = 16;
inline constexpr int kNameLen = 64;

// The worker's descriptors (dup2'ed there by the judge before exec): the executor's, or a
// self-contained runner's. The planner's 3 and 4 are its own pipes to the executor (plan.hpp).
inline constexpr int kRequestFd = 3;
inline constexpr int kReplyFd = 4;
inline constexpr int kArenaFd = 5;

enum class Op : uint32_t {
  kHello = 1,       // initialise CUDA, then confine the process (sandbox.hpp); reply: device,
                    // variant names (the executor's: those its planner sent in its hello),
                    // whether it is confined. Between the two the executor loads the student's
                    // device code once and sends the planner its snapshot (worker.hpp,
                    // set_after_cuda_init); the filter is kEnforce, or kReplay under the
                    // sanitizer. The planner confined itself before any constructor of its
                    // executable ran (sandbox.hpp, kPlanner)
  kRun = 2,         // correctness: `calls` input sets from the arena, outputs back into it
  kBenchSetup = 3,  // allocate one benchmark shape's buffers (each with kGuardBytes of canary
                    // zone on either side) and hand them to the judge by CUDA IPC handle
  kBenchTimed = 5,  // call the launcher once on those buffers, device-wide sync, reply; the
                    // judge's clock around it is the time (the events only ever lengthen it).
                    // In the executor "the launcher" is the plan it got at the kPing: it runs
                    // the plan's checked ops between events on the stream, and no host code of
                    // the student's; the calibration worker launches one empty kernel
  kQuit = 8,
  kPing = 9,        // frees the outputs a kFlagKeepOnDevice call kept, then nothing: answered
                    // at once. The judge sends one once it has checked such outputs
                    // (Worker::release_kept), and one before each timed call so
                    // that the worker is awake (polling its pipe) when the clock starts. Only
                    // the executor, once kBenchSetup set up a benchmark, does something first,
                    // off the clock: it loads a fresh copy of the device code, asks the planner
                    // for the timed call's plan, loads its kernels and waits for the GPU
  kPlanOf = 10,     // the executor writes the plan its last call ran into the arena at 0
                    // (plan.hpp, SavedPlan): the race check replays that very plan
};

enum class Role : uint32_t { kInput = 1, kOutput = 2, kInOut = 3 };

// Where a buffer's contents come from: the arena, or a generated source (labkit/source.hpp).
// The generated sources are drawn on the device, fresh per call: in a benchmark by the judge (into the worker's buffers, from the call's seed); in a
// correctness call (kRun: inputs too large to pass through the host) by the worker (the
// executor, never the planner, which sees no input), from the buffer's `seed` (call c:
// source_seed(seed, c)), for an input or in-out buffer; the judge draws the same numbers on its
// own GPU memory for its reference, and never takes the worker's copy on trust. For an output,
// a generated source is the garbage it holds before every call, in place of the poison.
// The core's sources are below; every op family brings its own under identifiers of its own
// (labkit/ops/*_dist.hpp; common/src/ops/sources.cpp lists them), which the protocol carries
// without knowing them. An identifier nobody registered is refused where a buffer is described.
enum class Source : uint32_t {
  kArena = 0,        // bytes written by the judge into the arena
  kUniformF32 = 1,   // labkit::uniform_f32(seed, i, lo, hi)
  kUniformI32 = 2,   // labkit::uniform_i32(seed, i, lo, hi)
  kUniformF16 = 10,  // labkit::uniform_f32(seed, i, lo, hi) rounded to the nearest IEEE half
  kUniformBF16 = 11, // the same, rounded to the nearest bfloat16
};

inline constexpr int kIpcHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)

struct BufferDesc {
  uint32_t role = 0;        // Role
  uint32_t elem_size = 0;   // bytes per element: 1, 2, 4 or 8
  uint64_t count = 0;       // elements
  uint64_t in_offset = 0;   // arena offset of call 0's input bytes; call c at + c * bytes
  uint64_t out_offset = 0;  // arena offset where call 0's output goes; call c at + c * bytes
  uint32_t source = 0;      // Source
  uint32_t offset = 0;      // kRun: the buffer starts `offset` bytes past a 256-byte aligned
                            // address (a multiple of 4 and of elem_size, < kMaxOffsetBytes):
                            // the pointer a launcher gets need not be aligned (the planner's
                            // made-up address keeps the real one's low 20 bits)
  double lo = 0, hi = 0;    // generator range (generated sources)
  uint64_t seed = 0;        // kRun, generated sources: call 0's seed (source_seed)
};

enum Flags : uint32_t {
  kFlagCapture = 1u << 0,   // record the launcher under stream capture, then replay the graph
                            // (the executor: the plan's ops, made by a planner told that the
                            // call is captured)
  kFlagExactBuffers = 1u << 2,  // a saved request replayed under memcheck: buffers of their
                                // exact size, no canaries (memcheck then names the first byte
                                // past the end); racecheck replays keep them, so the buffers'
                                // layout is the graded call's
  kFlagKeepOnDevice = 1u << 1,  // kRun of one call: the outputs are not copied to the arena;
                                // they stay in the worker's buffers until its next request (the
                                // judge's kPing once it has checked them), and
                                // the reply's ipc_handles hold those buffers' allocations (the
                                // data kGuardBytes + offset into each)
};

struct Request {
  uint32_t magic = kMagic;
  uint32_t op = 0;          // Op
  uint32_t flags = 0;
  uint32_t calls = 1;       // kRun: input sets, 1..kMaxCalls
  char variant[kNameLen] = {};
  uint32_t n_params = 0;
  uint32_t n_buffers = 0;
  int64_t params[kMaxParams] = {};
  BufferDesc buffers[kMaxBuffers] = {};
  uint64_t arena_bytes = 0;  // the arena's current size (the worker remaps when it grew)
  uint64_t nonce = 0;        // fresh per request; the reply echoes it
};

enum class Status : uint32_t {
  kOk = 0,
  kLaunchError = 1,     // cudaGetLastError after the launcher: bad configuration
                        // (the executor: a launch of the plan that the driver refused)
  kRunError = 2,        // the kernel failed while running (sticky: the worker exits after)
  kCaptureProblem = 3,  // the launcher's work did not all go onto its stream
  kBadRequest = 4,      // the worker could not make sense of the request
                        // (from the executor also a call it would not run: a plan or device
                        // code it refused, a launcher that failed in the planner; the message
                        // says why)
  kNoDevice = 5,        // CUDA could not be initialised
                        // (kHello; or the worker could not get ready: the executor loading the
                        // device code or making the planner's snapshot, the confinement)
  kUnknownVariant = 6,
  kOutOfMemory = 7,
};

// What a canary check found (labkit::check_canaries), counted in 4-byte words.
struct GuardInfo {
  uint64_t before = 0;          // changed words in the zone before byte 0
  uint64_t after = 0;           // changed words in the zone after the last byte
  uint64_t first_after = 0;     // the first changed word after the data, in words past its end
  uint64_t nearest_before = 0;  // the nearest changed word before the data (1 = word [-1])
  bool intact() const { return before == 0 && after == 0; }
};

struct Reply {
  uint32_t magic = kMagic;
  uint32_t status = 0;        // Status
  int32_t cuda_error = 0;     // cudaError_t of a failure
  uint32_t failed_call = 0;   // kRun: which input set failed
  char message[1024] = {};
  GuardInfo guards[kMaxBuffers] = {};  // worst over the calls, per buffer
  uint32_t inputs_changed = 0;         // bit b: input buffer b differed after some call
  uint32_t confined = 0;               // kHello: 1 when the seccomp filter is in force
  uint64_t nonce = 0;                  // the request's
  double event_ms = 0;        // kBenchTimed: between events on the stream (never trusted alone)
  char device[128] = {};
  char ipc_handles[kMaxBuffers][kIpcHandleBytes] = {};  // kBenchSetup, kFlagKeepOnDevice: one
                                                        // allocation a buffer
  uint32_t n_variants = 0;
  char variants[kMaxVariants][kNameLen] = {};
};

// The largest BufferDesc::offset, exclusive.
inline constexpr uint32_t kMaxOffsetBytes = 256;

// Canary zone size on each side of every device buffer, in bytes.
inline constexpr uint64_t kGuardBytes = uint64_t{1} << 16;

inline uint64_t buffer_bytes(const BufferDesc& b) { return b.count * b.elem_size; }
// A role on the wire (BufferDesc::role): read by the launcher (input, inout) or written by it
// (output, inout).
inline bool is_input(uint32_t role) {
  return role == static_cast<uint32_t>(Role::kInput) ||
         role == static_cast<uint32_t>(Role::kInOut);
}
inline bool is_output(uint32_t role) {
  return role == static_cast<uint32_t>(Role::kOutput) ||
         role == static_cast<uint32_t>(Role::kInOut);
}

// The last 8 bytes of a profile replay's outputs file (common/src/worker.cpp, replay): the
// outputs before it were all written.
inline constexpr uint64_t kOutputsDone = 0x454E4F4453545550ull;  // "PUTSDONE"

// The generator seed of buffer `b` for a benchmark call drawn from `seed`: the judge draws the
// call's inputs into the worker's buffers (bench_suite.cpp) and its baseline's with it.
inline uint64_t buffer_seed(uint64_t seed, uint32_t b) {
  return seed ^ (0x9E3779B97F4A7C15ull * (b + 1));
}

// The generator seed of call `c` of a correctness request, for a buffer whose `seed` is `seed`:
// the worker draws with it, and so does the judge for its reference.
inline uint64_t source_seed(uint64_t seed, uint32_t c) {
  return seed ^ (0xD1B54A32D192ED03ull * (c + 1));
}

}  // namespace labkit::protocol
