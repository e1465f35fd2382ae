// The executor <-> planner wire format (docs/architecture.md, "Planner and executor").
//
// The student's host code (the launcher) runs in the PLANNER: a process with no CUDA context,
// no driver, no device files and no input data, linked against a recording runtime
// (common/src/planner.cpp) in place of libcudart. Called with the device pointers of a call as
// plain numbers, the launcher's kernel launches, attribute settings and memsets are recorded
// into a PLAN, which the EXECUTOR (the trusted runner that owns the context, the buffers and
// the clocks, common/src/worker.cpp) validates and runs on the call's stream, loading the
// student's device code itself from the planner binary's .nv_fatbin section.
//
// Messages: a Frame header, then `bytes` of payload. Everything the planner sends is
// untrusted: the executor checks every length and every value before it uses one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "labkit/fd_io.hpp"

namespace labkit::plan {

inline constexpr uint32_t kMagic = 0x4E4C5050u;  // "PPLN"
// The planner's descriptors (dup2'ed there by the executor before exec).
inline constexpr int kRequestFd = 3;
inline constexpr int kReplyFd = 4;

inline constexpr uint32_t kMaxOps = 4096;              // one call's plan
inline constexpr uint32_t kMaxArgBytes = 32764;        // CUDA's kernel parameter limit
inline constexpr uint32_t kMaxNameBytes = 4096;        // a mangled kernel name
inline constexpr uint64_t kMaxPayload = 64ull << 20;   // one message
inline constexpr uint32_t kMaxKernels = 4096;
inline constexpr uint32_t kMaxParamsPerKernel = 4096;
inline constexpr int kMaxInts = 16;

enum class Type : uint32_t {
  kHello = 1,     // planner -> executor: u32 n, then n names of kVariantNameLen bytes
  kSnapshot = 2,  // executor -> planner: Snapshot, then the kernel table (KernelInfo entries)
  kPlan = 3,      // executor -> planner: PlanRequest
  kPlanned = 4,   // planner -> executor: PlanReply, then the ops
  kQuit = 5,      // executor -> planner
};

inline constexpr int kVariantNameLen = 64;

struct Frame {
  uint32_t magic = kMagic;
  uint32_t type = 0;
  uint64_t bytes = 0;
};

// What the launcher may ask about the GPU, answered from what the executor saw: the device's
// properties (the bytes of cudaDeviceProp), then `n_kernels` KernelInfo records.
struct Snapshot {
  uint32_t prop_bytes = 0;  // sizeof(cudaDeviceProp) on the executor's side; must match
  uint32_t n_kernels = 0;
  int32_t device = 0;
  int32_t device_count = 1;
  int32_t driver_version = 0;
  int32_t runtime_version = 0;
};

// One kernel of the student's device code: its name, cudaFuncAttributes' fields, its
// parameters' sizes. Followed by name_len bytes of name, then n_params uint32 sizes.
struct KernelInfo {
  uint32_t name_len = 0;
  uint32_t n_params = 0;
  int32_t num_regs = 0;
  int32_t max_threads_per_block = 0;
  uint64_t shared_size_bytes = 0;
  uint64_t const_size_bytes = 0;
  uint64_t local_size_bytes = 0;
  int32_t ptx_version = 0;
  int32_t binary_version = 0;
  int32_t max_dynamic_shared_size_bytes = 0;
  int32_t preferred_shmem_carveout = 0;
};

struct PlanRequest {
  char variant[kVariantNameLen] = {};
  uint32_t n_params = 0;
  uint32_t n_buffers = 0;
  int64_t params[16] = {};
  uint64_t buffers[8] = {};       // device addresses, as numbers
  uint64_t buffer_bytes[8] = {};
  uint64_t stream = 0;            // the token the launcher gets as its cudaStream_t
  uint32_t captured = 0;          // what cudaStreamIsCapturing answers
  uint32_t call = 0;              // 0, 1, ... within one request of the judge
};

struct PlanReply {
  uint32_t ok = 0;          // 1: the launcher returned; 0: it threw (message says what)
  uint32_t n_ops = 0;
  int32_t last_error = 0;   // what cudaGetLastError would say after the launcher
  uint32_t reserved = 0;
  char message[1024] = {};
};

enum class OpKind : uint32_t {
  kLaunch = 1,    // LaunchOp, then name_len bytes of kernel name, then args_bytes of arguments
  kMemset = 2,    // MemsetOp
  kFuncAttr = 3,  // FuncAttrOp, then name_len bytes of kernel name
  kHelper = 4,    // HelperOp: a function the lab gives some variants (lab 07's GEMM)
};

struct OpHeader {
  uint32_t kind = 0;
  uint32_t bytes = 0;  // of the body that follows (the op's struct and its trailing bytes)
};

struct LaunchOp {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t cluster[3] = {0, 0, 0};  // 0: no cluster attribute
  uint32_t cooperative = 0;
  uint64_t shared_bytes = 0;
  uint64_t stream = 0;
  uint32_t name_len = 0;
  uint32_t args_bytes = 0;  // the parameters' bytes, each of its size, in order, unpadded
};

struct MemsetOp {
  uint64_t ptr = 0;
  uint64_t count = 0;
  int32_t value = 0;
  uint32_t reserved = 0;
  uint64_t stream = 0;
};

struct FuncAttrOp {
  int32_t attr = 0;   // cudaFuncAttribute, or -1: cudaFuncSetCacheConfig (value: the config)
  int32_t value = 0;
  uint32_t name_len = 0;
  uint32_t reserved = 0;
};

struct HelperOp {
  uint32_t helper = 0;      // a family's identifier (labkit/helper.hpp)
  uint32_t n_ints = 0;
  int64_t ints[kMaxInts] = {};
  uint64_t stream = 0;
};

// One frame and its payload on `fd`. Both ends of the wire (and the planner's tests) use these.
inline bool send_frame(int fd, Type type, const std::vector<char>& payload) {
  Frame f;
  f.type = static_cast<uint32_t>(type);
  f.bytes = payload.size();
  return write_full(fd, &f, sizeof(f)) &&
         (payload.empty() || write_full(fd, payload.data(), payload.size()));
}

// 1: a frame; 0: the pipe closed; -1: not a frame (bad magic or size).
inline int read_frame(int fd, Frame& f, std::vector<char>& payload) {
  if (!read_full(fd, &f, sizeof(f))) return 0;
  if (f.magic != kMagic || f.bytes > kMaxPayload) return -1;
  payload.resize(f.bytes);
  return f.bytes == 0 || read_full(fd, payload.data(), payload.size()) ? 1 : 0;
}

// A call's plan as the executor ran it, for a replay under compute-sanitizer (protocol.hpp,
// kPlanOf; the executor's --plan FILE): the replay runs these ops, never asking a planner, so
// the checked run is the graded run's plan. Followed by `bytes` of ops.
inline constexpr uint32_t kSavedMagic = 0x50565344u;  // "DSVP"
struct SavedPlan {
  uint32_t magic = kSavedMagic;
  uint32_t n_ops = 0;
  uint32_t n_buffers = 0;
  uint32_t reserved = 0;
  char variant[kVariantNameLen] = {};
  uint64_t fake[8] = {};  // the addresses the launcher was given, in the order of the buffers
  uint64_t bytes = 0;
};

// In the planner (planner.cpp): records a call of a helper the lab gives (a family's
// recording stub calls it); the executor runs it, if this variant is given it.
void record_helper(uint32_t helper, const int64_t* ints, uint32_t n_ints, const void* stream);

}  // namespace labkit::plan
