// The runner: the worker's request loop (protocol.hpp), linked into the executor
// (labkit_executor, executor.cpp), the calibration worker (labkit_null_worker) and the
// harness's self-test workers; never into a planner, which has a main of its own (planner.cpp).
// No host code of the student's runs in its process: in the executor a variant's launch runs
// the plan the planner made for the call (Variant::prepare asks for it and loads a fresh copy of
// the device code, outside any capture or timed window), checked op by op. The student's device
// code does run here, on this process's context and buffers, so nothing here decides a verdict:
// it moves bytes, runs the call, and reports what the CUDA runtime said and what the events
// read. The judge checks all of it.
#include "labkit/worker.hpp"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/fd_io.hpp"
#include "labkit/protocol.hpp"
#include "labkit/sandbox.hpp"
#include "labkit/source.hpp"

namespace labkit::worker {
namespace {

namespace p = ::labkit::protocol;

void set_message(p::Reply& reply, const std::string& text) {
  std::snprintf(reply.message, sizeof(reply.message), "%s", text.c_str());
}

// The shared arena, or a private copy of one (replay mode).
class Arena {
 public:
  explicit Arena(int fd) : fd_(fd) {}
  ~Arena() { unmap(); }
  void adopt(std::vector<char> bytes) {
    unmap();
    owned_ = std::move(bytes);
    base_ = owned_.data();
    size_ = owned_.size();
  }
  // Maps at least `bytes` (the judge grows the memfd before sending a request).
  bool ensure(uint64_t bytes) {
    if (bytes <= size_) return true;
    if (fd_ < 0) return false;
    unmap();
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (m == MAP_FAILED) return false;
    base_ = static_cast<char*>(m);
    size_ = bytes;
    mapped_ = true;
    return true;
  }
  char* at(uint64_t offset) { return base_ + offset; }
  uint64_t size() const { return size_; }

 private:
  void unmap() {
    if (mapped_) ::munmap(base_, size_);
    mapped_ = false;
    base_ = nullptr;
    size_ = 0;
  }
  int fd_;
  char* base_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::vector<char> owned_;
};

// Canary bytes on each side of every buffer: kGuardBytes, or none when the worker replays a
// request under compute-sanitizer (then every buffer is its exact size, so memcheck reports
// the first byte past the end instead of the canaries catching it silently).
uint64_t g_guard_bytes = p::kGuardBytes;

std::function<std::string()> g_after_cuda_init;
// The executor's replay under ncu (--profile-replay, executor --profile): not confined.
bool g_profile_replay = false;
std::function<int64_t(char*, uint64_t)> g_plan_of;

// Merges a buffer's canary check into the reply's worst case over the calls.
void merge(const p::GuardInfo& g, p::GuardInfo& info) {
  if (g.before > info.before) {
    info.before = g.before;
    info.nearest_before = g.nearest_before;
  }
  if (g.after > info.after) {
    info.after = g.after;
    info.first_after = g.first_after;
  }
}

using p::is_input;
using p::is_output;
bool generated(const p::BufferDesc& d) {
  return d.source != static_cast<uint32_t>(p::Source::kArena);
}

// Checks a request against the arena: sizes that fit, offsets that do not overflow.
std::string validate(const p::Request& r, uint64_t arena_bytes) {
  if (r.n_params > static_cast<uint32_t>(p::kMaxParams)) return "too many parameters";
  if (r.n_buffers > static_cast<uint32_t>(p::kMaxBuffers)) return "too many buffers";
  if (r.calls < 1 || r.calls > static_cast<uint32_t>(p::kMaxCalls)) return "bad call count";
  for (uint32_t b = 0; b < r.n_buffers; ++b) {
    const p::BufferDesc& d = r.buffers[b];
    if (d.elem_size != 1 && d.elem_size != 2 && d.elem_size != 4 && d.elem_size != 8) {
      return "bad element size";
    }
    if (d.count > (uint64_t{1} << 40)) return "buffer too large";
    if (d.offset >= p::kMaxOffsetBytes || d.offset % 4 != 0 || d.offset % d.elem_size != 0) {
      return "bad buffer offset";
    }
    if (generated(d)) {
      const SourceKind* kind = find_source(d.source);
      if (kind == nullptr) return "unknown source";
      if (kind->elem_size != d.elem_size) return "element size not the source's";
    }
    const uint64_t span = p::buffer_bytes(d) * r.calls;
    if (d.source == static_cast<uint32_t>(p::Source::kArena) && is_input(d.role) &&
        (d.in_offset > arena_bytes || span > arena_bytes - d.in_offset)) {
      return "input outside the arena";
    }
    if (is_output(d.role) && (d.out_offset > arena_bytes || span > arena_bytes - d.out_offset)) {
      return "output outside the arena";
    }
  }
  return "";
}

class Runner {
 public:
  Runner(const std::vector<Variant>& variants, Arena& arena, bool replay = false)
      : variants_(variants), arena_(arena), replay_(replay) {}

