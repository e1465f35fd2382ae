// The executor (labkit_executor): the trusted runner that owns the CUDA context, the buffers
// and the clocks, and runs the plans of the student's launcher (docs/architecture.md, "Planner
// and executor"; the wire format is labkit/plan.hpp).
//
// It starts the planner (the lab's <lab>_worker: the student's object linked against the
// recording runtime, common/src/planner.cpp) before CUDA is initialised, so the planner
// inherits no device file; reads the student's device code from the planner binary's
// .nv_fatbin section itself (one fatbin, the one nvcc made, or none); and serves the judge with
// the runner of worker.cpp, each variant's launch being "ask the planner for this call's plan,
// check it, run it on the call's stream". Before every test (a request of one or more calls)
// and every benchmark call (outside any capture or timed window) it loads a fresh copy of the
// device code, so nothing of the student's survives in device memory from one test or timed
// call to the next (module globals included), and re-applies the function attributes the
// launcher set in earlier calls (a launcher that sets one once, behind a static flag, keeps it
// as with the real runtime). The calls of one test share their copy, as the launches of one
// program share its module: a __device__ counter a kernel never resets is wrong from the second
// call on, as it would be in a student's own program.
//
// Everything the planner sends is untrusted: kernels are looked up by name in the loaded device
// code only, arguments must have exactly the kernel's parameter bytes, memsets must lie inside
// the call's buffers, attributes and launch attributes come from a short list, a lab's helper
// (lab 07's GEMM) runs only in an executor started with --helpers (the judges start one for
// the variants the lab gives it).
#include <cuda_runtime.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/cuda_check.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/fd_io.hpp"
#include "labkit/helper.hpp"
#include "labkit/plan.hpp"
#include "labkit/sandbox.hpp"
#include "labkit/worker.hpp"

namespace labkit::worker {
namespace {

namespace pl = ::labkit::plan;

// The token the launcher gets as its stream: the same in every call, test or benchmark,
// checked or replayed.
constexpr uint64_t kStreamToken = 0x5354524D00000010ull;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "labkit-executor: %s\n", why.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

// ---- the student's device code: the .nv_fatbin section of the planner binary

std::vector<char> read_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) die("cannot read the planner " + path + ": " + std::strerror(errno));
  std::vector<char> bytes;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  return bytes;
}

template <typename T>
bool get(const std::vector<char>& b, uint64_t at, T& out) {
  if (at > b.size() || b.size() - at < sizeof(T)) return false;
  std::memcpy(&out, b.data() + at, sizeof(T));
  return true;
}

// The fatbin of an ELF64 file's .nv_fatbin section: "" (no device code) or its bytes in `out`.
// More than one fatbin in the section is refused: nvcc makes one per translation unit, and the
// student's is the only one with device code.
std::string extract_fatbin(const std::vector<char>& elf, std::vector<char>& out) {
  out.clear();
  if (elf.size() < 64 || std::memcmp(elf.data(), "\x7f" "ELF\x02\x01", 6) != 0) {
    return "the planner is not a 64-bit little-endian ELF file";
  }
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  get(elf, 0x28, shoff);
  get(elf, 0x3A, shentsize);
  get(elf, 0x3C, shnum);
  get(elf, 0x3E, shstrndx);
  if (shentsize != 64 || shstrndx >= shnum) return "the planner's section table is not valid";
  uint64_t str_off = 0;
  if (!get(elf, shoff + uint64_t{shstrndx} * 64 + 0x18, str_off)) return "bad section table";
  int found = 0;
  uint64_t off = 0, size = 0;
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + uint64_t{i} * 64;
    uint32_t name = 0;
    if (!get(elf, sh, name)) return "bad section table";
    const uint64_t at = str_off + name;
    if (at >= elf.size()) return "bad section name";
    const char* s = elf.data() + at;
    const size_t room = elf.size() - at;
    if (strnlen(s, room) == room) return "bad section name";
    if (std::strcmp(s, ".nv_fatbin") == 0) {
      ++found;
      get(elf, sh + 0x18, off);
      get(elf, sh + 0x20, size);
    }
  }
  if (found == 0) return "";
  if (found > 1) return "the planner has more than one .nv_fatbin section";
  if (off > elf.size() || size > elf.size() - off) return "the .nv_fatbin section is truncated";
  // Fatbins: {u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the rest}.
  int blobs = 0;
  uint64_t at = off;
  const uint64_t end = off + size;
  while (at < end) {
    uint32_t magic = 0;
    if (!get(elf, at, magic)) break;
    if (magic == 0) {  // alignment padding between fatbins
      at += 8;
      continue;
    }
    uint16_t header = 0;
    uint64_t rest = 0;
    if (magic != 0xBA55ED50u || !get(elf, at + 6, header) || !get(elf, at + 8, rest) ||
        header > end - at || rest > end - at - header) {
      return "the .nv_fatbin section holds something that is not a fatbin";
    }
    if (++blobs == 1) out.assign(elf.data() + at, elf.data() + at + header + rest);
    at += header + rest;
  }
  if (blobs > 1) {
    out.clear();
    return "the .nv_fatbin section holds " + std::to_string(blobs) +
           " fatbins: device code registered outside nvcc's own code is refused";
  }
  return "";
}

