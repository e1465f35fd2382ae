// The planner: the process that runs the student's host code (the launcher), and the recording
// runtime it is linked against in place of libcudart (docs/architecture.md, "Planner and
// executor"; the wire format is labkit/plan.hpp).
//
// The planner has no CUDA context, no driver, no device files and no inputs: it is confined
// (sandbox.hpp, Mode::kPlanner) before any constructor of the executable runs, holds only its
// two pipes to the executor and a log, and is handed the device pointers of a call as numbers.
// The launcher's kernel launches, attribute settings and memsets are recorded into a plan that
// the executor validates and runs. What the launcher may ask about the GPU (properties,
// attributes, occupancy, a kernel's attributes) is answered from the snapshot the executor sends
// at start. Any other CUDA runtime function is not defined here: the planner does not link.
//
// Nothing here is a defence: the student's code owns this process and may write any bytes to
// the pipe. The executor checks every op. This file only makes an honest launcher's calls mean
// what they mean in a program linked with the real runtime.
#include <cuda_occupancy.h>
#include <cuda_runtime.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "labkit/fd_io.hpp"
#include "labkit/plan.hpp"
#include "labkit/sandbox.hpp"
#include "labkit/worker.hpp"

namespace {

namespace pl = ::labkit::plan;

struct Kernel {
  std::string name;
  pl::KernelInfo info;
  std::vector<uint32_t> sizes;
  int max_dynamic_shared = 0;  // as set through cudaFuncSetAttribute
  int carveout = -1;
};

struct Config {
  dim3 grid, block;
  size_t shared = 0;
  cudaStream_t stream = nullptr;
};

struct State {
  std::map<const void*, std::string> names;  // host stub -> device name (__cudaRegisterFunction)
  std::map<std::string, size_t> by_name;     // -> kernels
  std::vector<Kernel> kernels;
  bool have_snapshot = false;
  pl::Snapshot snap;
  cudaDeviceProp prop{};
  std::map<int, int> attrs;                  // cudaDeviceAttr -> value
  std::vector<Config> configs;               // <<<...>>> pushes
  // The plan being recorded. Ops recorded outside a launcher call (none should be) go into
  // the next plan.
  std::vector<char> ops;
  uint32_t n_ops = 0;
  cudaError_t last = cudaSuccess;
  bool recording = false;
  bool captured = false;
  uint64_t stream = 0;
};

State& st() {
  static State s;
  return s;
}

cudaError_t fail(cudaError_t e) {
  st().last = e;
  return e;
}

void put(const void* data, size_t n) {
  const char* c = static_cast<const char*>(data);
  st().ops.insert(st().ops.end(), c, c + n);
}

void op(pl::OpKind kind, const void* body, size_t n, const void* tail1 = nullptr,
        size_t n1 = 0, const void* tail2 = nullptr, size_t n2 = 0) {
  pl::OpHeader h;
  h.kind = static_cast<uint32_t>(kind);
  h.bytes = static_cast<uint32_t>(n + n1 + n2);
  put(&h, sizeof(h));
  put(body, n);
  if (n1) put(tail1, n1);
  if (n2) put(tail2, n2);
  ++st().n_ops;
}

const Kernel* kernel_of(const void* fn) {
  State& s = st();
  const auto name = s.names.find(fn);
  if (name == s.names.end()) return nullptr;
  const auto k = s.by_name.find(name->second);
  return k == s.by_name.end() ? nullptr : &s.kernels[k->second];
}

Kernel* mutable_kernel_of(const void* fn) { return const_cast<Kernel*>(kernel_of(fn)); }

cudaError_t record_launch(const void* fn, dim3 grid, dim3 block, void** args, size_t shared,
                          cudaStream_t stream, const uint32_t cluster[3], bool cooperative) {
  State& s = st();
  if (!s.have_snapshot) return fail(cudaErrorInitializationError);
  const Kernel* k = kernel_of(fn);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  std::vector<char> bytes;
  for (size_t i = 0; i < k->sizes.size(); ++i) {
    if (args == nullptr || args[i] == nullptr) return fail(cudaErrorInvalidValue);
    const char* a = static_cast<const char*>(args[i]);
    bytes.insert(bytes.end(), a, a + k->sizes[i]);
  }
  pl::LaunchOp l;
  l.grid[0] = grid.x; l.grid[1] = grid.y; l.grid[2] = grid.z;
  l.block[0] = block.x; l.block[1] = block.y; l.block[2] = block.z;
  for (int i = 0; i < 3; ++i) l.cluster[i] = cluster[i];
  l.cooperative = cooperative ? 1 : 0;
  l.shared_bytes = shared;
  l.stream = reinterpret_cast<uint64_t>(stream);
  l.name_len = static_cast<uint32_t>(k->name.size());
  l.args_bytes = static_cast<uint32_t>(bytes.size());
  op(pl::OpKind::kLaunch, &l, sizeof(l), k->name.data(), k->name.size(), bytes.data(), bytes.size());
  return cudaSuccess;
}

const uint32_t kNoCluster[3] = {0, 0, 0};

cudaOccDeviceProp occ_prop() { return cudaOccDeviceProp(st().prop); }

cudaOccFuncAttributes occ_attrs(const Kernel& k) {
  cudaFuncAttributes a{};
  a.maxThreadsPerBlock = k.info.max_threads_per_block;
  a.numRegs = k.info.num_regs;
  a.sharedSizeBytes = k.info.shared_size_bytes;
  a.maxDynamicSharedSizeBytes = k.max_dynamic_shared;
  a.preferredShmemCarveout = k.carveout;
  return cudaOccFuncAttributes(a);
}

// ---- the planner's side of the wire

bool send_frame(pl::Type type, const std::vector<char>& payload) {
  return pl::send_frame(pl::kReplyFd, type, payload);
}

bool read_frame(pl::Frame& f, std::vector<char>& payload) {
  return pl::read_frame(pl::kRequestFd, f, payload) == 1;
}

bool take_snapshot(const std::vector<char>& p) {
  State& s = st();
  size_t at = 0;
  auto take = [&](void* out, size_t n) {
    if (p.size() - at < n) return false;
    std::memcpy(out, p.data() + at, n);
    at += n;
    return true;
  };
  if (!take(&s.snap, sizeof(s.snap)) || s.snap.prop_bytes != sizeof(cudaDeviceProp) ||
      !take(&s.prop, sizeof(s.prop))) {
    return false;
  }
  uint32_t n_attrs = 0;
  if (!take(&n_attrs, sizeof(n_attrs)) || n_attrs > 1024) return false;
  for (uint32_t i = 0; i < n_attrs; ++i) {
    int32_t kv[2];
    if (!take(kv, sizeof(kv))) return false;
    s.attrs[kv[0]] = kv[1];
  }
  for (uint32_t i = 0; i < s.snap.n_kernels; ++i) {
    Kernel k;
    if (!take(&k.info, sizeof(k.info)) || k.info.name_len > pl::kMaxNameBytes) return false;
    k.name.resize(k.info.name_len);
    if (!take(k.name.data(), k.name.size())) return false;
    k.sizes.resize(k.info.n_params);
    if (!take(k.sizes.data(), k.sizes.size() * sizeof(uint32_t))) return false;
    k.max_dynamic_shared = k.info.max_dynamic_shared_size_bytes;
    k.carveout = k.info.preferred_shmem_carveout;
    s.by_name[k.name] = s.kernels.size();
    s.kernels.push_back(std::move(k));
  }
  s.have_snapshot = true;
  return true;
}

// Confined before any constructor of the executable runs (the student's object's included): a
// .preinit_array entry runs after the C library is up and before every .init_array entry.
void confine_at_start(int, char**, char**) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const std::string why = labkit::sandbox::confine(labkit::sandbox::Mode::kPlanner);
  if (!why.empty()) {
    std::fprintf(stderr, "labkit-planner: cannot confine the planner: %s\n", why.c_str());
    std::fflush(stderr);
    ::_exit(2);
  }
}

}  // namespace

