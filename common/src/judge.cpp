// The judge's worker client: process management, the sandbox, and reply validation.
#include "labkit/judge.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>


#include <cuda.h>
#include <cuda_runtime.h>

#include "labkit/device_fill.hpp"
#include "labkit/fd_io.hpp"
#include "labkit/plan.hpp"
#include "labkit/sandbox.hpp"

extern char** environ;

namespace labkit {
namespace {

namespace p = ::labkit::protocol;
namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;
constexpr rlim_t kLogLimit = 16u << 20;  // the worker's output per process, bytes

WorkerOptions g_options;
bool g_options_executor_set = false;
bool g_options_set = false;
std::set<pid_t> g_live_workers;  // kill_strays() spares these

// Whatever a worker leaves behind (a daemon, a double fork) is reparented to this process,
// not to init, so kill_strays() can find it.
void become_subreaper() {
  static const bool done = [] {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    return true;
  }();
  (void)done;
}

bool survey_allowed() {
  const char* mode = std::getenv("LABKIT_SANDBOX");
  return mode != nullptr && std::strcmp(mode, "survey") == 0;
}

// The CPU time of process `pid` (all threads), from /proc/<pid>/stat; all -1 when it cannot be
// read (the process is gone, or /proc hides it).
struct CpuUse {
  double user_ms = -1, sys_ms = -1;  // user and system time
  double minor_faults = -1;          // pages first touched (and other minor faults)
  double total_ms() const { return user_ms < 0 ? -1 : user_ms + sys_ms; }
  CpuUse since(const CpuUse& before) const {
    if (user_ms < 0 || before.user_ms < 0) return {};
    return {user_ms - before.user_ms, sys_ms - before.sys_ms, minor_faults - before.minor_faults};
  }
};

CpuUse cpu_use(pid_t pid) {
  if (pid <= 0) return {};
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return {};
  char buf[1024] = {};
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const char* close = std::strrchr(buf, ')');
  if (n == 0 || close == nullptr) return {};
  // After "pid (comm)": state(3) ppid pgrp session tty_nr tpgid flags minflt(10) cminflt majflt
  // cmajflt utime(14) stime(15).
  unsigned long long minflt = 0, utime = 0, stime = 0;
  if (std::sscanf(close + 1, " %*c %*d %*d %*d %*d %*d %*u %llu %*u %*u %*u %llu %llu", &minflt,
                  &utime, &stime) != 3) {
    return {};
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return {};
  const double ms_per_tick = 1000.0 / static_cast<double>(ticks);
  return {ms_per_tick * static_cast<double>(utime), ms_per_tick * static_cast<double>(stime),
          static_cast<double>(minflt)};
}

// A nonce no worker can predict: each request's reply must echo it.
uint64_t fresh_nonce() {
  static std::mt19937_64 gen([] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(::getpid());
  }());
  return gen() | 1u;  // never 0: a zeroed reply never matches
}

std::string default_worker_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  std::string name = self.filename().string();
  for (const char* suffix : {"_test", "_bench"}) {
    const std::string s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      name = name.substr(0, name.size() - s.size());
      break;
    }
  }
  return (self.parent_path() / (name + "_worker")).string();
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::string describe_wait(int status) {
  std::ostringstream os;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS) {
    os << "was stopped by the sandbox (SIGSYS): it made a system call the worker may not make";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == sandbox::kSandboxExitCode) {
    os << "was stopped by the sandbox: it made a system call the worker may not make";
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    os << "killed by signal " << sig << " (" << strsignal(sig) << ")";
  } else if (WIFEXITED(status)) {
    os << "exited with code " << WEXITSTATUS(status);
  } else {
    os << "ended (status " << status << ")";
  }
  return os.str();
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The worker's environment: nothing of the judge's beyond what the CUDA driver needs.
std::vector<std::string> worker_environment(const std::string& home) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C",
                                  "CUDA_CACHE_DISABLE=1"};
  // LABKIT_SANDBOX=survey measures the allow-list (sandbox.hpp); the grader never sets it (its
  // judges get a scrubbed environment), and a worker in survey mode says so in its hello.
  for (const char* keep : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH",
                           "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LABKIT_SANDBOX",
                           "LABKIT_SANDBOX_LOG"}) {
    if (const char* v = std::getenv(keep)) env.push_back(std::string(keep) + "=" + v);
  }
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// fork + exec of `exe_fd` (or, when it is -1, of the path argv[0]: compute-sanitizer is a shell
// script, which fexecve of a close-on-exec descriptor cannot run) with fds[i] placed at
// descriptor i (fds[i] < 0: /dev/null), in a new process group, as nobody when `drop` (we are
// root), dying with the judge. Returns the pid. Between fork and exec only async-signal-safe
// calls are made.
pid_t spawn(int exe_fd, std::vector<std::string> argv_s, std::vector<std::string> env_s,
            const std::vector<int>& fds, bool drop, const std::string& cwd) {
  std::vector<char*> argv = c_strings(argv_s);
  std::vector<char*> envp = c_strings(env_s);
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (devnull >= 0) ::close(devnull);
    return -1;
  }
  if (pid > 0) {
    if (devnull >= 0) ::close(devnull);
    ::setpgid(pid, pid);
    return pid;
  }
  // ---- child
  ::setpgid(0, 0);
  // Move every source descriptor above the target range first, so the dup2s cannot clobber
  // one another; then place them.
  const int base = 64;
  const int exe = exe_fd >= 0 ? ::fcntl(exe_fd, F_DUPFD_CLOEXEC, base + 16) : -1;
  int moved[16];
  const int n = static_cast<int>(fds.size());
  for (int i = 0; i < n && i < 16; ++i) {
    moved[i] = ::fcntl(fds[i] >= 0 ? fds[i] : devnull, F_DUPFD, base);
  }
  for (int i = 0; i < n && i < 16; ++i) ::dup2(moved[i], i);
  for (int fd = n; fd < 1024; ++fd) {
    if (fd != exe) ::close(fd);
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGXFSZ, &ign, nullptr);  // output past the limit fails, it does not kill
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct rlimit fsize {kLogLimit, kLogLimit};
  ::setrlimit(RLIMIT_FSIZE, &fsize);
  struct rlimit core {0, 0};
  ::setrlimit(RLIMIT_CORE, &core);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(120);
  if (drop) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNogroup) != 0 || ::setuid(kNobody) != 0) {
      ::_exit(121);
    }
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // after setuid, which clears it
  if (::getppid() != parent) ::_exit(122);
  if (exe >= 0) {
    ::fexecve(exe, argv.data(), envp.data());
  } else {
    ::execve(argv[0], argv.data(), envp.data());
  }
  ::_exit(123);
}