  p::Reply handle(const p::Request& req) {
    p::Reply reply;
    reply.nonce = req.nonce;
    if (req.magic != p::kMagic) return bad(reply, "bad magic");
    if (!arena_.ensure(req.arena_bytes)) return bad(reply, "cannot map the arena");
    const auto op = static_cast<p::Op>(req.op);
    if (op == p::Op::kHello) return hello(reply);
    if (op == p::Op::kPing) {
      // After a call whose outputs the judge read on the device (Worker::release_kept): they go
      // now, not at the next request, which may come much later (gigabytes of GPU memory that
      // other tests on this GPU wait for).
      kept_.clear();
      // Before a timed call: the plan and a fresh copy of the device code, off the clock.
      if (bench_ready_ && bench_variant_ != nullptr && bench_variant_->prepare) {
        Call call = bench_call();
        bench_variant_->prepare(call, false, true, bench_first_);
        bench_first_ = false;
      }
      return reply;
    }
    kept_.clear();  // the last call's outputs the judge read on the device
    if (op != p::Op::kBenchTimed) {
      const std::string problem = validate(req, arena_.size());
      if (!problem.empty()) return bad(reply, problem);
    }
    try {
      switch (op) {
        case p::Op::kRun: return run(req, reply);
        case p::Op::kBenchSetup: return bench_setup(req, reply);
        case p::Op::kBenchTimed: return bench_timed(reply);
        case p::Op::kPlanOf: {
          const int64_t n = g_plan_of ? g_plan_of(arena_.at(0), arena_.size()) : -1;
          if (n < 0) return bad(reply, "no plan to give");
          return reply;
        }
        default: return bad(reply, "unknown request");
      }
    } catch (const CudaError& e) {
      reply.status = static_cast<uint32_t>(e.code() == cudaErrorMemoryAllocation
                                               ? p::Status::kOutOfMemory
                                               : p::Status::kRunError);
      reply.cuda_error = e.code();
      set_message(reply, e.what());
    } catch (const std::exception& e) {
      return bad(reply, e.what());
    }
    return reply;
  }

 private:
  p::Reply& bad(p::Reply& reply, const std::string& why) {
    reply.status = static_cast<uint32_t>(p::Status::kBadRequest);
    set_message(reply, why);
    return reply;
  }