// What tells the judge that a worker binary is a planner, to be run by the executor
// (judge.cpp, is_planner), and not a self-contained runner (the calibration worker, the
// harness's self-test workers).
extern "C" __attribute__((used)) const char labkit_planner_marker[] = "labkit-planner-runtime/1:9f3c2e7a";

__attribute__((section(".preinit_array"), used)) void (*labkit_planner_preinit)(int, char**, char**) =
    &confine_at_start;

// ---- the recording runtime: what nvcc's generated code and the allowed API call

extern "C" {

void** __cudaRegisterFatBinary(void*) {
  static void* handle = nullptr;
  return &handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
char __cudaInitModule(void**) { return 1; }
void __cudaRegisterFunction(void**, const char* host_fun, char*, const char* device_name, int,
                            uint3*, uint3*, dim3*, dim3*, int*) {
  st().names[host_fun] = device_name;
}
void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}
void __cudaRegisterManagedVar(void**, void**, char*, const char*, int, size_t, int, int) {}

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, struct CUstream_st* stream) {
  st().configs.push_back({grid, block, shared, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  State& s = st();
  if (s.configs.empty()) return fail(cudaErrorInvalidConfiguration);
  const Config c = s.configs.back();
  s.configs.pop_back();
  *grid = c.grid;
  *block = c.block;
  *shared = c.shared;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

// A kernel handle is the host stub's address: every launch path names kernels by it.
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* fun) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(fun));
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                               size_t shared, cudaStream_t stream) {
  return record_launch(reinterpret_cast<const void*>(kernel), grid, block, args, shared, stream,
                       kNoCluster, false);
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                    size_t shared, cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                                       size_t shared, cudaStream_t stream) {
  return record_launch(func, grid, block, args, shared, stream, kNoCluster, false);
}