// The fatbin's entries ({u16 kind (1: PTX, 2: machine code), u16 version, u32 header size,
// u64 size of the rest, ..., u32 SM version at 28}) must tile it exactly, and one of them must
// be machine code for this GPU: the driver then runs that code, which the policy read (with
// cuobjdump, from the same bytes), and never compiles PTX of the student's at load time, which
// nothing has read.
std::string check_fatbin_entries(const std::vector<char>& fb, int sm) {
  uint16_t header = 0;
  uint64_t size = 0;
  if (!get(fb, 6, header) || !get(fb, 8, size)) return "the fatbin's header is truncated";
  uint64_t at = header;
  const uint64_t end = uint64_t{header} + size;
  bool machine_code = false;
  std::string seen;
  while (at < end) {
    uint16_t kind = 0;
    uint32_t entry_header = 0, entry_sm = 0;
    uint64_t entry_size = 0;
    if (!get(fb, at, kind) || !get(fb, at + 4, entry_header) || !get(fb, at + 8, entry_size) ||
        !get(fb, at + 28, entry_sm) || entry_header < 32 || entry_header > end - at ||
        entry_size > end - at - entry_header) {
      return "the fatbin's entries are not valid";
    }
    if (kind != 1 && kind != 2) return "the fatbin holds an entry of unknown kind " + std::to_string(kind);
    seen += std::string(seen.empty() ? "" : ", ") + (kind == 1 ? "PTX " : "sm_") + std::to_string(entry_sm);
    if (kind == 2 && static_cast<int>(entry_sm) == sm) machine_code = true;
    at += entry_header + entry_size;
  }
  if (at != end) return "the fatbin's entries do not fill it";
  if (!machine_code) {
    return "the device code has no machine code for this GPU (sm_" + std::to_string(sm) +
           "; it holds " + (seen.empty() ? std::string("nothing") : seen) +
           "): code compiled at load time is code the policy never read";
  }
  return "";
}

struct ParamInfo {
  std::vector<uint32_t> sizes;
  uint32_t total = 0;
};

class Executor {
 public:
  Executor(std::string planner, bool helpers, bool no_shared_memory)
      : planner_path_(std::move(planner)), helpers_(helpers), no_shared_memory_(no_shared_memory) {}

  // Before CUDA: start the planner (it inherits no device file), read its hello and its device
  // code.
  void start() {
    code_error_ = extract_fatbin(read_file(planner_path_), fatbin_);
    if (!code_error_.empty()) fatbin_.clear();
    int req[2], rep[2];
    if (::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0) die("pipe");
    const int exe = ::open(planner_path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (exe < 0) die("cannot open the planner " + planner_path_);
    pid_ = ::fork();
    if (pid_ < 0) die("fork");
    if (pid_ == 0) {
      // The child: fds 0 (none), 1 and 2 (the executor's log), 3 and 4 (its pipes), nothing
      // else; an empty environment (no LD_PRELOAD of anybody's, no locale files to open).
      // Out of the way first: a pipe may have been given fd 3 or 4 itself.
      const int in = ::fcntl(req[0], F_DUPFD, 100), out = ::fcntl(rep[1], F_DUPFD, 100);
      ::dup2(in, pl::kRequestFd);
      ::dup2(out, pl::kReplyFd);
      for (int fd = 5; fd < 1024; ++fd) {
        if (fd != exe) ::close(fd);
      }
      const int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0 && null != 0) {
        ::dup2(null, 0);
        ::close(null);
      }
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      char* const argv[] = {const_cast<char*>("planner"), nullptr};
      char* const envp[] = {nullptr};
      ::fexecve(exe, argv, envp);
      ::_exit(127);
    }
    ::close(exe);
    ::close(req[0]);
    ::close(rep[1]);
    to_ = req[1];
    from_ = rep[0];
    pl::Frame f;
    std::vector<char> hello;
    if (!read_frame(f, hello) || f.type != static_cast<uint32_t>(pl::Type::kHello)) {
      planner_died("before its hello");
    }
    uint32_t n = 0;
    if (!get(hello, 0, n) || n > 16 || hello.size() != 4 + n * pl::kVariantNameLen) {
      die("the planner's hello is not valid");
    }
    for (uint32_t i = 0; i < n; ++i) {
      const char* s = hello.data() + 4 + i * pl::kVariantNameLen;
      names_.emplace_back(s, strnlen(s, pl::kVariantNameLen - 1));
    }
  }

  const std::vector<std::string>& names() const { return names_; }