  p::Reply& hello(p::Reply& reply) {
    int device = 0;
    // Waiting for the GPU sleeps instead of spinning, so this process's CPU time, which the judge
    // reads from outside (Worker::run_once), is its work and not its waiting. The judge holds it
    // to an allowance in a self-contained runner, whose launchers run in this process (the
    // harness's self-test workers); the executor runs no launcher (the planner is a process of
    // its own), and the judge applies no allowance to it. Timed calls poll their stop event
    // instead.
    cudaError_t err = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
    if (err == cudaSuccess) err = cudaFree(nullptr);
    cudaDeviceProp prop{};
    if (err == cudaSuccess) err = cudaGetDevice(&device);
    if (err == cudaSuccess) err = cudaGetDeviceProperties(&prop, device);
    if (err != cudaSuccess) {
      reply.status = static_cast<uint32_t>(p::Status::kNoDevice);
      reply.cuda_error = err;
      set_message(reply, describe(err));
      return reply;
    }
    std::snprintf(reply.device, sizeof(reply.device), "%.127s", prop.name);
    if (g_after_cuda_init && !after_init_done_) {
      std::string why;
      try {
        why = g_after_cuda_init();
      } catch (const std::exception& e) {
        why = e.what();
      }
      if (!why.empty()) {
        reply.status = static_cast<uint32_t>(p::Status::kNoDevice);
        set_message(reply, why);
        return reply;
      }
      after_init_done_ = true;
    }
    // CUDA is up (and, in the executor, the device code loaded and the planner's snapshot sent):
    // from here on the process can only compute and answer (sandbox.hpp). No call has run yet,
    // and no host code of the student's ever runs in this process (it runs in the planner,
    // confined before its first constructor).
    if (!confined_ && g_profile_replay) {
      // A replay under ncu (--profile-replay): the profiler's code inside this process does what
      // no filter here allows, and the executor runs no host code of the student's (its saved
      // plan, no planner): unconfined, and said so.
      confined_ = 3;
    }
    if (!confined_) {
      const char* mode = std::getenv("LABKIT_SANDBOX");
      const bool survey = mode != nullptr && std::strcmp(mode, "survey") == 0;
      const std::string why = sandbox::confine(survey   ? sandbox::Mode::kSurvey
                                               : replay_ ? sandbox::Mode::kReplay
                                                         : sandbox::Mode::kEnforce);
      if (!why.empty()) {
        reply.status = static_cast<uint32_t>(p::Status::kNoDevice);
        set_message(reply, "the worker could not confine itself: " + why);
        return reply;
      }
      confined_ = survey ? 2 : 1;
    }
    reply.confined = confined_;
    reply.n_variants = static_cast<uint32_t>(std::min<size_t>(variants_.size(), p::kMaxVariants));
    for (uint32_t i = 0; i < reply.n_variants; ++i) {
      std::snprintf(reply.variants[i], p::kNameLen, "%s", variants_[i].name.c_str());
    }
    return reply;
  }

  const Variant* find(const char* name) const {
    const std::string wanted(name, strnlen(name, p::kNameLen));
    for (const Variant& v : variants_) {
      if (v.name == wanted) return &v;
    }
    return nullptr;
  }

  cudaStream_t test_stream() {
    // Non-blocking: a launch on the legacy default stream is not ordered with it, so the
    // graph-capture check sees such work as missing from `stream`.
    if (test_stream_ == nullptr) {
      CUDA_CHECK(cudaStreamCreateWithFlags(&test_stream_, cudaStreamNonBlocking));
    }
    return test_stream_;
  }

  // Records the call under stream capture and replays it (the executor: the plan's ops, planned
  // for a captured call): all of the launcher's work must go onto `stream`. Returns "" or what
  // went wrong.
  std::string launch_captured(const Variant& v, Call& call) {
    const char* rule =
        "\n  the launcher must enqueue its kernel(s) on the `stream` it is given and nothing "
        "else: no launch on the default stream (<<<grid, block, 0, stream>>>), no copies, "
        "allocations or synchronization inside it";
    CUDA_CHECK(cudaStreamBeginCapture(call.stream, cudaStreamCaptureModeGlobal));
    try {
      v.launch(call);
    } catch (...) {
      // A launch that throws (the executor: a plan it refuses, a launcher that failed in the
      // planner, a helper the lab gives other variants only) must not leave the stream
      // recording: the call fails with its message, the next one starts clean.
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(call.stream, &partial) == cudaSuccess && partial != nullptr) {
        cudaGraphDestroy(partial);
      }
      cudaGetLastError();
      throw;
    }
    const cudaError_t during = cudaGetLastError();
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(call.stream, &graph);
    cudaGetLastError();  // capture errors are not sticky; clear them
    std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)> owned(graph, &cudaGraphDestroy);
    if (during != cudaSuccess || end != cudaSuccess || graph == nullptr) {
      return "recording the launcher into a CUDA graph failed: " +
             describe(during != cudaSuccess ? during : end) + rule;
    }
    size_t nodes = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    if (nodes == 0) return std::string("the launcher put no work on its stream") + rule;
    cudaGraphExec_t exec = nullptr;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const cudaError_t run = cudaGraphLaunch(exec, call.stream);
    const cudaError_t sync = cudaStreamSynchronize(call.stream);
    cudaGraphExecDestroy(exec);
    if (run != cudaSuccess) throw CudaError(run, "replaying the recorded launch: " + describe(run));
    if (sync != cudaSuccess) throw CudaError(sync, "running the recorded launch: " + describe(sync));
    return "";
  }