// Reads exactly `size` bytes unless the deadline passes (-1) or the pipe closes (0).
int read_until(int fd, void* data, size_t size, double deadline_ms) {
  auto* out = static_cast<char*>(data);
  while (size > 0) {
    const double left = deadline_ms - now_ms();
    if (left <= 0) return -1;
    pollfd pfd{fd, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(std::min(left, 1e9)) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return -1;
    const ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    out += n;
    size -= static_cast<size_t>(n);
  }
  return 1;
}

std::string tail_of(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  const size_t cut = text.find('\n', text.size() - max_chars);
  return "[...]\n" + text.substr(cut == std::string::npos ? text.size() - max_chars : cut + 1);
}

// compute-sanitizer's report, cut to the findings a student acts on: the kind of error, the
// kernel and source line, the thread, and the summary.
std::string summarize_sanitizer(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> keep;
  int findings = 0;
  static const std::regex at_re(R"(at (.+?)\+0x[0-9a-f]+ in (?:.*/)?([^/\s]+:\d+))");
  while (std::getline(in, line)) {
    if (line.rfind("=========", 0) != 0) continue;
    std::string body = line.substr(9);
    while (!body.empty() && body.front() == ' ') body.erase(body.begin());
    if (body.empty()) continue;
    const bool summary = body.find("SUMMARY") != std::string::npos;
    const bool start = body.rfind("Invalid ", 0) == 0 || body.rfind("Error", 0) == 0 ||
                       body.find("Race reported") != std::string::npos ||
                       body.find("hazard") != std::string::npos ||
                       body.rfind("Uninitialized", 0) == 0 || body.rfind("Misaligned", 0) == 0 ||
                       body.rfind("Out-of-range", 0) == 0 || body.rfind("Barrier", 0) == 0 ||
                       body.rfind("Program hit", 0) == 0;
    if (start && !summary) {
      if (++findings > 3) continue;
      keep.push_back("  " + body);
      continue;
    }
    if (summary) {
      keep.push_back("  " + body);
      continue;
    }
    if (findings > 3 || findings == 0) continue;
    std::smatch m;
    if (std::regex_search(body, m, at_re)) {
      keep.push_back("    at " + m[1].str() + " (" + m[2].str() + ")");
    } else if (body.rfind("by thread", 0) == 0 || body.rfind("Address", 0) == 0 ||
               body.rfind("Write Thread", 0) == 0 || body.rfind("Read Thread", 0) == 0) {
      keep.push_back("    " + body);
    }
  }
  if (findings > 3) keep.push_back("  (" + std::to_string(findings - 3) + " more findings)");
  std::string text;
  for (const auto& k : keep) text += k + "\n";
  return text;
}

}  // namespace

// A planner (planner.cpp) carries this marker; a self-contained runner (the calibration worker,
// the harness's self-test and fake workers) does not, and is run directly.
bool is_planner(const std::string& path) {
  static std::map<std::string, bool> known;
  const auto it = known.find(path);
  if (it != known.end()) return it->second;
  static const char marker[] = "labkit-planner-runtime/1:9f3c2e7a";
  bool found = false;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::string carry;
    char buf[1 << 16];
    size_t n = 0;
    while (!found && (n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
      carry.append(buf, n);
      found = carry.find(marker) != std::string::npos;
      if (carry.size() > sizeof(marker)) carry.erase(0, carry.size() - sizeof(marker));
    }
    std::fclose(f);
  }
  return known[path] = found;
}

void set_worker_options(const WorkerOptions& options) {
  g_options = options;
  g_options_set = true;
  g_options_executor_set = true;
}

const WorkerOptions& worker_options() {
  if (!g_options_set) {
    g_options.path = default_worker_path();
    g_options_set = true;
  }
  if (g_options.path.empty()) g_options.path = default_worker_path();
#ifdef LABKIT_NULL_WORKER
  if (g_options.null_path.empty()) g_options.null_path = LABKIT_NULL_WORKER;
#endif
#ifdef LABKIT_EXECUTOR
  if (!g_options_executor_set) {
    g_options.executor = LABKIT_EXECUTOR;
    g_options_executor_set = true;
  }
#endif
  return g_options;
}

size_t device_allocation_size(const void* ptr) {
  using Range = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static const Range range = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<Range>(fn);
  }();
  if (range == nullptr) return 0;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (range(&base, &size, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return 0;
  return reinterpret_cast<CUdeviceptr>(ptr) == base ? size : 0;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kLaunchError: return "launch_error";
    case Outcome::kRunError: return "run_error";
    case Outcome::kCaptureProblem: return "capture_problem";
    case Outcome::kCrashed: return "crashed";
    case Outcome::kTimeout: return "timeout";
    case Outcome::kProtocolError: return "protocol_error";
    case Outcome::kNoDevice: return "no_device";
    case Outcome::kRefused: return "refused";
    case Outcome::kHostCompute: return "host_compute";
  }
  return "?";
}

struct Worker::Impl {
  WorkerOptions options;
  pid_t pid = -1;
  int req_fd = -1, rep_fd = -1;
  int arena_fd = -1, log_fd = -1;
  char* arena = nullptr;
  uint64_t arena_size = 0;
  bool drop = ::geteuid() == 0;  // root: run the worker as nobody
  std::string sandbox_note;
  std::string device;
  std::vector<std::string> variants;
  std::string scratch;
  std::string start_error;
  // The worker is a planner run by the executor: the student's host code has no inputs to
  // compute on, so its CPU time says nothing (the allowance applies to self-contained runners).
  bool planned = false;

  struct Replay;
  Replay replay(const OpCall& call, uint32_t flags, bool needs_saved_plan,
                const std::function<std::vector<std::string>(const std::string&)>& tool_argv,
                double limit_ms, const std::vector<std::string>& executor_args = {},
                bool tool_home = false, bool outputs = false);

  explicit Impl(WorkerOptions o) : options(std::move(o)) {
    become_subreaper();
    arena_fd = ::memfd_create("labkit-arena", MFD_CLOEXEC);
    log_fd = ::memfd_create("labkit-worker-log", MFD_CLOEXEC);
    if (arena_fd < 0 || log_fd < 0) throw std::runtime_error(errno_text("memfd_create"));
    ::fcntl(log_fd, F_SETFL, O_APPEND);
    char tmpl[] = "/tmp/labkit-worker-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(errno_text("mkdtemp"));
    scratch = tmpl;
    ::chmod(scratch.c_str(), 0700);
    if (drop && ::chown(scratch.c_str(), kNobody, kNogroup) != 0) drop = false;
  }

  ~Impl() {
    stop();
    if (arena != nullptr) ::munmap(arena, arena_size);
    if (arena_fd >= 0) ::close(arena_fd);
    if (log_fd >= 0) ::close(log_fd);
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }

  void ensure_arena(uint64_t bytes) {
    bytes = std::max<uint64_t>(bytes, 4096);
    if (bytes <= arena_size) return;
    bytes = std::max(bytes, arena_size * 2);
    if (arena != nullptr) ::munmap(arena, arena_size);
    arena = nullptr;
    arena_size = 0;
    if (::ftruncate(arena_fd, static_cast<off_t>(bytes)) != 0) {
      throw std::runtime_error(errno_text("growing the arena"));
    }
    void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, arena_fd, 0);
    if (m == MAP_FAILED) throw std::runtime_error(errno_text("mapping the arena"));
    arena = static_cast<char*>(m);
    arena_size = bytes;
  }

  std::string read_log() {
    const off_t size = ::lseek(log_fd, 0, SEEK_END);
    if (size <= 0) return "";
    std::string text(static_cast<size_t>(std::min<off_t>(size, 1 << 20)), '\0');
    const ssize_t n = ::pread(log_fd, text.data(), text.size(), size - static_cast<off_t>(text.size()));
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return text;
  }
  void clear_log() { if (::ftruncate(log_fd, 0) != 0) {} }

  // kFlagKeepOnDevice: the last call's output buffers, mapped from the worker by CUDA IPC until
  // they are checked (release_kept: unmapped here, then a ping, at which the worker frees them).
  std::vector<char*> mapped;
  void unmap() {
    for (char* base : mapped) cudaIpcCloseMemHandle(base);
    mapped.clear();
  }

  void stop() {
    unmap();
    if (pid > 0) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, 0);
      g_live_workers.erase(pid);
      kill_strays();
    }
    pid = -1;
    if (req_fd >= 0) ::close(req_fd);
    if (rep_fd >= 0) ::close(rep_fd);
    req_fd = rep_fd = -1;
  }

  // Collects the dead (or killed) worker and says how it ended.
  std::string reap() {
    std::string how = "the worker process ended";
    if (pid > 0) {
      int status = 0;
      pid_t r = 0;
      for (int i = 0; i < 50 && (r = ::waitpid(pid, &status, WNOHANG)) == 0; ++i) ::usleep(20000);
      if (r == pid) {
        how = "the worker process " + describe_wait(status);
        g_live_workers.erase(pid);
        pid = -1;
        kill_strays();
        // The sandbox's own line names the call (the rest of the log is the student's).
        const std::string log = read_log();
        const size_t at = log.rfind("labkit-sandbox: system call ");
        if (how.find("sandbox") != std::string::npos && at != std::string::npos) {
          how += "\n  " + log.substr(at, log.find('\n', at) - at);
        }
      }
    }
    stop();
    return how;
  }

  bool start() {
    start_error.clear();
    planned = !options.executor.empty() && is_planner(options.path);
    const std::string& binary = planned ? options.executor : options.path;
    const int exe = ::open(binary.c_str(), O_RDONLY | O_CLOEXEC);
    if (exe < 0) {
      start_error = errno_text(("cannot open the worker " + binary).c_str());
      return false;
    }
    int req[2], rep[2];
    if (::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0) {
      ::close(exe);
      start_error = errno_text("pipe");
      return false;
    }
    clear_log();
    std::vector<int> fds = {-1, log_fd, log_fd, req[0], rep[1], arena_fd};
    std::vector<std::string> argv = {binary, "--serve"};
    if (planned) {
      // The executor runs the planner (the student's launcher) and what it plans.
      argv.insert(argv.end(), {"--planner", options.path});
      if (options.helpers) argv.push_back("--helpers");
      if (options.no_shared_memory) argv.push_back("--no-shared-memory");
    }
    pid = spawn(exe, argv, worker_environment(scratch), fds, drop, scratch);
    if (pid > 0) g_live_workers.insert(pid);
    ::close(exe);
    ::close(req[0]);
    ::close(rep[1]);
    req_fd = req[1];
    rep_fd = rep[0];
    if (pid < 0) {
      start_error = errno_text("fork");
      stop();
      return false;
    }
    return true;
  }

  // One request and its reply. Never throws for anything the worker does. `spin`: poll for the
  // reply without sleeping first (a timed call: the wake-up would be inside the window).
  Outcome transact(p::Request& req, p::Reply& reply, double timeout_s, std::string& message,
                   bool spin = false) {
    unmap();
    if (pid < 0 && !start_and_greet(message)) return Outcome::kNoDevice;
    req.magic = p::kMagic;
    req.arena_bytes = arena_size;
    req.nonce = fresh_nonce();
    clear_log();
    const double deadline = now_ms() + timeout_s * 1000.0;
    if (!write_full(req_fd, &req, sizeof(req))) {
      message = reap() + " before it took the request";
      return Outcome::kCrashed;
    }
    if (spin) spin_until_readable(rep_fd, std::min(0.05, timeout_s));
    const int got = read_until(rep_fd, &reply, sizeof(reply), deadline);
    if (got < 0) {
      stop();
      std::ostringstream os;
      os << "did not finish within " << timeout_s << " s and was killed";
      message = os.str();
      return Outcome::kTimeout;
    }
    if (got == 0) {
      message = reap();
      return Outcome::kCrashed;
    }
    if (reply.magic != p::kMagic || reply.status > static_cast<uint32_t>(p::Status::kOutOfMemory) ||
        reply.n_variants > static_cast<uint32_t>(p::kMaxVariants) || reply.failed_call >= req.calls) {
      stop();
      message = "the worker sent a reply that is not valid (was the output pipe written to?)";
      return Outcome::kProtocolError;
    }
    // One reply per request, to this request: a reply that does not echo its nonce was written
    // ahead of time or out of turn, and a second one already waiting was forged.
    // (POLLIN only: a worker that exits right after its reply, as after a fault, hangs up.)
    pollfd more{rep_fd, POLLIN, 0};
    const bool another = ::poll(&more, 1, 0) > 0 && (more.revents & POLLIN) != 0;
    if (reply.nonce != req.nonce || another) {
      stop();
      message = reply.nonce != req.nonce
                    ? "the worker sent a reply that does not answer this request (out of turn)"
                    : "the worker sent more than one reply to one request";
      return Outcome::kProtocolError;
    }
    reply.message[sizeof(reply.message) - 1] = '\0';
    reply.device[sizeof(reply.device) - 1] = '\0';
    for (auto& v : reply.variants) v[p::kNameLen - 1] = '\0';
    message = reply.message;
    switch (static_cast<p::Status>(reply.status)) {
      case p::Status::kOk: return Outcome::kOk;
      case p::Status::kLaunchError: return Outcome::kLaunchError;
      case p::Status::kRunError: reap(); return Outcome::kRunError;  // it exits: sticky error
      case p::Status::kCaptureProblem: return Outcome::kCaptureProblem;
      case p::Status::kNoDevice: return Outcome::kNoDevice;
      default: return Outcome::kRefused;
    }
  }

  bool start_and_greet(std::string& message) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (!start()) {
        message = start_error;
        return false;
      }
      p::Request hello;
      hello.op = static_cast<uint32_t>(p::Op::kHello);
      hello.magic = p::kMagic;
      hello.arena_bytes = arena_size;
      hello.nonce = fresh_nonce();
      p::Reply reply;
      const double deadline = now_ms() + 120000.0;
      const int got = write_full(req_fd, &hello, sizeof(hello))
                          ? read_until(rep_fd, &reply, sizeof(reply), deadline)
                          : 0;
      const bool confined = reply.confined == 1 || (reply.confined == 2 && survey_allowed());
      if (got == 1 && reply.magic == p::kMagic && reply.status == 0 && reply.nonce == hello.nonce &&
          confined && reply.n_variants <= static_cast<uint32_t>(p::kMaxVariants)) {
        reply.device[sizeof(reply.device) - 1] = '\0';
        device = reply.device;
        variants.clear();
        for (uint32_t i = 0; i < reply.n_variants; ++i) {
          reply.variants[i][p::kNameLen - 1] = '\0';
          variants.emplace_back(reply.variants[i]);
        }
        const std::string filter =
            reply.confined == 1 ? "seccomp" : "seccomp SURVEY mode (not confined: never grade with it)";
        if (drop) {
          sandbox_note = filter + ", uid 65534 (dropped from root)";
        } else if (sandbox_note.empty() || sandbox_note.rfind("same user", 0) == 0) {
          sandbox_note = filter + ", same user as the judge (not root)";
        } else if (sandbox_note.find(filter) == std::string::npos) {
          sandbox_note = filter + ", " + sandbox_note;
        }
        return true;
      }
      std::string why = got == 1 ? std::string(reply.message) : reap();
      if (got == 1 && reply.status == 0 && !confined) {
        why = "it did not confine itself (sandbox.hpp): a worker that is not confined runs no "
              "student code";
      } else if (got == 1 && reply.status == 0 && reply.nonce != hello.nonce) {
        why = "its reply did not answer the request";
      }
      const std::string log = tail_of(read_log(), 1500);
      stop();
      if (drop) {
        // The unprivileged user cannot use the GPU here: run as ourselves, and say so.
        drop = false;
        sandbox_note = "same user as the judge: as uid 65534 the worker could not start (" + why +
                       ")";
        continue;
      }
      message = "the worker could not start: " + why + (log.empty() ? "" : "\n" + log);
      return false;
    }
    return false;
  }

  // The arena layout of a call: inputs then outputs, each buffer `calls` times.
  void layout(const OpCall& call, p::Request& req, size_t calls, bool bench) {
    if (call.buffers.size() > static_cast<size_t>(p::kMaxBuffers) ||
        call.params.size() > static_cast<size_t>(p::kMaxParams) || calls < 1 ||
        calls > static_cast<size_t>(p::kMaxCalls) || call.variant.size() >= p::kNameLen) {
      throw std::invalid_argument("labkit::OpCall: too many buffers, parameters or calls");
    }
    std::snprintf(req.variant, sizeof(req.variant), "%s", call.variant.c_str());
    req.n_params = static_cast<uint32_t>(call.params.size());
    std::copy(call.params.begin(), call.params.end(), req.params);
    req.n_buffers = static_cast<uint32_t>(call.buffers.size());
    req.calls = static_cast<uint32_t>(calls);
    uint64_t cursor = 0;
    for (size_t b = 0; b < call.buffers.size(); ++b) {
      const BufferSpec& s = call.buffers[b];
      p::BufferDesc& d = req.buffers[b];
      d.role = static_cast<uint32_t>(s.role);
      d.elem_size = s.elem_size;
      d.count = s.count;
      d.source = static_cast<uint32_t>(s.source);
      d.lo = s.lo;
      d.hi = s.hi;
      d.seed = s.seed;
      d.offset = s.offset;
      const bool generated = s.source != p::Source::kArena;
      if (s.offset != 0 && (bench || s.offset % 4 != 0 || s.offset % s.elem_size != 0 ||
                            s.offset >= p::kMaxOffsetBytes)) {
        throw std::invalid_argument("labkit::OpCall: buffer " + s.name +
                                    " has an offset a correctness call cannot honour");
      }
      const uint64_t span = (s.bytes() * calls + 63) / 64 * 64;
      if (s.role != p::Role::kOutput && !generated) {
        d.in_offset = cursor;
        cursor += span;
      }
      if (s.role != p::Role::kInput) {
        d.out_offset = cursor;
        cursor += span;
      }
    }
    ensure_arena(cursor);
    for (size_t c = 0; c < calls && c < call.inputs.size(); ++c) {
      for (size_t b = 0; b < call.buffers.size(); ++b) {
        const BufferSpec& s = call.buffers[b];
        if (s.role == p::Role::kOutput) continue;
        if (s.source != p::Source::kArena) continue;  // drawn on the device
        const Bytes& data = call.inputs[c].at(b);
        if (data.size() != s.bytes()) {
          throw std::invalid_argument("labkit::OpCall: input " + s.name + " has the wrong size");
        }
        std::memcpy(arena + req.buffers[b].in_offset + c * s.bytes(), data.data(), data.size());
      }
    }
  }

};