  // The last call's plan, as SavedPlan and its ops (protocol.hpp, kPlanOf).
  // The last call's plan, saved for a replay (the race check's, memcheck's, the profiler's, the
  // race audit's), led by the function attributes in force when that call began (call_attrs_):
  // a replay starts a fresh executor, which has applied none of the attributes earlier calls
  // set, and a kernel can read what they change (a required cluster width set once, in an
  // earlier call, told a red team's lab 05 file, round 36, every replay from the graded calls).
  int64_t plan_of(char* out, uint64_t cap) const {
    if (last_variant_.empty() || !error_.empty()) return -1;
    std::vector<char> ops;
    uint32_t n_attrs = 0;
    for (const auto& [key, value] : call_attrs_) {
      pl::FuncAttrOp a;
      a.attr = key.second;
      a.value = value;
      a.name_len = static_cast<uint32_t>(key.first.size());
      pl::OpHeader h;
      h.kind = static_cast<uint32_t>(pl::OpKind::kFuncAttr);
      h.bytes = static_cast<uint32_t>(sizeof(a) + key.first.size());
      append(ops, &h, sizeof(h));
      append(ops, &a, sizeof(a));
      append(ops, key.first.data(), key.first.size());
      ++n_attrs;
    }
    if (n_ops_ + n_attrs > pl::kMaxOps) return -1;
    ops.insert(ops.end(), plan_.begin(), plan_.end());
    pl::SavedPlan sp;
    sp.n_ops = n_ops_ + n_attrs;
    sp.n_buffers = 8;
    std::snprintf(sp.variant, sizeof(sp.variant), "%s", last_variant_.c_str());
    for (int b = 0; b < 8; ++b) sp.fake[b] = fakes_[b];
    sp.bytes = ops.size();
    if (cap < sizeof(sp) || ops.size() > cap - sizeof(sp)) return -1;
    std::memcpy(out, &sp, sizeof(sp));
    if (!ops.empty()) std::memcpy(out + sizeof(sp), ops.data(), ops.size());
    return static_cast<int64_t>(sizeof(sp) + ops.size());
  }

  // Replays a saved plan (--plan FILE) instead of starting a planner: the device code is read
  // from the planner binary all the same.
  void start_saved(const std::string& file) {
    code_error_ = extract_fatbin(read_file(planner_path_), fatbin_);
    if (!code_error_.empty()) fatbin_.clear();
    const std::vector<char> bytes = read_file(file);
    pl::SavedPlan sp;
    if (!get(bytes, 0, sp) || sp.magic != pl::kSavedMagic || sp.bytes != bytes.size() - sizeof(sp) ||
        sp.n_ops > pl::kMaxOps) {
      die("the saved plan " + file + " is not valid");
    }
    sp.variant[pl::kVariantNameLen - 1] = '\0';
    names_ = {sp.variant};
    for (int b = 0; b < 8; ++b) fakes_[b] = sp.fake[b];
    saved_plan_.assign(bytes.begin() + sizeof(sp), bytes.end());
    saved_n_ops_ = sp.n_ops;
    saved_ = true;
  }