  p::Reply& run(const p::Request& req, p::Reply& reply) {
    const Variant* v = find(req.variant);
    if (v == nullptr) {
      reply.status = static_cast<uint32_t>(p::Status::kUnknownVariant);
      set_message(reply, std::string("no variant named ") + req.variant);
      return reply;
    }
    const bool keep = (req.flags & p::kFlagKeepOnDevice) != 0;
    if (keep && (req.calls != 1 || (req.flags & p::kFlagCapture) != 0 || g_guard_bytes != p::kGuardBytes)) {
      return bad(reply, "outputs kept on the device: one call, not captured, with canaries");
    }
    std::vector<std::unique_ptr<GuardedBuffer>> bufs;
    std::vector<void*> ptrs;
    std::vector<uint64_t> sizes;
    for (uint32_t b = 0; b < req.n_buffers; ++b) {
      bufs.push_back(std::make_unique<GuardedBuffer>(p::buffer_bytes(req.buffers[b]),
                                                     g_guard_bytes, req.buffers[b].offset));
      ptrs.push_back(bufs.back()->data());
      sizes.push_back(p::buffer_bytes(req.buffers[b]));
    }
    Call call{req.params, static_cast<int>(req.n_params), ptrs.data(),
              static_cast<int>(req.n_buffers), test_stream(), sizes.data()};
    for (uint32_t c = 0; c < req.calls; ++c) {
      reply.failed_call = c;
      for (uint32_t b = 0; b < req.n_buffers; ++b) {
        const p::BufferDesc& d = req.buffers[b];
        const uint64_t bytes = p::buffer_bytes(d);
        if (generated(d)) {  // an input's draw, or garbage in an output in place of the poison
          fill_source(bufs[b]->data(), static_cast<p::Source>(d.source), d.count,
                      p::source_seed(d.seed, c), d.lo, d.hi, nullptr);
        } else if (is_input(d.role)) {
          CUDA_CHECK(cudaMemcpy(bufs[b]->data(), arena_.at(d.in_offset + c * bytes), bytes,
                                cudaMemcpyHostToDevice));
        } else {
          fill_pattern32(bufs[b]->data(), bytes / 4 * 4, kPoisonBits, nullptr);
        }
      }
      CUDA_CHECK(cudaDeviceSynchronize());
      // A fresh copy of the device code for the test's first call; its later calls share it.
      if (v->prepare) v->prepare(call, (req.flags & p::kFlagCapture) != 0, false, c == 0);

      // Under ncu (--profile-replay, ncu --profile-from-start off): only the call is profiled.
      // The harness's own kernels around it (fills, poison, canaries, the inputs' check) were
      // each replayed pass by pass with their memory saved and restored: most of the profile
      // stage's seconds at 2^28 elements, for counters the judge leaves out anyway.
      if (g_profile_replay) CUDA_CHECK(cudaProfilerStart());
      if (req.flags & p::kFlagCapture) {
        const std::string problem = launch_captured(*v, call);
        if (!problem.empty()) {
          reply.status = static_cast<uint32_t>(p::Status::kCaptureProblem);
          set_message(reply, problem);
          return reply;
        }
      } else {
        v->launch(call);
      }
      const cudaError_t launch = cudaGetLastError();
      if (launch != cudaSuccess) {
        reply.status = static_cast<uint32_t>(p::Status::kLaunchError);
        reply.cuda_error = launch;
        set_message(reply, describe(launch));
        return reply;
      }
      const cudaError_t stream_sync = cudaStreamSynchronize(call.stream);
      const cudaError_t device_sync = cudaDeviceSynchronize();  // work left on other streams
      const cudaError_t ran = stream_sync != cudaSuccess ? stream_sync : device_sync;
      if (g_profile_replay && ran == cudaSuccess) CUDA_CHECK(cudaProfilerStop());
      if (ran != cudaSuccess) {
        reply.status = static_cast<uint32_t>(p::Status::kRunError);
        reply.cuda_error = ran;
        set_message(reply, describe(ran));
        return reply;
      }
      for (uint32_t b = 0; b < req.n_buffers; ++b) {
        const p::BufferDesc& d = req.buffers[b];
        const uint64_t bytes = p::buffer_bytes(d);
        merge(bufs[b]->check(), reply.guards[b]);
        if (is_output(d.role) && keep) {
          cudaIpcMemHandle_t handle;
          static_assert(sizeof(handle) == p::kIpcHandleBytes, "protocol::kIpcHandleBytes");
          CUDA_CHECK(cudaIpcGetMemHandle(&handle, bufs[b]->allocation()));
          std::memcpy(reply.ipc_handles[b], &handle, sizeof(handle));
        } else if (is_output(d.role)) {
          CUDA_CHECK(cudaMemcpy(arena_.at(d.out_offset + c * bytes), bufs[b]->data(), bytes,
                                cudaMemcpyDeviceToHost));
        } else if (generated(d)) {
          if (count_not_source(bufs[b]->data(), static_cast<p::Source>(d.source), d.count,
                               p::source_seed(d.seed, c), d.lo, d.hi, nullptr) != 0) {
            reply.inputs_changed |= 1u << b;
          }
        } else {
          std::vector<char> now(bytes);
          CUDA_CHECK(cudaMemcpy(now.data(), bufs[b]->data(), bytes, cudaMemcpyDeviceToHost));
          if (std::memcmp(now.data(), arena_.at(d.in_offset + c * bytes), bytes) != 0) {
            reply.inputs_changed |= 1u << b;
          }
        }
      }
    }
    reply.failed_call = 0;
    if (keep) kept_ = std::move(bufs);
    return reply;
  }