cudaError_t CUDARTAPI cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block,
                                                  void** args, size_t shared, cudaStream_t stream) {
  return record_launch(func, grid, block, args, shared, stream, kNoCluster, true);
}

cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                          void** args) {
  if (config == nullptr) return fail(cudaErrorInvalidValue);
  uint32_t cluster[3] = {0, 0, 0};
  bool cooperative = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id == cudaLaunchAttributeClusterDimension) {
      cluster[0] = a.val.clusterDim.x;
      cluster[1] = a.val.clusterDim.y;
      cluster[2] = a.val.clusterDim.z;
    } else if (a.id == cudaLaunchAttributeCooperative) {
      cooperative = a.val.cooperative != 0;
    } else if (a.id != cudaLaunchAttributeIgnore) {
      return fail(cudaErrorNotSupported);  // not among the attributes the lab's rules allow
    }
  }
  return record_launch(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                       config->stream, cluster, cooperative);
}

cudaError_t CUDARTAPI cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value) {
  Kernel* k = mutable_kernel_of(func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) k->max_dynamic_shared = value;
  if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) k->carveout = value;
  pl::FuncAttrOp a;
  a.attr = static_cast<int32_t>(attr);
  a.value = value;
  a.name_len = static_cast<uint32_t>(k->name.size());
  op(pl::OpKind::kFuncAttr, &a, sizeof(a), k->name.data(), k->name.size());
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaFuncSetCacheConfig(const void* func, enum cudaFuncCache config) {
  const Kernel* k = kernel_of(func);
  if (k == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  pl::FuncAttrOp a;
  a.attr = -1;
  a.value = static_cast<int32_t>(config);
  a.name_len = static_cast<uint32_t>(k->name.size());
  op(pl::OpKind::kFuncAttr, &a, sizeof(a), k->name.data(), k->name.size());
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaFuncSetSharedMemConfig(const void* func, enum cudaSharedMemConfig) {
  return kernel_of(func) != nullptr ? cudaSuccess : fail(cudaErrorInvalidDeviceFunction);
}

cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func) {
  const Kernel* k = kernel_of(func);
  if (k == nullptr || attr == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  *attr = cudaFuncAttributes{};
  attr->sharedSizeBytes = k->info.shared_size_bytes;
  attr->constSizeBytes = k->info.const_size_bytes;
  attr->localSizeBytes = k->info.local_size_bytes;
  attr->maxThreadsPerBlock = k->info.max_threads_per_block;
  attr->numRegs = k->info.num_regs;
  attr->ptxVersion = k->info.ptx_version;
  attr->binaryVersion = k->info.binary_version;
  attr->maxDynamicSharedSizeBytes = k->max_dynamic_shared;
  attr->preferredShmemCarveout = k->carveout;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaMemsetAsync(void* ptr, int value, size_t count, cudaStream_t stream) {
  if (!st().have_snapshot) return fail(cudaErrorInitializationError);
  pl::MemsetOp m;
  m.ptr = reinterpret_cast<uint64_t>(ptr);
  m.count = count;
  m.value = value;
  m.stream = reinterpret_cast<uint64_t>(stream);
  op(pl::OpKind::kMemset, &m, sizeof(m));
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void* ptr, int value, size_t count, cudaStream_t stream) {
  return cudaMemsetAsync(ptr, value, count, stream);
}

cudaError_t CUDARTAPI cudaGetLastError(void) {
  const cudaError_t e = st().last;
  st().last = cudaSuccess;
  return e;
}
cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return st().last; }

const char* CUDARTAPI cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDeviceFunction: return "cudaErrorInvalidDeviceFunction";
    case cudaErrorInitializationError: return "cudaErrorInitializationError";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    default: return "cudaErrorUnknown";
  }
}