  // After CUDA is up: load the device code once, and send the planner what it may know.
  std::string after_cuda_init() {
    if (helpers_) {
      for (const pl::HelperKind* k : pl::family_helpers()) {
        if (k->setup != nullptr) k->setup();
      }
    }
    if (!fatbin_.empty()) {
      int dev = 0, major = 0, minor = 0;
      CUDA_CHECK(cudaGetDevice(&dev));
      CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
      CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
      // Refused device code fails every call with the reason (not the worker's start: that
      // would read as a machine without a GPU).
      if (code_error_.empty()) code_error_ = check_fatbin_entries(fatbin_, major * 10 + minor);
      if (!code_error_.empty()) fatbin_.clear();
      const std::string why = load();
      if (!why.empty()) return why;
      for (const auto& [name, k] : enumerate()) {
        cudaFuncAttributes fa{};
        if (cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(k)) == cudaSuccess) {
          largest_frame_ = std::max(largest_frame_, fa.localSizeBytes);
        }
        cudaGetLastError();
      }
    }
    // A saved plan's replay asks no planner: nothing to tell it (and no queries for the tool to
    // report).
    if (saved_) return "";
    std::vector<char> snap;
    pl::Snapshot s;
    s.prop_bytes = sizeof(cudaDeviceProp);
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDevice(&s.device));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, s.device));
    cudaDriverGetVersion(&s.driver_version);
    cudaRuntimeGetVersion(&s.runtime_version);
    s.device = 0;
    std::vector<std::pair<std::string, cudaKernel_t>> kernels = enumerate();
    s.n_kernels = static_cast<uint32_t>(kernels.size());
    append(snap, &s, sizeof(s));
    append(snap, &prop, sizeof(prop));
    std::vector<int32_t> attrs;
    int dev = 0;
    cudaGetDevice(&dev);
    for (int a = 1; a < 256; ++a) {
      int v = 0;
      if (cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(a), dev) == cudaSuccess) {
        attrs.push_back(a);
        attrs.push_back(v);
      }
      cudaGetLastError();
    }
    const uint32_t n_attrs = static_cast<uint32_t>(attrs.size() / 2);
    append(snap, &n_attrs, sizeof(n_attrs));
    append(snap, attrs.data(), attrs.size() * sizeof(int32_t));
    for (const auto& [name, k] : kernels) {
      const ParamInfo& p = params_of(name, k);
      cudaFuncAttributes fa{};
      CUDA_CHECK(cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(k)));
      pl::KernelInfo info;
      info.name_len = static_cast<uint32_t>(name.size());
      info.n_params = static_cast<uint32_t>(p.sizes.size());
      info.num_regs = fa.numRegs;
      info.max_threads_per_block = fa.maxThreadsPerBlock;
      info.shared_size_bytes = fa.sharedSizeBytes;
      info.const_size_bytes = fa.constSizeBytes;
      info.local_size_bytes = fa.localSizeBytes;
      info.ptx_version = fa.ptxVersion;
      info.binary_version = fa.binaryVersion;
      info.max_dynamic_shared_size_bytes = fa.maxDynamicSharedSizeBytes;
      info.preferred_shmem_carveout = fa.preferredShmemCarveout;
      append(snap, &info, sizeof(info));
      append(snap, name.data(), name.size());
      append(snap, p.sizes.data(), p.sizes.size() * sizeof(uint32_t));
    }
    if (!saved_ && !send_frame(pl::Type::kSnapshot, snap)) planner_died("before its snapshot");
    return "";
  }

  // The call's plan, and a fresh copy of the device code for the first call of a test and for
  // every benchmark call (`first`: the first call of its request; `timed`: a benchmark's):
  // outside any capture or timed window.
  void prepare(const std::string& variant, const Call& call, bool captured, bool timed = false,
               bool first = true) {
    prepared_ = false;
    error_ = code_error_;
    plan_.clear();
    n_ops_ = 0;
    call_attrs_ = attrs_;  // what this call's kernels start with (plan_of)
    captured_ = captured;
    if (!error_.empty()) {
      prepared_ = true;
      return;
    }
    if (!fatbin_.empty() && (first || timed || lib_ == nullptr)) {
      const std::string why = load();
      if (!why.empty()) {
        error_ = why;
        prepared_ = true;
        return;
      }
    }
    if (saved_) {
      // A replay of a saved plan: these ops, the planner never asked.
      plan_ = saved_plan_;
      n_ops_ = saved_n_ops_;
      warm_kernels();
      scrub();
      cudaDeviceSynchronize();
      cudaGetLastError();
      prepared_ = true;
      return;
    }
    pl::PlanRequest req;
    std::snprintf(req.variant, sizeof(req.variant), "%s", variant.c_str());
    req.n_params = static_cast<uint32_t>(std::min(call.n_params, 16));
    req.n_buffers = static_cast<uint32_t>(std::min(call.n_buffers, 8));
    for (uint32_t i = 0; i < req.n_params; ++i) req.params[i] = call.params[i];
    last_variant_ = variant;
    for (uint32_t b = 0; b < req.n_buffers; ++b) {
      req.buffers[b] = fake_address(b, call);
      fakes_[b] = req.buffers[b];
      req.buffer_bytes[b] = call.buffer_bytes != nullptr ? call.buffer_bytes[b] : 0;
    }
    req.stream = kStreamToken;
    req.captured = captured ? 1 : 0;
    std::vector<char> payload(sizeof(req));
    std::memcpy(payload.data(), &req, sizeof(req));
    if (!send_frame(pl::Type::kPlan, payload)) planner_died("before it took the call");
    pl::Frame f;
    std::vector<char> reply;
    if (!read_frame(f, reply)) planner_died("in the launcher");
    pl::PlanReply r;
    if (f.type != static_cast<uint32_t>(pl::Type::kPlanned) || !get(reply, 0, r) ||
        r.n_ops > pl::kMaxOps) {
      error_ = "the launcher's process sent a plan that is not valid";
    } else if (r.ok != 1) {
      r.message[sizeof(r.message) - 1] = '\0';
      error_ = r.message[0] != '\0' ? std::string(r.message) : "the launcher failed";
    } else {
      plan_.assign(reply.begin() + sizeof(r), reply.end());
      n_ops_ = r.n_ops;
      last_error_ = r.last_error;
      warm_kernels();
    }
    scrub();
    // Whatever loading the device code put on the GPU is done before the call's window opens.
    cudaDeviceSynchronize();
    cudaGetLastError();
    prepared_ = true;
  }

  // Before every call (a test, the race check's replay, a benchmark's warm-up or timed call,
  // whose prepare runs off the judge's clock, before it draws the inputs and flushes L2): the
  // local and shared memory the student's kernels can address are cleared (scrub_local_memory,
  // over the largest frame of the loaded kernels at least; scrub_shared_memory), so that no call
  // finds a mark an earlier call's threads left in their stacks or shared memory, and neither the
  // replay, in a fresh process, nor a benchmark can be told from a test that follows others. A
  // scrub that cannot run fails the call.
  void scrub() {
    if (!error_.empty()) return;
    if (!scrub_local_memory(largest_frame_, nullptr)) {
      error_ = "the harness could not clear the GPU's local memory before the call "
               "(a kernel's stack frame larger than 64 KiB?)";
    } else if (!scrub_shared_memory(nullptr)) {
      error_ = "the harness could not clear the GPU's shared memory before the call";
    }
  }

  // The kernels the plan launches, loaded into this context now (a library's kernel is loaded
  // into a context at its first use): not inside the timed window.
  void warm_kernels() {
    uint64_t at = 0;
    for (uint32_t i = 0; i < n_ops_; ++i) {
      pl::OpHeader h;
      if (!get(plan_, at, h) || h.bytes > plan_.size() - at - sizeof(h)) return;
      at += sizeof(h);
      pl::LaunchOp l;
      if (static_cast<pl::OpKind>(h.kind) == pl::OpKind::kLaunch && h.bytes >= sizeof(l) &&
          get(plan_, at, l) && l.name_len <= h.bytes - sizeof(l)) {
        const cudaKernel_t k = kernel(std::string(plan_.data() + at + sizeof(l), l.name_len));
        cudaFuncAttributes fa;
        if (k != nullptr) cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(k));
        cudaGetLastError();
      }
      at += h.bytes;
    }
  }

  // Runs the prepared plan on the call's stream. A launch the driver refuses leaves its error for
  // the runner's cudaGetLastError; a plan that breaks a rule throws.
  void run(const std::string& variant, const Call& call) {
    if (!prepared_) prepare(variant, call, false);
    prepared_ = false;
    if (!error_.empty()) throw std::runtime_error(error_);
    uint64_t at = 0;
    for (uint32_t i = 0; i < n_ops_; ++i) {
      pl::OpHeader h;
      if (!get(plan_, at, h) || h.bytes > plan_.size() - at - sizeof(h)) bad("an op is truncated");
      at += sizeof(h);
      const uint64_t body = at;
      at += h.bytes;
      switch (static_cast<pl::OpKind>(h.kind)) {
        case pl::OpKind::kLaunch:
          if (!launch(body, h.bytes, call)) return;
          break;
        case pl::OpKind::kMemset: memset(body, h.bytes, call); break;
        case pl::OpKind::kFuncAttr: func_attr(body, h.bytes); break;
        case pl::OpKind::kHelper: helper(variant, body, h.bytes, call); break;
        default: bad("unknown op " + std::to_string(h.kind));
      }
    }
    if (at != plan_.size()) bad("bytes after its last op");
  }

 private:
  [[noreturn]] void bad(const std::string& why) {
    throw std::runtime_error("the launcher's plan is not valid: " + why);
  }

  // The planner is gone: end this process the way the planner ended, so the judge reports the
  // launcher's crash (or the sandbox's stop) as it would its own worker's.
  [[noreturn]] void planner_died(const char* when) {
    int status = 0;
    pid_t r = 0;
    for (int i = 0; i < 100 && (r = ::waitpid(pid_, &status, WNOHANG)) == 0; ++i) ::usleep(10000);
    std::fflush(stdout);
    if (r == pid_ && WIFSIGNALED(status)) {
      std::fprintf(stderr, "labkit-executor: the launcher's process was killed by signal %d %s\n",
                   WTERMSIG(status), when);
      std::fflush(stderr);
      // Stopped by the sandbox (a filter that kills): say so as the executor's own sandbox stop
      // would, not by raising SIGSYS here, which the executor's own handler would report as a
      // call of its own.
      if (WTERMSIG(status) == SIGSYS) std::_Exit(labkit::sandbox::kSandboxExitCode);
      ::raise(WTERMSIG(status));
      std::_Exit(128 + WTERMSIG(status));
    }
    const int code = (r == pid_ && WIFEXITED(status)) ? WEXITSTATUS(status) : 3;
    std::fprintf(stderr, "labkit-executor: the launcher's process exited with status %d %s\n",
                 code, when);
    std::fflush(stderr);
    std::_Exit(code == 0 ? 3 : code);
  }

  static void append(std::vector<char>& out, const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    out.insert(out.end(), c, c + n);
  }

  bool send_frame(pl::Type type, const std::vector<char>& payload) {
    return pl::send_frame(to_, type, payload);
  }

  bool read_frame(pl::Frame& f, std::vector<char>& payload) {
    const int got = pl::read_frame(from_, f, payload);
    if (got < 0) die("the planner broke the protocol");
    return got == 1;
  }

  std::string load() {
    // The copy before goes first, timed calls included (off the clock: the judge runs a kernel
    // of its own after the ping, before its window opens): a copy kept loaded would keep its
    // module globals in the context's memory, where a later copy's kernel could look for them
    // (red team round 31).
    if (lib_ != nullptr) cudaLibraryUnload(lib_);
    lib_ = nullptr;
    kernels_.clear();  // the unloaded copy's handles
    const cudaError_t e =
        cudaLibraryLoadData(&lib_, fatbin_.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e != cudaSuccess) {
      lib_ = nullptr;
      cudaGetLastError();
      return "the student's device code does not load on this GPU: " + describe(e);
    }
    // The attributes the launcher set in earlier calls stay set, as with the real runtime.
    for (const auto& [key, value] : attrs_) {
      cudaKernel_t k = kernel(key.first);
      if (k == nullptr) continue;
      apply_attr(k, key.second, value);
      cudaGetLastError();
    }
    return "";
  }

  std::vector<std::pair<std::string, cudaKernel_t>> enumerate() {
    std::vector<std::pair<std::string, cudaKernel_t>> out;
    if (lib_ == nullptr) return out;
    unsigned int n = 0;
    CUDA_CHECK(cudaLibraryGetKernelCount(&n, lib_));
    if (n > pl::kMaxKernels) die("too many kernels");
    std::vector<cudaKernel_t> ks(n);
    if (n > 0) CUDA_CHECK(cudaLibraryEnumerateKernels(ks.data(), n, lib_));
    for (cudaKernel_t k : ks) {
      const char* name = nullptr;
      CUDA_CHECK(cudaFuncGetName(&name, reinterpret_cast<const void*>(k)));
      out.emplace_back(name, k);
    }
    return out;
  }

  cudaKernel_t kernel(const std::string& name) {
    const auto it = kernels_.find(name);
    if (it != kernels_.end()) return it->second;
    cudaKernel_t k = nullptr;
    if (lib_ == nullptr || cudaLibraryGetKernel(&k, lib_, name.c_str()) != cudaSuccess) {
      cudaGetLastError();
      k = nullptr;
    }
    kernels_[name] = k;
    return k;
  }

  const ParamInfo& params_of(const std::string& name, cudaKernel_t k) {
    auto it = params_.find(name);
    if (it != params_.end()) return it->second;
    ParamInfo p;
    for (size_t i = 0; i < pl::kMaxParamsPerKernel; ++i) {
      size_t offset = 0, size = 0;
      if (cudaFuncGetParamInfo(reinterpret_cast<const void*>(k), i, &offset, &size) != cudaSuccess) {
        cudaGetLastError();
        break;
      }
      p.sizes.push_back(static_cast<uint32_t>(size));
      p.total += static_cast<uint32_t>(size);
    }
    return params_[name] = p;
  }

  // The launcher never sees a real device address: buffer b is at a fixed made-up address (its
  // real address's low 20 bits kept, so alignment reads the same), the same in every call, test,
  // benchmark or replay, so nothing in a request tells them apart. The plan's addresses are
  // mapped back (relocate) wherever a launch argument, memset or helper argument holds one.
  static constexpr uint64_t kFakeBase = 0x7f0000000000ull;
  static constexpr uint64_t kFakeStride = 0x10000000000ull;  // 1 TiB between buffers
  static uint64_t fake_address(int b, const Call& call) {
    return kFakeBase + static_cast<uint64_t>(b + 1) * kFakeStride +
           (reinterpret_cast<uint64_t>(call.buffers[b]) & 0xFFFFFull);
  }
  uint64_t relocate(uint64_t v, const Call& call) const {
    for (int b = 0; b < call.n_buffers && b < 8 && call.buffer_bytes != nullptr; ++b) {
      const uint64_t fake = fakes_[b];
      if (v >= fake && v - fake <= call.buffer_bytes[b]) {
        return reinterpret_cast<uint64_t>(call.buffers[b]) + (v - fake);
      }
    }
    return v;
  }

  cudaStream_t stream_of(uint64_t token, const Call& call) {
    if (token == kStreamToken) return call.stream;
    // A call recorded into a graph: every op on its stream. The per-thread default stream is not
    // captured with it and runs at once, without an error (a red team's lab 05 file, round 36,
    // passed the stream test so, with all its work there and one empty kernel on `stream`).
    if (captured_) {
      bad(std::string("a launch on ") +
          (token == 0 || token == reinterpret_cast<uint64_t>(cudaStreamLegacy)
               ? "the default stream"
               : token == reinterpret_cast<uint64_t>(cudaStreamPerThread)
                     ? "the per-thread default stream (cudaStreamPerThread)"
                     : "a stream the launcher was not given") +
          " while `stream` is recorded into a CUDA graph: every launch must go onto `stream`");
    }
    // The legacy default stream as the launcher named it: ordered with the call's stream, as
    // in a program.
    if (token == 0) return nullptr;
    if (token == reinterpret_cast<uint64_t>(cudaStreamPerThread)) return cudaStreamPerThread;
    if (token == reinterpret_cast<uint64_t>(cudaStreamLegacy)) return cudaStreamLegacy;
    bad("a launch on a stream the launcher was not given (it may only use `stream`)");
  }

  // A kernel's name as its source spells it (demangled), for messages.
  static std::string readable(const std::string& mangled) {
    int status = -1;
    std::unique_ptr<char, void (*)(void*)> out(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && out ? std::string(out.get()) : mangled;
  }

  std::string name_at(uint64_t at, uint32_t len) {
    if (len == 0 || len > pl::kMaxNameBytes || len > plan_.size() - at) bad("a kernel name");
    return std::string(plan_.data() + at, len);
  }

  bool launch(uint64_t body, uint32_t bytes, const Call& call) {
    pl::LaunchOp l;
    if (bytes < sizeof(l) || !get(plan_, body, l)) bad("a launch is truncated");
    if (uint64_t{sizeof(l)} + l.name_len + l.args_bytes != bytes || l.args_bytes > pl::kMaxArgBytes) {
      bad("a launch's sizes do not add up");
    }
    const std::string name = name_at(body + sizeof(l), l.name_len);
    const cudaKernel_t k = kernel(name);
    if (k == nullptr) bad("it launches " + name + ", which is not a kernel of your file");
    const ParamInfo& p = params_of(name, k);
    if (p.total != l.args_bytes) bad("the arguments of " + name + " are not its parameters' size");
    if (no_shared_memory_ && l.shared_bytes > 0) {
      bad("it launches " + readable(name) + " with " + std::to_string(l.shared_bytes) +
          " bytes of dynamic shared memory (the third <<<>>> argument, or dynamicSmemBytes): this "
          "lab refuses shared memory, so every launch asks for 0");
    }
    std::vector<char> args(plan_.begin() + static_cast<long>(body + sizeof(l) + l.name_len),
                           plan_.begin() + static_cast<long>(body + bytes));
    std::vector<void*> argv;
    uint64_t off = 0;
    for (uint32_t s : p.sizes) {
      argv.push_back(args.data() + off);
      for (uint64_t w = 0; w + 8 <= s; w += 8) {  // any 8-byte word of a parameter may be an address
        uint64_t v = 0;
        std::memcpy(&v, args.data() + off + w, 8);
        v = relocate(v, call);
        std::memcpy(args.data() + off + w, &v, 8);
      }
      off += s;
    }
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
    cfg.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
    cfg.dynamicSmemBytes = l.shared_bytes;
    cfg.stream = stream_of(l.stream, call);
    cudaLaunchAttribute attrs[2];
    unsigned n = 0;
    if (l.cluster[0] != 0 || l.cluster[1] != 0 || l.cluster[2] != 0) {
      attrs[n].id = cudaLaunchAttributeClusterDimension;
      attrs[n].val.clusterDim.x = l.cluster[0];
      attrs[n].val.clusterDim.y = l.cluster[1];
      attrs[n].val.clusterDim.z = l.cluster[2];
      ++n;
    }
    if (l.cooperative != 0) {
      attrs[n].id = cudaLaunchAttributeCooperative;
      attrs[n].val.cooperative = 1;
      ++n;
    }
    cfg.attrs = n > 0 ? attrs : nullptr;
    cfg.numAttrs = n;
    // A refused launch leaves its error for the runner's cudaGetLastError: the rest of the
    // plan does not run, as the rest of a program after a failed launch would find nothing
    // sensible to do.
    return cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(k), argv.data()) == cudaSuccess;
  }

  void memset(uint64_t body, uint32_t bytes, const Call& call) {
    pl::MemsetOp m;
    if (bytes != sizeof(m) || !get(plan_, body, m)) bad("a memset is truncated");
    m.ptr = relocate(m.ptr, call);
    bool inside = m.count == 0;
    for (int b = 0; b < call.n_buffers && !inside && call.buffer_bytes != nullptr; ++b) {
      const uint64_t base = reinterpret_cast<uint64_t>(call.buffers[b]);
      inside = m.ptr >= base && m.ptr - base <= call.buffer_bytes[b] &&
               m.count <= call.buffer_bytes[b] - (m.ptr - base);
    }
    if (!inside) bad("cudaMemsetAsync of bytes outside the call's buffers");
    if (m.count == 0) return;
    CUDA_CHECK(cudaMemsetAsync(reinterpret_cast<void*>(m.ptr), m.value, m.count,
                               stream_of(m.stream, call)));
  }

  static bool allowed_attr(int32_t attr) {
    return attr == -1 || attr == cudaFuncAttributeMaxDynamicSharedMemorySize ||
           attr == cudaFuncAttributePreferredSharedMemoryCarveout ||
           attr == cudaFuncAttributeNonPortableClusterSizeAllowed ||
           attr == cudaFuncAttributeRequiredClusterWidth ||
           attr == cudaFuncAttributeRequiredClusterHeight ||
           attr == cudaFuncAttributeRequiredClusterDepth ||
           attr == cudaFuncAttributeClusterSchedulingPolicyPreference;
  }

  static void apply_attr(cudaKernel_t k, int32_t attr, int32_t value) {
    const void* f = reinterpret_cast<const void*>(k);
    if (attr == -1) {
      cudaFuncSetCacheConfig(f, static_cast<cudaFuncCache>(value));
    } else {
      cudaFuncSetAttribute(f, static_cast<cudaFuncAttribute>(attr), value);
    }
  }

  void func_attr(uint64_t body, uint32_t bytes) {
    pl::FuncAttrOp a;
    if (bytes < sizeof(a) || !get(plan_, body, a) || uint64_t{sizeof(a)} + a.name_len != bytes) {
      bad("a function attribute is truncated");
    }
    if (!allowed_attr(a.attr)) bad("a function attribute the rules do not allow");
    const std::string name = name_at(body + sizeof(a), a.name_len);
    if (no_shared_memory_ && a.attr == cudaFuncAttributeMaxDynamicSharedMemorySize && a.value > 0) {
      bad("it opts " + readable(name) + " in to " + std::to_string(a.value) +
          " bytes of dynamic shared memory (cudaFuncAttributeMaxDynamicSharedMemorySize): this "
          "lab refuses shared memory");
    }
    const cudaKernel_t k = kernel(name);
    if (k == nullptr) bad("it sets an attribute of " + name + ", which is not a kernel of your file");
    apply_attr(k, a.attr, a.value);
    attrs_[{name, a.attr}] = a.value;
  }

  void helper(const std::string& variant, uint64_t body, uint32_t bytes, const Call& call) {
    pl::HelperOp h;
    if (bytes != sizeof(h) || !get(plan_, body, h) || h.n_ints > pl::kMaxInts) bad("a helper call");
    const pl::HelperKind* kind = pl::find_helper(h.helper);
    if (kind == nullptr || h.n_ints != kind->n_ints) bad("an unknown helper");
    if (!helpers_) throw std::runtime_error(std::string(kind->refusal) + " (variant " + variant + ")");
    const cudaStream_t s = stream_of(h.stream, call);
    for (uint32_t i = 0; i < h.n_ints; ++i) h.ints[i] = static_cast<int64_t>(relocate(static_cast<uint64_t>(h.ints[i]), call));
    // Each matrix the helper reads or writes lies inside one of the call's buffers.
    auto inside = [&](int i, int64_t batch, int64_t stride, int64_t rows, int64_t cols) {
      if (batch < 0 || stride < 0 || rows < 0 || cols < 0) bad("a helper's sizes are negative");
      if (batch == 0 || rows == 0 || cols == 0) return;
      const uint64_t bytes = 4 * static_cast<uint64_t>((batch - 1) * stride + rows * cols);
      const uint64_t at = static_cast<uint64_t>(h.ints[i]);
      for (int b = 0; b < call.n_buffers && call.buffer_bytes != nullptr; ++b) {
        const uint64_t base = reinterpret_cast<uint64_t>(call.buffers[b]);
        if (at >= base && at - base <= call.buffer_bytes[b] && bytes <= call.buffer_bytes[b] - (at - base)) return;
      }
      bad("a helper's matrix lies outside the call's buffers");
    };
    kind->run(h.ints, inside, s);
  }

  std::string planner_path_;
  bool helpers_;
  // The lab refuses shared memory (--no-shared-memory): the SASS rule sees every instruction
  // that names it, but not a generic address into its window, so no launch may have any.
  bool no_shared_memory_;
  uint64_t fakes_[8] = {};        // the addresses the launcher was given in the current call
  std::string last_variant_;
  bool saved_ = false;            // replaying a saved plan (--plan)
  std::vector<char> saved_plan_;
  uint32_t saved_n_ops_ = 0;
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::vector<std::string> names_;
  std::vector<char> fatbin_;
  std::string code_error_;  // why the student's device code is refused: every call fails with it
  cudaLibrary_t lib_ = nullptr;
  size_t largest_frame_ = 0;  // the loaded kernels' largest local frame (what the scrub covers)
  std::map<std::string, cudaKernel_t> kernels_;   // of the loaded copy
  std::map<std::string, ParamInfo> params_;       // the same in every copy
  std::map<std::pair<std::string, int32_t>, int32_t> attrs_;
  std::map<std::pair<std::string, int32_t>, int32_t> call_attrs_;  // attrs_ as the last call began
  bool captured_ = false;  // the call being run is recorded into a graph
  bool prepared_ = false;
  std::string error_;
  std::vector<char> plan_;
  uint32_t n_ops_ = 0;
  int32_t last_error_ = 0;
};

}  // namespace