  // ---- benchmarks: the worker allocates each buffer (with canary zones) and hands it to the
  // judge by CUDA IPC handle; the judge writes the inputs, poisons the outputs, checks the
  // canaries and reads the outputs back itself. The call runs on the worker's own memory, as
  // in any program (memory mapped from another process can be slower to gather from).
  p::Reply& bench_setup(const p::Request& req, p::Reply& reply) {
    bench_ready_ = false;
    bench_bufs_.clear();
    bench_ptrs_.clear();
    bench_sizes_.clear();
    // The calibration worker (no variants: it holds no student code) launches an empty kernel.
    bench_variant_ = variants_.empty() ? nullptr : find(req.variant);
    if (bench_variant_ == nullptr && !variants_.empty()) {
      reply.status = static_cast<uint32_t>(p::Status::kUnknownVariant);
      set_message(reply, std::string("no variant named ") + req.variant);
      return reply;
    }
    bench_req_ = req;
    for (uint32_t b = 0; b < req.n_buffers; ++b) {
      if (req.buffers[b].offset != 0) return bad(reply, "benchmark buffers have no offset");
    }
    for (uint32_t b = 0; b < req.n_buffers; ++b) {
      const uint64_t bytes = guarded_allocation_bytes(p::buffer_bytes(req.buffers[b]), p::kGuardBytes);
      bench_bufs_.push_back(std::make_unique<DeviceBuffer<char>>(bytes));
      bench_ptrs_.push_back(bench_bufs_.back()->get() + p::kGuardBytes);
      bench_sizes_.push_back(p::buffer_bytes(req.buffers[b]));
      cudaIpcMemHandle_t handle;
      static_assert(sizeof(handle) == p::kIpcHandleBytes, "protocol::kIpcHandleBytes");
      CUDA_CHECK(cudaIpcGetMemHandle(&handle, bench_bufs_.back()->get()));
      std::memcpy(reply.ipc_handles[b], &handle, sizeof(handle));
    }
    if (bench_stream_ == nullptr) {
      // Blocking: work sent to the legacy default stream is ordered with the events.
      CUDA_CHECK(cudaStreamCreate(&bench_stream_));
      CUDA_CHECK(cudaEventCreate(&start_));
      CUDA_CHECK(cudaEventCreate(&stop_));
    }
    bench_ready_ = true;
    bench_first_ = true;
    CUDA_CHECK(cudaDeviceSynchronize());
    return reply;
  }