Worker::Worker(WorkerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Worker::~Worker() = default;

OpResult Worker::run(const OpCall& call, double timeout_s) {
  OpResult first = run_once(call, timeout_s);
  if (first.outcome != Outcome::kHostCompute) return first;
  // CPU time also grows on a busy machine (copies and page faults slow down when other
  // gradings fill the memory bus), so one call over the allowance is not proof. Once more, in
  // a worker that shares nothing with this one: it cannot replay what this one computed, so
  // only a worker that computes on the CPU again is over twice.
  // (The old worker is stopped here, before the fresh one starts, in run_once.)
  impl_ = std::make_unique<Impl>(impl_->options);
  OpResult again = run_once(call, timeout_s);
  if (again.outcome == Outcome::kHostCompute) {
    again.message += " (over twice: the first attempt, in another worker, used " +
                     std::to_string(static_cast<long>(first.worker_cpu_ms)) + " ms)";
  }
  return again;
}

OpResult Worker::run_once(const OpCall& call, double timeout_s) {
  OpResult result;
  p::Request req;
  req.op = static_cast<uint32_t>(p::Op::kRun);
  req.flags = call.capture ? static_cast<uint32_t>(p::kFlagCapture) : 0u;
  const size_t calls = std::max<size_t>(call.inputs.size(), 1);
  if (call.keep_on_device) {
    if (calls != 1 || call.capture) {
      throw std::invalid_argument("labkit::OpCall: outputs kept on the device: one call, not captured");
    }
    req.flags |= p::kFlagKeepOnDevice;
  }
  impl_->layout(call, req, calls, false);
  p::Reply reply;
  if (impl_->pid < 0 && !impl_->start_and_greet(result.message)) {
    result.outcome = Outcome::kNoDevice;
    return result;
  }
  const pid_t pid = impl_->pid;
  const CpuUse cpu_before = cpu_use(pid);
  const double t_call = now_ms();
  const double per_call = timeout_s > 0 ? std::min(timeout_s, impl_->options.call_timeout_s)
                                        : impl_->options.call_timeout_s;
  result.outcome = impl_->transact(req, reply, per_call * calls, result.message);
  const double call_ms = now_ms() - t_call;
  const CpuUse cpu = cpu_use(pid).since(cpu_before);
  result.worker_cpu_ms = cpu.total_ms();
  result.log = tail_of(impl_->read_log(), 2000);
  uint64_t bytes = 0;  // what the worker copies: arena inputs in, outputs out
  for (const BufferSpec& b : call.buffers) {
    if (b.role != p::Role::kOutput && b.source == p::Source::kArena) bytes += b.bytes() * calls;
    if (b.role != p::Role::kInput && !call.keep_on_device) bytes += b.bytes() * calls;
  }
  const double allowed = host_cpu_allowance_ms(bytes);
  // Calibration of the allowance (docs/threat-model.md): LABKIT_CPU_LOG=1 on a test program
  // prints every call's worker CPU time; the grader's scrubbed environment never sets it.
  static const bool log_cpu = std::getenv("LABKIT_CPU_LOG") != nullptr;
  if (log_cpu) {
    std::printf("labkit-cpu: %.1f ms of %.0f allowed (user %.1f, system %.1f, %.0f minor faults), "
                "%llu bytes, %zu calls, %s; the call took %.1f ms\n",
                result.worker_cpu_ms, allowed, cpu.user_ms, cpu.sys_ms, cpu.minor_faults,
                static_cast<unsigned long long>(bytes), calls,
                result.outcome == Outcome::kOk ? "ok" : "not ok", call_ms);
    std::fflush(stdout);
  }
  if (result.outcome == Outcome::kOk && !impl_->planned && result.worker_cpu_ms > allowed) {
    std::ostringstream os;
    os << "the worker used " << static_cast<long>(result.worker_cpu_ms)
       << " ms of CPU time during this call (user " << static_cast<long>(cpu.user_ms)
       << " ms, system " << static_cast<long>(cpu.sys_ms) << " ms, "
       << static_cast<long>(cpu.minor_faults) << " page faults; the call took "
       << static_cast<long>(call_ms) << " ms; moving its data and launching need at most "
       << static_cast<long>(allowed)
       << " ms): the launcher must only put work on the GPU; computing on the CPU is not "
          "allowed, and a lab with such a call earns no correctness points";
    result.outcome = Outcome::kHostCompute;
    result.message = os.str();
    return result;
  }
  result.cuda_error = reply.cuda_error;
  result.failed_call = static_cast<int>(reply.failed_call);
  if (result.outcome == Outcome::kCrashed || result.outcome == Outcome::kTimeout ||
      result.outcome == Outcome::kProtocolError || result.outcome == Outcome::kNoDevice) {
    return result;
  }
  result.guards.assign(reply.guards, reply.guards + call.buffers.size());
  result.inputs_changed = reply.inputs_changed;
  if (result.outcome != Outcome::kOk) return result;
  if (call.keep_on_device) {
    // Mapped here and checked for size: the handles are the worker's word, the sizes are not.
    result.device_outputs.assign(call.buffers.size(), nullptr);
    for (size_t b = 0; b < call.buffers.size(); ++b) {
      const BufferSpec& s = call.buffers[b];
      if (s.role == p::Role::kInput) continue;
      cudaIpcMemHandle_t handle;
      std::memcpy(&handle, reply.ipc_handles[b], sizeof(handle));
      void* base = nullptr;
      if (cudaIpcOpenMemHandle(&base, handle, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
        cudaGetLastError();
        result.outcome = Outcome::kProtocolError;
        result.message = "the worker handed over an output the judge cannot map (" + s.name + ")";
        return result;
      }
      impl_->mapped.push_back(static_cast<char*>(base));
      const uint64_t lead = s.offset / 4 * 4;
      if (device_allocation_size(base) < (s.bytes() + 3) / 4 * 4 + 2 * p::kGuardBytes + lead) {
        result.outcome = Outcome::kProtocolError;
        result.message = "the worker handed over an output smaller than asked for (" + s.name + ")";
        return result;
      }
      result.device_outputs[b] = static_cast<char*>(base) + p::kGuardBytes + lead;
    }
    return result;
  }
  const double t_copy = now_ms();
  result.outputs.assign(calls, std::vector<Bytes>(call.buffers.size()));
  for (size_t c = 0; c < calls; ++c) {
    for (size_t b = 0; b < call.buffers.size(); ++b) {
      const BufferSpec& s = call.buffers[b];
      if (s.role == p::Role::kInput) continue;
      const char* at = impl_->arena + req.buffers[b].out_offset + c * s.bytes();
      result.outputs[c][b].assign(at, at + s.bytes());
    }
  }
  if (log_cpu) {
    std::printf("labkit-cpu: the outputs' copy took %.1f ms\n", now_ms() - t_copy);
    std::fflush(stdout);
  }
  return result;
}

OpResult Worker::bench_setup(const OpCall& call, std::vector<SharedBuffer>* buffers) {
  OpResult result;
  p::Request req;
  req.op = static_cast<uint32_t>(p::Op::kBenchSetup);
  OpCall shape = call;
  shape.inputs.clear();  // the data goes into the shared buffers, not through the arena
  impl_->layout(shape, req, 1, true);
  p::Reply reply;
  result.outcome = impl_->transact(req, reply, impl_->options.call_timeout_s, result.message);
  result.log = tail_of(impl_->read_log(), 2000);
  buffers->assign(call.buffers.size(), SharedBuffer{});
  for (size_t b = 0; b < call.buffers.size() && result.ok(); ++b) {
    std::memcpy((*buffers)[b].handle.data(), reply.ipc_handles[b], p::kIpcHandleBytes);
  }
  return result;
}

void Worker::release_kept() {
  if (impl_->mapped.empty()) return;
  impl_->unmap();
  if (impl_->pid < 0) return;
  p::Request ping;
  ping.op = static_cast<uint32_t>(p::Op::kPing);
  p::Reply pong;
  std::string message;
  (void)impl_->transact(ping, pong, impl_->options.call_timeout_s, message);
}

TimedCall Worker::bench_timed(const std::function<void()>& open, const std::function<void()>& close) {
  TimedCall t;
  // Off the clock: wake the worker, so it polls its pipe when the timed request comes.
  p::Request ping;
  ping.op = static_cast<uint32_t>(p::Op::kPing);
  p::Reply pong;
  t.outcome = impl_->transact(ping, pong, impl_->options.call_timeout_s, t.message);
  if (t.outcome != Outcome::kOk) return t;
  // Still off the clock: one empty kernel of the judge's own, run to completion. The executor
  // loaded a fresh copy of the student's device code at the ping, and the first GPU work of
  // another context after that pays for it (about 0.13 ms on an H200): here, not in the window.
  // The calibration worker's calls do the same, so the two windows stay alike.
  launch_empty_kernel(nullptr);
  cudaDeviceSynchronize();
  p::Request req;
  req.op = static_cast<uint32_t>(p::Op::kBenchTimed);
  p::Reply reply;
  const double t0 = now_ms();
  open();
  t.outcome = impl_->transact(req, reply, impl_->options.call_timeout_s, t.message, true);
  if (t.outcome == Outcome::kOk) close();
  t.judge_ms = now_ms() - t0;
  if (t.outcome == Outcome::kOk) {
    if (!std::isfinite(reply.event_ms) || reply.event_ms < 0) {
      t.outcome = Outcome::kProtocolError;
      t.message = "the worker reported an impossible time";
    }
    t.event_ms = reply.event_ms;
  }
  return t;
}

// A replay of `call` in a fresh executor under a tool (compute-sanitizer, ncu): a private
// folder the unprivileged worker can read holds a copy of the worker (the executor), of the
// planner, the request with its inputs and, for a planned call, the plan the executor kept of the
// graded call (the replay runs that plan and never asks a planner, so nothing the student's
// host code knows can make the checked or profiled run differ from the graded one). The tool
// writes its report to a file of its own; the replayed process writes only to a memfd.
struct Worker::Impl::Replay {
  bool started = false;     // the tool was started
  bool finished = false;    // it ended before the deadline (`status` is its wait status)
  int status = 0;
  bool saved_plan = false;  // the graded call's plan was replayed
  std::string report;       // the tool's report file
  std::string app;          // what the replayed process printed (at most 1 MiB)
  // With `outputs`: the replayed call's output buffers ([buffer]; empty for the others), and
  // whether the replayed process wrote all of them.
  std::vector<Bytes> outputs;
  bool outputs_complete = false;
};

Worker::Impl::Replay Worker::Impl::replay(
    const OpCall& call, uint32_t flags, bool needs_saved_plan,
    const std::function<std::vector<std::string>(const std::string&)>& tool_argv,
    double limit_ms, const std::vector<std::string>& executor_args, bool tool_home,
    bool outputs) {
  Replay out;
  char tmpl[] = "/tmp/labkit-replay-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return out;
  const fs::path dir = tmpl;
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  // Readable by the (possibly unprivileged) worker, writable by the judge alone.
  ::chmod(dir.c_str(), 0755);
  std::error_code ec;
  const bool is_planned = !options.executor.empty() && is_planner(options.path);
  fs::copy_file(is_planned ? options.executor : options.path, dir / "worker", ec);
  if (ec) return out;
  ::chmod((dir / "worker").c_str(), 0755);
  if (is_planned) {
    fs::copy_file(options.path, dir / "planner", ec);
    if (ec) return out;
    ::chmod((dir / "planner").c_str(), 0755);
  }
  p::Request req;
  req.op = static_cast<uint32_t>(p::Op::kRun);
  req.flags = flags;
  const size_t calls = std::max<size_t>(call.inputs.size(), 1);
  layout(call, req, calls, false);
  req.magic = p::kMagic;
  // Only the part of the arena this call uses: the arena keeps the size of the largest call so
  // far (gigabytes after a test past 2^31 elements), and writing all of it took seconds.
  uint64_t used = 0;
  for (uint32_t b = 0; b < req.n_buffers; ++b) {
    const p::BufferDesc& d = req.buffers[b];
    const uint64_t span = p::buffer_bytes(d) * req.calls;
    if (d.source == static_cast<uint32_t>(p::Source::kArena) && p::is_input(d.role)) {
      used = std::max(used, d.in_offset + span);
    }
    if (p::is_output(d.role)) used = std::max(used, d.out_offset + span);
  }
  req.arena_bytes = std::min<uint64_t>(used, arena_size);
  {
    FILE* f = std::fopen((dir / "request").c_str(), "wb");
    if (f == nullptr) return out;
    const bool ok = std::fwrite(&req, sizeof(req), 1, f) == 1 &&
                    (req.arena_bytes == 0 || std::fwrite(arena, req.arena_bytes, 1, f) == 1);
    std::fclose(f);
    if (!ok) return out;
  }
  ::chmod((dir / "request").c_str(), 0644);
  if (is_planned && req.calls == 1 && pid > 0) {
    p::Request ask;
    ask.op = static_cast<uint32_t>(p::Op::kPlanOf);
    ask.calls = 1;
    p::Reply got;
    std::string why;
    // Room for the largest plan a planner may send (plan.hpp: one message), so that no plan a
    // launcher makes can be too large to keep.
    ensure_arena(sizeof(labkit::plan::SavedPlan) + labkit::plan::kMaxPayload);
    if (transact(ask, got, options.call_timeout_s, why) == Outcome::kOk) {
      labkit::plan::SavedPlan sp;
      std::memcpy(&sp, arena, sizeof(sp));
      if (sp.magic == labkit::plan::kSavedMagic && sp.bytes <= arena_size - sizeof(sp)) {
        FILE* f = std::fopen((dir / "plan").c_str(), "wb");
        if (f != nullptr) {
          out.saved_plan = std::fwrite(arena, sizeof(sp) + sp.bytes, 1, f) == 1;
          out.saved_plan = std::fclose(f) == 0 && out.saved_plan;
          ::chmod((dir / "plan").c_str(), 0644);
        }
      }
    }
  }
  // A replay without the graded plan would ask a fresh planner, whose host code can tell it
  // apart from the one that planned the graded call.
  if (is_planned && needs_saved_plan && !out.saved_plan) return out;
  const int log = ::memfd_create("labkit-replay-log", MFD_CLOEXEC);
  if (log < 0) return out;
  const fs::path report = dir / "tool-report.txt";
  {
    // The tool's front end (not confined, the worker's user) writes it: made for that user.
    const int fd = ::open(report.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
      ::close(log);
      return out;
    }
    if (drop && ::fchown(fd, kNobody, kNogroup) != 0) {}
    ::close(fd);
  }
  const fs::path outputs_file = dir / "request.outputs";  // the worker's replay() writes it
  if (outputs) {
    // Sized here (the judge has no file-size limit): the outputs, then 8 bytes for the mark the
    // replay writes last (protocol::kOutputsDone).
    uint64_t total = 8;
    for (uint32_t b = 0; b < req.n_buffers; ++b) {
      if (req.buffers[b].role == static_cast<uint32_t>(p::Role::kOutput)) {
        total += p::buffer_bytes(req.buffers[b]);
      }
    }
    const int fd = ::open(outputs_file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(total)) != 0) {
      if (fd >= 0) ::close(fd);
      ::close(log);
      return out;
    }
    if (drop && ::fchown(fd, kNobody, kNogroup) != 0) {}
    ::close(fd);
  }
  std::vector<std::string> argv = tool_argv(report.string());
  argv.insert(argv.end(), {(dir / "worker").string(), "--replay", (dir / "request").string()});
  if (is_planned) {
    argv.insert(argv.end(), {"--planner", (dir / "planner").string()});
    if (out.saved_plan) argv.insert(argv.end(), {"--plan", (dir / "plan").string()});
    if (options.helpers) argv.push_back("--helpers");
    if (options.no_shared_memory) argv.push_back("--no-shared-memory");
    argv.insert(argv.end(), executor_args.begin(), executor_args.end());
  }
  std::vector<std::string> env = worker_environment(dir.string());
  if (tool_home) {
    // A folder the tool may write (ncu keeps its temporary report and its section files
    // there; in the shared /tmp, another grading's file of the same name stopped it), this
    // replay's own.
    const fs::path home = dir / "tool";
    if (::mkdir(home.c_str(), 0700) != 0) {
      ::close(log);
      return out;
    }
    if (drop && ::chown(home.c_str(), kNobody, kNogroup) != 0) {
      ::close(log);
      return out;
    }
    for (std::string& e : env) {
      if (e.rfind("HOME=", 0) == 0) e = "HOME=" + home.string();
    }
    env.push_back("TMPDIR=" + home.string());
  }
  const pid_t tool = spawn(-1, argv, env, {-1, log, log}, drop, scratch);
  if (tool > 0) {
    out.started = true;
    g_live_workers.insert(tool);
    const double deadline = now_ms() + limit_ms;
    pid_t r = 0;
    while ((r = ::waitpid(tool, &out.status, WNOHANG)) == 0 && now_ms() < deadline) ::usleep(20000);
    if (r != tool) {
      ::kill(-tool, SIGKILL);
      ::waitpid(tool, &out.status, 0);
    }
    out.finished = r == tool;
    ::kill(-tool, SIGKILL);  // whatever the tool's worker left in its process group
    g_live_workers.erase(tool);
    kill_strays();
    if (out.finished) {
      const off_t size = ::lseek(log, 0, SEEK_END);
      out.app.assign(static_cast<size_t>(std::max<off_t>(std::min<off_t>(size, 1 << 20), 0)), '\0');
      if (size > 0 && ::pread(log, out.app.data(), out.app.size(), 0) < 0) out.app.clear();
      std::ifstream in(report, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out.report = ss.str();
      if (outputs) {
        std::ifstream got(outputs_file, std::ios::binary);
        out.outputs.resize(req.n_buffers);
        out.outputs_complete = static_cast<bool>(got);
        for (uint32_t b = 0; b < req.n_buffers && out.outputs_complete; ++b) {
          const p::BufferDesc& d = req.buffers[b];
          if (d.role != static_cast<uint32_t>(p::Role::kOutput)) continue;
          out.outputs[b].resize(p::buffer_bytes(d));
          got.read(reinterpret_cast<char*>(out.outputs[b].data()),
                   static_cast<std::streamsize>(out.outputs[b].size()));
          out.outputs_complete = got.gcount() == static_cast<std::streamsize>(out.outputs[b].size());
        }
        uint64_t done = 0;
        if (out.outputs_complete) {
          got.read(reinterpret_cast<char*>(&done), sizeof(done));
          out.outputs_complete = got.gcount() == sizeof(done) && done == p::kOutputsDone &&
                                 got.peek() == EOF;  // the mark, and nothing more
        }
      }
    }
  }
  ::close(log);
  return out;
}

std::vector<std::string> sanitizer_argv(const std::string& sanitizer, const std::string& tool,
                                        const std::string& report) {
  std::vector<std::string> argv{sanitizer, "--tool", tool, "--print-limit", "10",
                                "--error-exitcode", "86", "--show-backtrace", "device",
                                "--report-api-errors", "no", "--log-file", report};
  if (tool == "racecheck") {
    argv.insert(argv.end(), {"--kernel-name-exclude", std::string("regex=") + kScrubKernels});
  }
  return argv;
}

std::string Worker::sanitize(const OpCall& call, const std::string& tool, bool* clean,
                             double max_s) {
  if (clean != nullptr) *clean = false;
  const std::string sanitizer = impl_->options.sanitizer;
  if (sanitizer.empty()) return "";
  uint32_t flags = call.capture ? static_cast<uint32_t>(p::kFlagCapture) : 0u;
  if (tool == "memcheck") flags |= p::kFlagExactBuffers;
  double limit_ms = tool == "racecheck" ? 300000.0 : 180000.0;
  if (max_s > 0) limit_ms = std::min(limit_ms, max_s * 1000.0);
  // No API errors: the replayed process's CUDA calls are the executor's own (the student's host
  // code plans without a driver), and its snapshot of the device's attributes asks for ids the
  // device does not have; reported, they filled the printed findings (238 of them on an H200)
  // and hid the kernel's own invalid access.
  const Impl::Replay r = impl_->replay(
      call, flags, tool == "racecheck",
      [&](const std::string& report) { return sanitizer_argv(sanitizer, tool, report); },
      limit_ms);
  const bool planned = !impl_->options.executor.empty() && is_planner(impl_->options.path);
  if (planned && tool == "racecheck" && !r.saved_plan) {
    // A replay without the graded plan would ask a fresh planner: never a clean verdict.
    return std::string(kRaceReplayWithoutPlan);
  }
  if (!r.started) return "";
  if (!r.finished) return std::string(kSanitizerTimedOut);
  std::string out = summarize_sanitizer(r.report);
  const bool exited = WIFEXITED(r.status);
  if (clean != nullptr) {
    // Clean: the call itself completed (the replay exits 0 only then) and the tool found
    // nothing. A crash under the tool is not a clean run.
    *clean = exited && WEXITSTATUS(r.status) == 0 &&
             (r.report.find("ERROR SUMMARY: 0 errors") != std::string::npos ||
              r.report.find("RACECHECK SUMMARY: 0 hazards") != std::string::npos);
  }
  if (out.empty() && exited && WEXITSTATUS(r.status) == 86) out = "  errors reported\n";
  // The replayed worker is confined too: say so when the sandbox stopped it.
  const size_t stopped = r.app.find("labkit-sandbox: system call ");
  if (stopped != std::string::npos) {
    out += "  (the replay " + r.app.substr(stopped, r.app.find('\n', stopped) - stopped) + ")\n";
  } else if (!(exited && (WEXITSTATUS(r.status) == 0 || WEXITSTATUS(r.status) == 86))) {
    out += "  (the replay " + describe_wait(r.status) + ")\n";
  }
  if (out.empty() && !(exited && WEXITSTATUS(r.status) == 0)) {
    out = "  (compute-sanitizer " + tool + " " + describe_wait(r.status) + " without a report:\n" +
          tail_of(r.report + r.app, 1500) + ")\n";
  }
  return out;
}

namespace {

// The metrics and what each adds to a Profile.
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
constexpr const char* kLdSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kLdRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
constexpr const char* kStSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
constexpr const char* kStRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
// Value-returning global atomics (ATOMG): a kernel can read through them (atomicOr(p, 0)) as
// well as through loads, so the worst sector use of reading counts them too.
constexpr const char* kAtomSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum";
constexpr const char* kAtomRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum";
constexpr const char* kSharedLdConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
constexpr const char* kSharedStConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr const char* kDuration = "gpu__time_duration.sum";
constexpr const char* kRegisters = "launch__registers_per_thread";
// Of each 32-byte sector a global load or store moved, the share the warp asked for (100%:
// coalesced).
constexpr const char* kLdUse = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
constexpr const char* kStUse = "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct";

// One CSV line's fields ("a","b,c",...; "" inside a field is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  out.push_back(field);
  return out;
}

// "3,328" or "1.5e+06" -> the number; false for "n/a" and anything else.
bool csv_number(std::string text, double& value) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end != nullptr && *end == '\0' && std::isfinite(value);
}

}  // namespace