const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorNotSupported: return "operation not supported (in the launcher)";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    default: return "error in the launcher (see the judge's message)";
  }
}

cudaError_t CUDARTAPI cudaGetDevice(int* device) {
  if (device == nullptr) return fail(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int* count) {
  if (count == nullptr) return fail(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return fail(cudaErrorInvalidValue);
  if (device != 0) return fail(cudaErrorInvalidDevice);
  if (!st().have_snapshot) return fail(cudaErrorInitializationError);
  *prop = st().prop;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
  if (value == nullptr) return fail(cudaErrorInvalidValue);
  if (device != 0) return fail(cudaErrorInvalidDevice);
  const auto it = st().attrs.find(static_cast<int>(attr));
  if (it == st().attrs.end()) return fail(cudaErrorInvalidValue);
  *value = it->second;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int* v) {
  if (v == nullptr) return fail(cudaErrorInvalidValue);
  *v = st().snap.driver_version;
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* v) {
  if (v == nullptr) return fail(cudaErrorInvalidValue);
  *v = st().snap.runtime_version;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t, enum cudaStreamCaptureStatus* status) {
  if (status == nullptr) return fail(cudaErrorInvalidValue);
  *status = st().captured ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaStreamGetCaptureInfo(cudaStream_t stream,
                                               enum cudaStreamCaptureStatus* status,
                                               unsigned long long* id, cudaGraph_t* graph,
                                               const cudaGraphNode_t** deps,
                                               const cudaGraphEdgeData** edges, size_t* n_deps) {
  if (graph != nullptr || deps != nullptr || edges != nullptr) return fail(cudaErrorNotSupported);
  if (id != nullptr) *id = st().captured ? 1 : 0;
  if (n_deps != nullptr) *n_deps = 0;
  return cudaStreamIsCapturing(stream, status);
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* blocks, const void* func, int block_size, size_t dynamic_shared, unsigned int flags) {
  const Kernel* k = kernel_of(func);
  if (k == nullptr || blocks == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  cudaOccResult result;
  const cudaOccDeviceProp prop = occ_prop();
  const cudaOccFuncAttributes attrs = occ_attrs(*k);
  cudaOccDeviceState state;
  (void)flags;
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attrs, &state, block_size,
                                              dynamic_shared) != CUDA_OCC_SUCCESS) {
    return fail(cudaErrorInvalidValue);
  }
  *blocks = result.activeBlocksPerMultiprocessor;
  return cudaSuccess;
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                                    int block_size,
                                                                    size_t dynamic_shared) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, func, block_size,
                                                                dynamic_shared, 0);
}

cudaError_t CUDARTAPI cudaOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* func,
                                                                int blocks, int block_size) {
  const Kernel* k = kernel_of(func);
  if (k == nullptr || bytes == nullptr) return fail(cudaErrorInvalidDeviceFunction);
  const cudaOccDeviceProp prop = occ_prop();
  const cudaOccFuncAttributes attrs = occ_attrs(*k);
  cudaOccDeviceState state;
  if (cudaOccAvailableDynamicSMemPerBlock(bytes, &prop, &attrs, &state, blocks, block_size) !=
      CUDA_OCC_SUCCESS) {
    return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

// Allowed by the policy, answered without a device: a __device__ variable's address exists only
// in the executor's copy of the device code, so the launcher cannot have one.
cudaError_t CUDARTAPI cudaGetSymbolAddress(void**, const void*) { return fail(cudaErrorNotSupported); }
cudaError_t CUDARTAPI cudaGetSymbolSize(size_t*, const void*) { return fail(cudaErrorNotSupported); }
cudaError_t CUDARTAPI cudaDeviceGetLimit(size_t*, enum cudaLimit) { return fail(cudaErrorNotSupported); }
cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least != nullptr) *least = 0;
  if (greatest != nullptr) *greatest = 0;
  return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemset2DAsync(void*, size_t, int, size_t, size_t, cudaStream_t) {
  return fail(cudaErrorNotSupported);
}
cudaError_t CUDARTAPI cudaOccupancyMaxPotentialClusterSize(int*, const void*, const cudaLaunchConfig_t*) {
  return fail(cudaErrorNotSupported);
}
cudaError_t CUDARTAPI cudaOccupancyMaxActiveClusters(int*, const void*, const cudaLaunchConfig_t*) {
  return fail(cudaErrorNotSupported);
}

// The per-thread-default-stream spellings (nvcc --default-stream per-thread).
cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                  size_t shared, cudaStream_t stream) {
  return cudaLaunchKernel(func, grid, block, args, shared, stream);
}
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return cudaLaunchKernelExC(config, func, args);
}
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args,
                                             size_t shared, cudaStream_t stream) {
  return cudaLaunchCooperativeKernel(func, grid, block, args, shared, stream);
}
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus* status) {
  return cudaStreamIsCapturing(stream, status);
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus* status,
                                          unsigned long long* id, cudaGraph_t* graph,
                                          const cudaGraphNode_t** deps,
                                          const cudaGraphEdgeData** edges, size_t* n_deps) {
  return cudaStreamGetCaptureInfo(stream, status, id, graph, deps, edges, n_deps);
}

}  // extern "C"