  // The call on the benchmark's buffers (the executor: the plan it got at the ping; the
  // calibration worker: an empty kernel), then a device-wide synchronize. The events are
  // reported, but the judge's own clock (from before it wrote the inputs to after it copied the
  // outputs) is what the call is graded on; the events can only make a time longer.
  p::Reply& bench_timed(p::Reply& reply) {
    if (!bench_ready_) return bad(reply, "no benchmark set up");
    Call call = bench_call();
    CUDA_CHECK(cudaEventRecord(start_, bench_stream_));
    if (bench_variant_ != nullptr) {
      bench_variant_->launch(call);
    } else {
      launch_empty_kernel(bench_stream_);
    }
    const cudaError_t launched = cudaGetLastError();
    CUDA_CHECK(cudaEventRecord(stop_, bench_stream_));
    // Poll (a blocking wait's wake-up would be inside the judge's window), then make sure
    // nothing is left on other streams.
    cudaError_t ran = cudaErrorNotReady;
    while ((ran = cudaEventQuery(stop_)) == cudaErrorNotReady) {
    }
    if (ran == cudaSuccess) ran = cudaDeviceSynchronize();
    if (launched != cudaSuccess || ran != cudaSuccess) {
      const cudaError_t err = launched != cudaSuccess ? launched : ran;
      reply.status = static_cast<uint32_t>(launched != cudaSuccess ? p::Status::kLaunchError
                                                                    : p::Status::kRunError);
      reply.cuda_error = err;
      set_message(reply, describe(err));
      return reply;
    }
    // What the call marked persisting in L2 goes back to normal before the judge times the
    // vendor's kernel (device_fill.hpp: reset_persisting_l2), in this context, where its kernels
    // ran; the calibration worker does the same, so the judge subtracts its cost.
    reset_persisting_l2();
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    reply.event_ms = ms;
    return reply;
  }

  Call bench_call() {
    return Call{bench_req_.params, static_cast<int>(bench_req_.n_params), bench_ptrs_.data(),
                static_cast<int>(bench_req_.n_buffers), bench_stream_, bench_sizes_.data()};
  }

  const std::vector<Variant>& variants_;
  Arena& arena_;
  bool after_init_done_ = false;
  bool replay_;            // under compute-sanitizer: sandbox::Mode::kReplay
  uint32_t confined_ = 0;  // 1: enforced, 2: survey (not confined: never for grading)
  cudaStream_t test_stream_ = nullptr;
  cudaStream_t bench_stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  const Variant* bench_variant_ = nullptr;
  bool bench_ready_ = false;
  bool bench_first_ = false;
  p::Request bench_req_;
  std::vector<std::unique_ptr<DeviceBuffer<char>>> bench_bufs_;  // shared with the judge
  std::vector<std::unique_ptr<GuardedBuffer>> kept_;  // kFlagKeepOnDevice: until the next request
  std::vector<void*> bench_ptrs_;
  std::vector<uint64_t> bench_sizes_;
};

const char* status_name(uint32_t s) {
  switch (static_cast<p::Status>(s)) {
    case p::Status::kOk: return "ok";
    case p::Status::kLaunchError: return "launch_error";
    case p::Status::kRunError: return "run_error";
    case p::Status::kCaptureProblem: return "capture_problem";
    case p::Status::kBadRequest: return "bad_request";
    case p::Status::kNoDevice: return "no_device";
    case p::Status::kUnknownVariant: return "unknown_variant";
    case p::Status::kOutOfMemory: return "out_of_memory";
  }
  return "unknown";
}