std::string profile_metrics() {
  std::string out;
  for (const char* m : {kDramRead, kDramWrite, kLdSectors, kLdRequests, kStSectors, kStRequests,
                        kSharedLdConflicts, kSharedStConflicts, kOccupancy, kDuration,
                        kRegisters, kLdUse, kStUse, kAtomSectors, kAtomRequests}) {
    out += (out.empty() ? "" : ",") + std::string(m);
  }
  return out;
}

Profile parse_profile(const std::string& report) {
  Profile out;
  std::istringstream in(report);
  std::string line;
  std::vector<std::string> header;
  int id_col = -1, name_col = -1, value_col = -1, kernel_col = -1;
  std::map<std::string, std::map<std::string, double>> kernels;  // ID -> metric -> value
  std::map<std::string, bool> own;  // IDs of the executor's kernels that have a counter
  std::string first_error;
  bool no_permission = false;
  while (std::getline(in, line)) {
    if (line.rfind("==ERROR==", 0) == 0 && first_error.empty()) first_error = line.substr(10);
    // ncu's own line, never a kernel's name (a kernel may be named anything, and ncu quotes
    // names in its other error lines).
    if (line.rfind("==ERROR== ERR_NVGPUCTRPERM", 0) == 0) no_permission = true;
    if (line.empty() || line[0] != '"') continue;
    std::vector<std::string> fields = csv_fields(line);
    if (header.empty()) {
      header = fields;
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] == "ID") id_col = static_cast<int>(i);
        if (header[i] == "Metric Name") name_col = static_cast<int>(i);
        if (header[i] == "Metric Value") value_col = static_cast<int>(i);
        if (header[i] == "Kernel Name") kernel_col = static_cast<int>(i);
      }
      if (id_col < 0 || name_col < 0 || value_col < 0 || kernel_col < 0) header.clear();
      continue;
    }
    if (fields.size() != header.size()) continue;
    // The executor's own kernels (its fills of generated inputs and scrubs, in namespace labkit,
    // where the policy lets no student define anything) are not the call's work. ncu is asked
    // for mangled names (_ZN6labkit...: the function's own scope, whatever its template
    // arguments or return type); a demangled name (labkit::..., after a template's return
    // type) is read too.
    std::string kernel = fields[static_cast<size_t>(kernel_col)];
    if (kernel.rfind("void ", 0) == 0) kernel.erase(0, 5);
    double v = 0;
    const bool number = csv_number(fields[static_cast<size_t>(value_col)], v);
    if (kernel.rfind("_ZN6labkit", 0) == 0 || kernel.rfind("labkit::", 0) == 0) {
      if (number) own[fields[static_cast<size_t>(id_col)]] = true;
      continue;
    }
    if (!number) continue;
    kernels[fields[static_cast<size_t>(id_col)]][fields[static_cast<size_t>(name_col)]] = v;
  }
  out.own_kernels = static_cast<int>(own.size());
  if (no_permission) {
    out.status = ProfileStatus::kNoPermission;
    out.why = "this machine opens the GPU's performance counters to administrators only "
              "(ERR_NVGPUCTRPERM)";
    return out;
  }
  if (kernels.empty()) {
    out.status = first_error.empty() ? ProfileStatus::kNoKernels : ProfileStatus::kToolFailed;
    out.why = first_error.empty() ? "the profiler measured no kernel of the call"
                                  : "the profiler failed: " + first_error;
    return out;
  }
  double weighted = 0, timed = 0, ld_use = 0, st_use = 0;
  double ld_worst = -1, st_worst = -1;  // -1: no kernel large enough
  double ld_any = -1, st_any = -1;      // the same over every kernel that moved a sector
  for (const auto& [id, m] : kernels) {
    auto get = [&m = m](const char* name) {
      const auto it = m.find(name);
      return it == m.end() ? 0.0 : it->second;
    };
    ++out.kernels;
    out.dram_read_bytes += get(kDramRead);
    out.dram_write_bytes += get(kDramWrite);
    out.ld_sectors += get(kLdSectors);
    out.ld_requests += get(kLdRequests);
    out.st_sectors += get(kStSectors);
    out.st_requests += get(kStRequests);
    out.shared_bank_conflicts += get(kSharedLdConflicts) + get(kSharedStConflicts);
    const double ns = get(kDuration);
    out.gpu_ns += ns;
    weighted += get(kOccupancy) * ns;
    timed += ns;
    out.registers = std::max(out.registers, get(kRegisters));
    ld_use += get(kLdUse) * get(kLdSectors);
    st_use += get(kStUse) * get(kStSectors);
    out.atom_sectors += get(kAtomSectors);
    // What the kernel read: its loads, and its value-returning atomics, whose share of each
    // sector is counted as 4-byte lanes of full warps (4 sectors a request when coalesced, 32
    // when every lane hits a sector of its own).
    const double atom_sectors = get(kAtomSectors);
    const double atom_use =
        atom_sectors > 0 ? std::min(100.0, 400.0 * get(kAtomRequests) / atom_sectors) : 0.0;
    const double read_sectors = get(kLdSectors) + atom_sectors;
    const double read_use =
        read_sectors > 0 ? (get(kLdUse) * get(kLdSectors) + atom_use * atom_sectors) / read_sectors
                         : 0.0;
    if (read_sectors > 0) ld_any = ld_any < 0 ? read_use : std::min(ld_any, read_use);
    if (get(kStSectors) > 0) st_any = st_any < 0 ? get(kStUse) : std::min(st_any, get(kStUse));
    if (read_sectors >= kSectorUseFloorSectors) {
      ld_worst = ld_worst < 0 ? read_use : std::min(ld_worst, read_use);
    }
    if (get(kStSectors) >= kSectorUseFloorSectors) {
      st_worst = st_worst < 0 ? get(kStUse) : std::min(st_worst, get(kStUse));
    }
  }
  out.occupancy_pct = timed > 0 ? weighted / timed : 0;
  out.ld_sector_use_pct = out.ld_sectors > 0 ? ld_use / out.ld_sectors : 0;
  out.st_sector_use_pct = out.st_sectors > 0 ? st_use / out.st_sectors : 0;
  out.ld_sector_use_worst_pct = ld_worst >= 0 ? ld_worst : std::max(ld_any, 0.0);
  out.st_sector_use_worst_pct = st_worst >= 0 ? st_worst : std::max(st_any, 0.0);
  out.status = ProfileStatus::kOk;
  return out;
}

