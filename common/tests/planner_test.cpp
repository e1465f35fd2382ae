// The planner without a GPU (docs/architecture.md, "Planner and executor"): this test plays the
// executor, starts labkit_planner_demo (planner_demo.cu linked the way every lab's worker is)
// and checks that the student's launcher runs in a process with no device, driver or inputs,
// and that what it plans is what its code says.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "labkit/fd_io.hpp"
#include "labkit/plan.hpp"
#include "labkit/sandbox.hpp"

namespace pl = labkit::plan;

namespace {

constexpr const char* kDemoKernel = "_Z11demo_kernelPfid";  // demo_kernel(float*, int, double)
constexpr const char* kOtherKernel = "_Z12other_kernelPi";  // other_kernel(int*)
constexpr uint64_t kStream = 0x5354524D00000010ull;

struct Planner {
  pid_t pid = -1;
  int to = -1, from = -1, log = -1;

  Planner() {
    int req[2], rep[2];
    EXPECT_EQ(::pipe2(req, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(rep, O_CLOEXEC), 0);
    char tmpl[] = "/tmp/labkit-planner-log-XXXXXX";
    log = ::mkstemp(tmpl);
    ::unlink(tmpl);
    pid = ::fork();
    if (pid == 0) {
      // Out of the way first: a pipe may have been given fd 3 or 4 itself.
      const int in = ::fcntl(req[0], F_DUPFD, 100), out = ::fcntl(rep[1], F_DUPFD, 100);
      ::dup2(log, 1);
      ::dup2(log, 2);
      ::dup2(in, pl::kRequestFd);
      ::dup2(out, pl::kReplyFd);
      for (int fd = 5; fd < 1024; ++fd) ::close(fd);
      char* const argv[] = {const_cast<char*>("planner"), nullptr};
      char* const envp[] = {nullptr};
      ::execve(LABKIT_PLANNER_DEMO, argv, envp);
      ::_exit(127);
    }
    ::close(req[0]);
    ::close(rep[1]);
    to = req[1];
    from = rep[0];
  }
  ~Planner() {
    if (to >= 0) ::close(to);
    if (from >= 0) ::close(from);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (log >= 0) ::close(log);
  }

  bool send(pl::Type type, const std::vector<char>& payload) {
    return pl::send_frame(to, type, payload);
  }
  bool receive(pl::Frame& f, std::vector<char>& payload) {
    return pl::read_frame(from, f, payload) == 1;
  }
  std::string log_text() {
    std::string text(1 << 16, '\0');
    const ssize_t n = ::pread(log, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return text;
  }
  // Waits for the planner to end; its wait status.
  int wait_end() {
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
};

template <typename T>
void append(std::vector<char>& out, const T& v) {
  const char* c = reinterpret_cast<const char*>(&v);
  out.insert(out.end(), c, c + sizeof(T));
}

void add_kernel(std::vector<char>& out, const std::string& name, std::vector<uint32_t> sizes) {
  pl::KernelInfo k;
  k.name_len = static_cast<uint32_t>(name.size());
  k.n_params = static_cast<uint32_t>(sizes.size());
  k.num_regs = 32;
  k.max_threads_per_block = 1024;
  k.binary_version = 90;
  k.ptx_version = 90;
  k.max_dynamic_shared_size_bytes = 48 * 1024;
  k.preferred_shmem_carveout = -1;
  append(out, k);
  out.insert(out.end(), name.begin(), name.end());
  for (uint32_t s : sizes) append(out, s);
}

std::vector<char> snapshot() {
  cudaDeviceProp prop{};
  std::snprintf(prop.name, sizeof(prop.name), "Fake GPU");
  prop.major = 9;
  prop.minor = 0;
  prop.multiProcessorCount = 132;
  prop.maxThreadsPerBlock = 1024;
  prop.maxThreadsPerMultiProcessor = 2048;
  prop.regsPerBlock = 65536;
  prop.regsPerMultiprocessor = 65536;
  prop.sharedMemPerBlock = 48 * 1024;
  prop.sharedMemPerBlockOptin = 227 * 1024;
  prop.sharedMemPerMultiprocessor = 228 * 1024;
  prop.reservedSharedMemPerBlock = 1024;
  prop.maxBlocksPerMultiProcessor = 32;
  prop.warpSize = 32;
  pl::Snapshot s;
  s.prop_bytes = sizeof(cudaDeviceProp);
  s.n_kernels = 2;
  std::vector<char> out;
  append(out, s);
  append(out, prop);
  const uint32_t n_attrs = 1;
  append(out, n_attrs);
  append(out, static_cast<int32_t>(cudaDevAttrMultiProcessorCount));
  append(out, static_cast<int32_t>(132));
  add_kernel(out, kDemoKernel, {8, 4, 8});
  add_kernel(out, kOtherKernel, {8});
  return out;
}

// A started planner: hello read, snapshot sent.
struct Started : Planner {
  std::vector<std::string> variants;
  Started() {
    pl::Frame f;
    std::vector<char> hello;
    if (!receive(f, hello) || f.type != static_cast<uint32_t>(pl::Type::kHello)) {
      ADD_FAILURE() << "no hello from the planner: " << log_text();
      return;
    }
    uint32_t n = 0;
    std::memcpy(&n, hello.data(), 4);
    for (uint32_t i = 0; i < n; ++i) variants.emplace_back(hello.data() + 4 + i * pl::kVariantNameLen);
    EXPECT_TRUE(send(pl::Type::kSnapshot, snapshot()));
  }

  // The plan of one call of `variant` on buffers at 0x7f0000000000 + b * 0x100000.
  bool plan(const char* variant, pl::PlanReply& reply, std::vector<char>& ops, bool captured = false) {
    pl::PlanRequest req;
    std::snprintf(req.variant, sizeof(req.variant), "%s", variant);
    req.n_buffers = 2;
    req.buffers[0] = 0x7f0000000000ull;
    req.buffers[1] = 0x7f0000100000ull;
    req.buffer_bytes[0] = req.buffer_bytes[1] = 0x1000;
    req.stream = kStream;
    req.captured = captured ? 1 : 0;
    std::vector<char> payload(sizeof(req));
    std::memcpy(payload.data(), &req, sizeof(req));
    pl::Frame f;
    std::vector<char> out;
    if (!send(pl::Type::kPlan, payload) || !receive(f, out)) return false;
    if (f.type != static_cast<uint32_t>(pl::Type::kPlanned) || out.size() < sizeof(reply)) return false;
    std::memcpy(&reply, out.data(), sizeof(reply));
    ops.assign(out.begin() + sizeof(reply), out.end());
    return true;
  }
};

struct Op {
  pl::OpKind kind;
  std::vector<char> body;
};

std::vector<Op> ops_of(const std::vector<char>& bytes) {
  std::vector<Op> ops;
  size_t at = 0;
  while (at + sizeof(pl::OpHeader) <= bytes.size()) {
    pl::OpHeader h;
    std::memcpy(&h, bytes.data() + at, sizeof(h));
    at += sizeof(h);
    ops.push_back({static_cast<pl::OpKind>(h.kind),
                   std::vector<char>(bytes.begin() + at, bytes.begin() + at + h.bytes)});
    at += h.bytes;
  }
  return ops;
}

pl::LaunchOp launch_of(const Op& op, std::string& name, std::vector<char>& args) {
  pl::LaunchOp l;
  std::memcpy(&l, op.body.data(), sizeof(l));
  name.assign(op.body.data() + sizeof(l), l.name_len);
  args.assign(op.body.begin() + sizeof(l) + l.name_len, op.body.end());
  return l;
}

TEST(Planner, SaysItsVariantsAndPlansALaunchAndAMemsetOnItsStream) {
  Started p;
  EXPECT_EQ(p.variants, (std::vector<std::string>{"ok", "ex", "queries", "throws",
                                                  "opens_a_file", "unknown"}));
  pl::PlanReply r;
  std::vector<char> bytes;
  ASSERT_TRUE(p.plan("ok", r, bytes)) << p.log_text();
  EXPECT_EQ(r.ok, 1u) << r.message;
  const std::vector<Op> ops = ops_of(bytes);
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_EQ(ops[0].kind, pl::OpKind::kLaunch);
  std::string name;
  std::vector<char> args;
  const pl::LaunchOp l = launch_of(ops[0], name, args);
  EXPECT_EQ(name, kDemoKernel);
  EXPECT_EQ(l.grid[0], 3u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.stream, kStream);
  ASSERT_EQ(args.size(), 20u);  // float* (8), int (4), double (8), unpadded
  uint64_t ptr = 0;
  int n = 0;
  double scale = 0;
  std::memcpy(&ptr, args.data(), 8);
  std::memcpy(&n, args.data() + 8, 4);
  std::memcpy(&scale, args.data() + 12, 8);
  EXPECT_EQ(ptr, 0x7f0000000000ull);
  EXPECT_EQ(n, 7);
  EXPECT_EQ(scale, 2.5);
  ASSERT_EQ(ops[1].kind, pl::OpKind::kMemset);
  pl::MemsetOp m;
  std::memcpy(&m, ops[1].body.data(), sizeof(m));
  EXPECT_EQ(m.ptr, 0x7f0000100000ull);
  EXPECT_EQ(m.count, 16u);
  // The next call's plan holds only that call's ops.
  ASSERT_TRUE(p.plan("ok", r, bytes));
  EXPECT_EQ(ops_of(bytes).size(), 2u);
}

TEST(Planner, RecordsClustersAndFunctionAttributes) {
  Started p;
  pl::PlanReply r;
  std::vector<char> bytes;
  ASSERT_TRUE(p.plan("ex", r, bytes)) << p.log_text();
  ASSERT_EQ(r.ok, 1u) << r.message;
  const std::vector<Op> ops = ops_of(bytes);
  ASSERT_EQ(ops.size(), 2u);
  ASSERT_EQ(ops[0].kind, pl::OpKind::kFuncAttr);
  pl::FuncAttrOp a;
  std::memcpy(&a, ops[0].body.data(), sizeof(a));
  EXPECT_EQ(a.attr, cudaFuncAttributeMaxDynamicSharedMemorySize);
  EXPECT_EQ(a.value, 100000);
  std::string name;
  std::vector<char> args;
  const pl::LaunchOp l = launch_of(ops[1], name, args);
  EXPECT_EQ(name, kOtherKernel);
  EXPECT_EQ(l.cluster[0], 2u);
  EXPECT_EQ(l.shared_bytes, 100000u);
  EXPECT_EQ(args.size(), 8u);
}

TEST(Planner, AnswersQueriesFromTheSnapshot) {
  Started p;
  pl::PlanReply r;
  std::vector<char> bytes;
  ASSERT_TRUE(p.plan("queries", r, bytes, /*captured=*/true)) << p.log_text();
  ASSERT_EQ(r.ok, 1u) << r.message;
  const std::vector<Op> ops = ops_of(bytes);
  ASSERT_EQ(ops.size(), 1u);
  std::string name;
  std::vector<char> args;
  const pl::LaunchOp l = launch_of(ops[0], name, args);
  // 132 SMs, 16 blocks of 128 threads (2048 threads per SM, 32 registers a thread).
  EXPECT_EQ(l.grid[0], 132u * 16u);
  int n = 0;
  std::memcpy(&n, args.data() + 8, 4);
  EXPECT_EQ(n, 1) << "cudaStreamIsCapturing must answer what the executor says";
}

TEST(Planner, ALauncherThatThrowsFailsItsCallWithItsMessage) {
  Started p;
  pl::PlanReply r;
  std::vector<char> bytes;
  ASSERT_TRUE(p.plan("throws", r, bytes)) << p.log_text();
  EXPECT_EQ(r.ok, 0u);
  EXPECT_STREQ(r.message, "the launcher says no");
  // The planner goes on serving.
  ASSERT_TRUE(p.plan("ok", r, bytes));
  EXPECT_EQ(r.ok, 1u);
}

TEST(Planner, ALaunchOfWhatIsNotAKernelIsRefusedInTheLauncher) {
  Started p;
  pl::PlanReply r;
  std::vector<char> bytes;
  ASSERT_TRUE(p.plan("unknown", r, bytes)) << p.log_text();
  EXPECT_EQ(r.ok, 1u) << r.message;
  EXPECT_TRUE(bytes.empty());
}

TEST(Planner, HasNoDeviceNoDriverAndNoInputs) {
  Started p;
  pl::PlanReply r;
  std::vector<char> bytes;
  ASSERT_TRUE(p.plan("ok", r, bytes)) << p.log_text();
  // What the launcher's process has mapped and holds while it serves.
  std::ifstream maps("/proc/" + std::to_string(p.pid) + "/maps");
  std::stringstream text;
  text << maps.rdbuf();
  ASSERT_FALSE(text.str().empty());
  for (const char* lib : {"libcuda", "libcudart", "libnvidia", "/dev/nvidia", "memfd:"}) {
    EXPECT_EQ(text.str().find(lib), std::string::npos) << lib << " is mapped:\n" << text.str();
  }
  std::vector<std::string> fds;
  for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(p.pid) + "/fd")) {
    fds.push_back(e.path().filename().string() + " -> " +
                  std::filesystem::read_symlink(e.path()).string());
  }
  EXPECT_EQ(fds.size(), 5u) << "only stdin, the log twice and its two pipes";
  for (const std::string& fd : fds) {
    EXPECT_EQ(fd.find("nvidia"), std::string::npos) << fd;
    EXPECT_EQ(fd.find("memfd"), std::string::npos) << fd;
  }
}

TEST(Planner, IsConfinedBeforeTheLauncherRuns) {
  Started p;
  pl::PlanReply r;
  std::vector<char> bytes;
  EXPECT_FALSE(p.plan("opens_a_file", r, bytes)) << "the planner opened a file";
  const int status = p.wait_end();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == labkit::sandbox::kSandboxExitCode)
      << "status " << status << "\n" << p.log_text();
  EXPECT_NE(p.log_text().find("labkit-sandbox: system call"), std::string::npos) << p.log_text();
}

}  // namespace