// Runs one request saved by the judge (the Request struct, then the arena's bytes).
int replay(const char* path, const std::vector<Variant>& variants) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) {
    std::fprintf(stderr, "labkit-replay: cannot open %s\n", path);
    return 2;
  }
  p::Request req;
  std::vector<char> arena_bytes;
  bool ok = std::fread(&req, sizeof(req), 1, f) == 1 && req.arena_bytes < (uint64_t{1} << 36);
  if (ok) {
    arena_bytes.resize(req.arena_bytes);
    ok = arena_bytes.empty() || std::fread(arena_bytes.data(), arena_bytes.size(), 1, f) == 1;
  }
  std::fclose(f);
  if (!ok) {
    std::fprintf(stderr, "labkit-replay: %s is not a saved request\n", path);
    return 2;
  }
  g_guard_bytes = (req.flags & p::kFlagExactBuffers) != 0 ? 0 : p::kGuardBytes;
  Arena arena(-1);
  arena.adopt(std::move(arena_bytes));
  Runner runner(variants, arena, true);
  p::Reply hello_req_reply = runner.handle([] {
    p::Request h;
    h.op = static_cast<uint32_t>(p::Op::kHello);
    return h;
  }());
  if (hello_req_reply.status != 0) {
    std::printf("labkit-replay: status=no_device %s\n", hello_req_reply.message);
    return 1;
  }
  const p::Reply reply = runner.handle(req);
  if (g_profile_replay && reply.status == 0) {
    // The profiled call's outputs, for the judge to check like a timed call's: into the file
    // it made and sized for them beside the request (never created here), each output buffer's
    // bytes in buffer order, then p::kOutputsDone. Through a mapping: a write() past the
    // spawned processes' 16 MiB file-size limit would fail, a store into a mapped page does not.
    const std::string outputs = std::string(path) + ".outputs";
    const int fd = ::open(outputs.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    uint64_t total = 0;
    for (uint32_t b = 0; b < req.n_buffers; ++b) {
      const p::BufferDesc& d = req.buffers[b];
      if (d.role == static_cast<uint32_t>(p::Role::kOutput)) total += p::buffer_bytes(d);
    }
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == total + 8) {
      void* map = ::mmap(nullptr, total + 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map != MAP_FAILED) {
        char* to = static_cast<char*>(map);
        bool whole = true;
        for (uint32_t b = 0; b < req.n_buffers; ++b) {
          const p::BufferDesc& d = req.buffers[b];
          if (d.role != static_cast<uint32_t>(p::Role::kOutput)) continue;
          const uint64_t bytes = p::buffer_bytes(d);
          if (d.out_offset + bytes > arena.size()) {
            whole = false;
            break;
          }
          std::memcpy(to, arena.at(d.out_offset), bytes);
          to += bytes;
        }
        if (whole) std::memcpy(to, &p::kOutputsDone, 8);
        ::munmap(map, total + 8);
      }
    }
    if (fd >= 0) ::close(fd);
  }
  std::printf("labkit-replay: status=%s call=%u %s\n", status_name(reply.status), reply.failed_call,
              reply.message);
  std::fflush(stdout);
  return reply.status == 0 ? 0 : 1;
}

}  // namespace

void set_after_cuda_init(std::function<std::string()> hook) { g_after_cuda_init = std::move(hook); }
void set_plan_of(std::function<int64_t(char*, uint64_t)> hook) { g_plan_of = std::move(hook); }

int main(int argc, char** argv, const std::vector<Variant>& variants) {
  if (argc == 3 && std::strcmp(argv[1], "--replay") == 0) return replay(argv[2], variants);
  if (argc == 3 && std::strcmp(argv[1], "--profile-replay") == 0) {
    g_profile_replay = true;
    return replay(argv[2], variants);
  }
  if (argc != 2 || std::strcmp(argv[1], "--serve") != 0) {
    std::fprintf(stderr,
                 "%s: this is a lab's worker; the lab's _test and _bench programs start it.\n"
                 "  %s --replay FILE   runs one request a judge saved (compute-sanitizer)\n",
                 argv[0], argv[0]);
    return 2;
  }
  Arena arena(p::kArenaFd);
  Runner runner(variants, arena);
  bool benchmarking = false;
  for (;;) {
    p::Request req;
    // In a benchmark the next request follows within microseconds of the last reply: poll for
    // it instead of sleeping, so the wake-up is not in the judge's window (the calibration
    // worker does the same, so what remains is calibrated away).
    if (benchmarking) spin_until_readable(p::kRequestFd, 0.05);
    if (!read_full(p::kRequestFd, &req, sizeof(req))) return 0;  // the judge closed the pipe
    benchmarking = req.op == static_cast<uint32_t>(p::Op::kPing) ||
                   req.op == static_cast<uint32_t>(p::Op::kBenchTimed);
    if (req.op == static_cast<uint32_t>(p::Op::kQuit)) return 0;
    const p::Reply reply = runner.handle(req);
    std::fflush(stdout);
    std::fflush(stderr);
    if (!write_full(p::kReplyFd, &reply, sizeof(reply))) return 0;
    // After a fault inside a kernel the CUDA context is unusable: start over in a new process.
    if (reply.status == static_cast<uint32_t>(p::Status::kRunError)) return 3;
  }
}

}  // namespace labkit::worker