bool profile_wanted(const WorkerOptions& options, const std::string& name) {
  if (options.profiler.empty()) return false;
  if (options.profile_only.empty()) return true;
  for (const std::string& only : options.profile_only) {
    if (name == only || (name.size() > only.size() && name.compare(0, only.size(), only) == 0 &&
                         name[only.size()] == '/')) {
      return true;
    }
  }
  return false;
}

Profile Worker::profile(const OpCall& call, double max_s) {
  Profile out;
  const std::string ncu = impl_->options.profiler;
  if (ncu.empty()) {
    out.status = ProfileStatus::kNotAsked;
    return out;
  }
  uint32_t flags = call.capture ? static_cast<uint32_t>(p::kFlagCapture) : 0u;
  const double limit_ms = (max_s > 0 ? std::min(max_s, 120.0) : 120.0) * 1000.0;
  // Only the executor is profiled (application-only: never the planner, the student's host
  // code); each kernel is replayed by ncu once per pass with its memory restored, so the
  // counters are those of the one call, and the call's output is not what is graded.
  const Impl::Replay r = impl_->replay(
      call, flags, true,
      [&](const std::string& report) {
        return std::vector<std::string>{ncu, "--csv", "--print-units", "base",
                                        "--print-kernel-base", "mangled",
                                        "--target-processes", "application-only",
                                        "--profile-from-start", "off",
                                        "--metrics", profile_metrics(), "--log-file", report};
      },
      limit_ms, {"--profile"}, true, true);
  if (!r.started) {
    out.status = ProfileStatus::kToolFailed;
    out.why = "the profiler could not be started";
  } else if (!r.finished) {
    out.status = ProfileStatus::kTimedOut;
    out.why = "the profiler did not finish within " + std::to_string(static_cast<int>(limit_ms / 1000)) + " s";
  } else {
    // The report only: the replayed process (the student's device code's printf) writes to
    // another file, so nothing it prints can pass for a counter.
    out = parse_profile(r.report);
    if (out.status == ProfileStatus::kOk &&
        !(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)) {
      out.status = ProfileStatus::kToolFailed;
      out.why = "the profiled replay " + describe_wait(r.status);
    } else if (out.status == ProfileStatus::kOk && !r.outputs_complete) {
      out.status = ProfileStatus::kToolFailed;
      out.why = "the profiled call returned no output";
    } else if (out.status == ProfileStatus::kOk) {
      out.outputs = r.outputs;
    }
  }
  // Where the replayed executor's sandbox stopped it (the tool's code runs inside it): said,
  // for whoever reads the bench judge's output. Never read as a counter.
  const size_t stopped = r.app.find("labkit-sandbox: system call ");
  if (out.status != ProfileStatus::kOk && stopped != std::string::npos) {
    out.why += " (the replay " + r.app.substr(stopped, r.app.find('\n', stopped) - stopped) + ")";
  }
  return out;
}