int executor_main(int argc, char** argv) {
  std::string planner, replay, saved;
  bool helpers = false, serve = false, no_shared_memory = false, profile = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--planner" && i + 1 < argc) {
      planner = argv[++i];
    } else if (a == "--replay" && i + 1 < argc) {
      replay = argv[++i];
    } else if (a == "--plan" && i + 1 < argc) {
      saved = argv[++i];
    } else if (a == "--serve") {
      serve = true;
    } else if (a == "--helpers") {
      helpers = true;
    } else if (a == "--no-shared-memory") {
      no_shared_memory = true;
    } else if (a == "--profile") {
      profile = true;
    } else {
      planner.clear();
      break;
    }
  }
  // Under ncu only with a saved plan: the replay then starts no planner, and runs unconfined
  // (worker.cpp, --profile-replay).
  if (planner.empty() || serve == !replay.empty() || (profile && saved.empty())) {
    std::fprintf(stderr,
                 "%s: the executor; the lab's _test and _bench programs start it.\n"
                 "  %s --serve --planner PATH [--helpers] [--no-shared-memory]\n"
                 "  %s --replay FILE --planner PATH [--plan SAVED] [--helpers] [--no-shared-memory]"
                 "   (compute-sanitizer)\n"
                 "  %s --replay FILE --planner PATH --plan SAVED --profile [...]   (ncu)\n",
                 argv[0], argv[0], argv[0], argv[0]);
    return 2;
  }
  // Every module loads whole when it is loaded (outside the timed window), not at its first
  // launch (inside it). Not in an executor with helpers: there it would load all of the
  // statically linked cuBLAS at start (lab 07's v1 executor took 19.5 s to start among eleven
  // labs' judges on an H200); its cuBLAS kernels load at their first use, in a test or a
  // benchmark's warm-up, never in a timed call. Nor in a race check's replay under
  // compute-sanitizer, which times nothing and instruments each function it loads. The student's
  // own kernels are loaded by warm_kernels before every call either way.
  const bool race_replay = !replay.empty() && !profile;
  if (!helpers && !race_replay) ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  static Executor exec(planner, helpers, no_shared_memory);
  if (!saved.empty() && !replay.empty()) {
    exec.start_saved(saved);
  } else {
    exec.start();
  }
  set_plan_of([](char* out, uint64_t cap) { return exec.plan_of(out, cap); });
  std::vector<Variant> variants;
  for (const std::string& name : exec.names()) {
    Variant v;
    v.name = name;
    v.launch = [name](const Call& call) { exec.run(name, call); };
    v.prepare = [name](const Call& call, bool captured, bool timed, bool first) {
      exec.prepare(name, call, captured, timed, first);
    };
    variants.push_back(std::move(v));
  }
  set_after_cuda_init([] { return exec.after_cuda_init(); });
  std::vector<char*> args = {argv[0]};
  std::string serve_flag = "--serve", replay_flag = profile ? "--profile-replay" : "--replay";
  if (serve) {
    args.push_back(serve_flag.data());
  } else {
    args.push_back(replay_flag.data());
    args.push_back(replay.data());
  }
  args.push_back(nullptr);
  return main(static_cast<int>(args.size()) - 1, args.data(), variants);
}

}  // namespace labkit::worker