namespace labkit::plan {

void record_helper(uint32_t helper, const int64_t* ints, uint32_t n_ints, const void* stream) {
  if (n_ints > static_cast<uint32_t>(kMaxInts)) throw std::invalid_argument("record_helper: too many arguments");
  HelperOp h;
  h.helper = helper;
  h.n_ints = n_ints;
  for (uint32_t i = 0; i < n_ints; ++i) h.ints[i] = ints[i];
  h.stream = reinterpret_cast<uint64_t>(stream);
  op(OpKind::kHelper, &h, sizeof(h));
}

}  // namespace labkit::plan

// ---- the planner's main: the lab's binding calls labkit::worker::main (worker.hpp)

namespace labkit::worker {

int main(int argc, char** argv, const std::vector<Variant>& variants) {
  (void)argc;
  (void)argv;
  // Hello: the variant names the binding declares.
  std::vector<char> hello;
  const uint32_t n = static_cast<uint32_t>(variants.size());
  hello.insert(hello.end(), reinterpret_cast<const char*>(&n), reinterpret_cast<const char*>(&n) + 4);
  for (const Variant& v : variants) {
    char name[pl::kVariantNameLen] = {};
    std::snprintf(name, sizeof(name), "%s", v.name.c_str());
    hello.insert(hello.end(), name, name + sizeof(name));
  }
  if (!send_frame(pl::Type::kHello, hello)) return 0;
  pl::Frame f;
  std::vector<char> payload;
  for (;;) {
    if (!read_frame(f, payload)) return 0;  // the executor is gone
    const auto type = static_cast<pl::Type>(f.type);
    if (type == pl::Type::kQuit) return 0;
    if (type == pl::Type::kSnapshot) {
      if (!take_snapshot(payload)) {
        std::fprintf(stderr, "labkit-planner: the executor's snapshot is not valid\n");
        return 2;
      }
      continue;
    }
    if (type != pl::Type::kPlan || payload.size() != sizeof(pl::PlanRequest)) return 2;
    pl::PlanRequest req;
    std::memcpy(&req, payload.data(), sizeof(req));
    req.variant[pl::kVariantNameLen - 1] = '\0';
    State& s = st();
    pl::PlanReply reply;
    const Variant* v = nullptr;
    for (const Variant& cand : variants) {
      if (cand.name == req.variant) v = &cand;
    }
    s.captured = req.captured != 0;
    s.stream = req.stream;
    s.configs.clear();
    s.recording = true;
    if (v == nullptr) {
      std::snprintf(reply.message, sizeof(reply.message), "no variant named %s", req.variant);
    } else {
      void* buffers[8];
      for (int b = 0; b < 8; ++b) buffers[b] = reinterpret_cast<void*>(req.buffers[b]);
      Call call{req.params, static_cast<int>(std::min<uint32_t>(req.n_params, 16)), buffers,
                static_cast<int>(std::min<uint32_t>(req.n_buffers, 8)),
                reinterpret_cast<cudaStream_t>(req.stream)};
      try {
        v->launch(call);
        reply.ok = 1;
      } catch (const std::exception& e) {
        std::snprintf(reply.message, sizeof(reply.message), "%s", e.what());
      } catch (...) {
        std::snprintf(reply.message, sizeof(reply.message), "the launcher threw an exception");
      }
    }
    s.recording = false;
    reply.n_ops = s.n_ops;
    reply.last_error = static_cast<int32_t>(s.last);
    std::vector<char> out(sizeof(reply));
    std::memcpy(out.data(), &reply, sizeof(reply));
    out.insert(out.end(), s.ops.begin(), s.ops.end());
    s.ops.clear();
    s.n_ops = 0;
    std::fflush(stdout);
    std::fflush(stderr);
    if (!send_frame(pl::Type::kPlanned, out)) return 0;
  }
}

}  // namespace labkit::worker