std::string Worker::sandbox() {
  std::string message;
  if (impl_->pid < 0) impl_->start_and_greet(message);
  return impl_->sandbox_note;
}

std::string Worker::device() {
  std::string message;
  if (impl_->pid < 0) impl_->start_and_greet(message);
  return impl_->device;
}

std::vector<std::string> Worker::variants() {
  std::string message;
  if (impl_->pid < 0) impl_->start_and_greet(message);
  return impl_->variants;
}

Worker& shared_worker() {
  static Worker worker(worker_options());
  return worker;
}

const std::string& worker_path_for(const WorkerOptions& options, const std::string& variant) {
  const auto found = options.variant_paths.find(variant);
  return found != options.variant_paths.end() ? found->second : options.path;
}

Worker& worker_for(const std::string& variant) {
  const WorkerOptions& options = worker_options();
  const std::string& path = worker_path_for(options, variant);
  if (path == options.path) return shared_worker();
  // One per binary (two variants may share one), alive until the judge exits, like the shared one.
  static std::map<std::string, std::unique_ptr<Worker>> workers;
  std::unique_ptr<Worker>& w = workers[path];
  if (!w) {
    WorkerOptions o = options;
    o.path = path;
    o.variant_paths.clear();
    o.helpers = true;  // the variants routed here are the ones the lab gives its helpers
    w = std::make_unique<Worker>(o);
  }
  return *w;
}

double host_cpu_allowance_ms(uint64_t bytes) {
  // Calibrated on the reference solutions' correctness calls on an H100 (LABKIT_CPU_LOG=1, every
  // lab, the hidden tests included; /proc counts in 10 ms ticks): at most 90 ms for the
  // launcher, module loading on a variant's first call, allocation and a blocking wait (the
  // worker sleeps on the GPU), and at most 1.3 ms per MiB copied through the arena (1420 ms for
  // 1088 MiB, lab 05's 2^28-element calls; 1520 ms for 2080 MiB, lab 06's 2^26 rows). Three
  // times the fixed part and 2.3 times the per-MiB part leave room for a slower CPU or a busy
  // memory bus; one core of CPU arithmetic on a test's data is far above.
  return 300.0 + 3.0 * static_cast<double>(bytes) / (1 << 20);
}

int kill_strays() {
  int killed = 0;
  const pid_t self = ::getpid();
  // A stray's own children are reparented here once it dies: go round until none is left.
  for (int round = 0; round < 20; ++round) {
    std::vector<pid_t> strays;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      FILE* f = std::fopen((entry.path() / "stat").c_str(), "r");
      if (f == nullptr) continue;
      char buf[512] = {};
      const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
      std::fclose(f);
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so from the last ')'.
      const char* close = std::strrchr(buf, ')');
      if (n == 0 || close == nullptr) continue;
      char state = 0;
      long ppid = 0;
      if (std::sscanf(close + 1, " %c %ld", &state, &ppid) != 2 || ppid != self) continue;
      const pid_t pid = static_cast<pid_t>(std::atol(name.c_str()));
      // This process starts nothing but its workers (and their compute-sanitizer), so every
      // other child is something a worker left behind.
      if (g_live_workers.count(pid) == 0) strays.push_back(pid);
    }
    if (strays.empty()) break;
    for (pid_t pid : strays) {
      ::kill(pid, SIGKILL);
      int status = 0;
      if (::waitpid(pid, &status, 0) == pid) ++killed;
    }
  }
  return killed;
}

}  // namespace labkit
