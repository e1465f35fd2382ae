#include "labkit/check.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "labkit/cuda_check.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

std::string g_failure_kind = "failed";
int g_sanitizer_budget = 2;  // memcheck re-runs per judge process: each costs seconds
bool g_some_check_passed = false;

std::string call_label(const CheckSpec& spec, int c) {
  std::ostringstream os;
  os << spec.what;
  const size_t calls = spec.call.inputs.size();
  if (calls > 1) os << " (call " << c + 1 << " of " << calls << ", fresh inputs each)";
  return os.str();
}

std::string indent(const std::string& text, const std::string& prefix = "  ") {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += prefix + line + "\n";
  return out;
}

uint64_t call_bytes(const OpCall& call) {
  uint64_t bytes = 0;
  for (const BufferSpec& b : call.buffers) bytes += b.bytes();
  return bytes;
}

// Calls with more device memory than this are not re-run under memcheck: the tool would take
// minutes over them (its slowdown is per access), past its own deadline.
constexpr uint64_t kMemcheckMaxBytes = uint64_t{1} << 32;

double remaining_budget_s();

// Re-runs the failing call under memcheck (budgeted) and returns what it found.
std::string memcheck_findings(const CheckSpec& spec) {
  if (worker_options().sanitizer.empty() || !worker_options().memcheck || g_sanitizer_budget <= 0) {
    return "";
  }
  const uint64_t bytes = call_bytes(spec.call);
  if (bytes > kMemcheckMaxBytes) {
    return "  (not re-run under compute-sanitizer memcheck: " + std::to_string(bytes >> 20) +
           " MiB of buffers would take it minutes)\n";
  }
  --g_sanitizer_budget;
  const double left_s = remaining_budget_s();
  if (left_s <= 0) return "";
  const std::string found =
      worker_for(spec.call.variant).sanitize(spec.call, "memcheck", nullptr, left_s);
  if (found.empty()) return "";
  return "compute-sanitizer memcheck, re-running this call:\n" + found;
}

// ---- Bounded GPU time for wrong submissions --------------------------------------------------
// A call may take what its data needs, with room to spare: kCallFloorS plus kWorkSlack passes
// over its buffers at this GPU's measured copy bandwidth (a naive kernel, an uncoalesced one,
// a serial loop per row all finish far inside it; the floor also covers a GPU stalled for
// seconds by other gradings' faults), never more than the lab's test_timeout_s. A variant that
// hung once gets kHungFloorS plus a tenth of that in its later calls. Its remaining calls fail
// without running after kMaxHangsInARow hangs, or kMaxEndedInARow calls that ended its worker
// (hangs and crashes: each costs a fresh worker), with no call of it finishing normally in
// between: a kernel that hangs or faults at some sizes and not others keeps the others. The
// runs are counted across the lab's judges side by side (WorkerOptions::streaks): on an H200,
// lab 05's trap_every_kernel had three judges fault 6 times per variant each, about 70 faults
// and 190 s, with two other such gradings on the GPU.
// The judge's whole run has the lab's budget.
constexpr double kCallFloorS = 30;
constexpr double kHungFloorS = 5;
constexpr double kWorkSlack = 1000;
constexpr int kMaxHangsInARow = 3;
constexpr int kMaxEndedInARow = 6;

struct Hangs {
  int hangs_in_a_row = 0;
  int ended_in_a_row = 0;  // hangs and crashes
  bool hung = false;       // ever, in this judge
  std::string first;       // the test of the first of the current run
};
std::map<std::string, Hangs> g_hangs;  // by variant: this judge's, or the lab's judges' (below)
double g_budget_start_ms = -1;

// Runs `f` on g_hangs as the lab's judges share it (WorkerOptions::streaks): read from the file
// before, written back after, under an exclusive lock; a call that ends normally in any judge
// ends its variant's run. Without the file (or when it cannot be opened), this judge's own.
// One line per variant: name, hangs in a row, ended in a row, hung ever, the run's first test.
template <class F>
void with_streaks(F&& f) {
  const std::string& path = worker_options().streaks;
  const int fd = path.empty() ? -1
                              : ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    f();
    return;
  }
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) text.append(buf, static_cast<size_t>(n));
  std::map<std::string, Hangs> shared;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string variant;
    Hangs h;
    int hung = 0;
    if (std::getline(fields, variant, '\t') && fields >> h.hangs_in_a_row >> h.ended_in_a_row >> hung) {
      h.hung = hung != 0;
      fields.ignore(1);
      std::getline(fields, h.first);
      shared[variant] = h;
    }
  }
  g_hangs = std::move(shared);
  f();
  std::ostringstream out;
  for (const auto& [variant, h] : g_hangs) {
    out << variant << '\t' << h.hangs_in_a_row << ' ' << h.ended_in_a_row << ' ' << (h.hung ? 1 : 0)
        << '\t' << h.first << '\n';
  }
  const std::string bytes = out.str();
  if (::ftruncate(fd, 0) == 0) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
  }
  ::close(fd);  // releases the lock
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "?";
  return std::string(info->test_suite_name()) + "." + info->name();
}

// Device-to-device copy bandwidth (bytes read plus written per second), measured once on 2 x 64
// MiB; 0.5 TB/s when it cannot be measured.
double copy_bandwidth() {
  static const double measured = [] {
    constexpr size_t kBytes = size_t{64} << 20;
    void* a = nullptr;
    void* b = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    double best_ms = 0;
    if (cudaMalloc(&a, kBytes) == cudaSuccess && cudaMalloc(&b, kBytes) == cudaSuccess &&
        cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess &&
        cudaMemset(a, 1, kBytes) == cudaSuccess) {
      for (int i = 0; i < 4; ++i) {  // the first is a warm-up
        float ms = 0;
        if (cudaEventRecord(start) != cudaSuccess ||
            cudaMemcpy(b, a, kBytes, cudaMemcpyDeviceToDevice) != cudaSuccess ||
            cudaEventRecord(stop) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess ||
            cudaEventElapsedTime(&ms, start, stop) != cudaSuccess) {
          best_ms = 0;
          break;
        }
        if (i > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
      }
    }
    if (start != nullptr) cudaEventDestroy(start);
    if (stop != nullptr) cudaEventDestroy(stop);
    if (a != nullptr) cudaFree(a);
    if (b != nullptr) cudaFree(b);
    cudaGetLastError();
    return best_ms > 0 ? 2.0 * kBytes / (best_ms * 1e-3) : 0.5e12;
  }();
  return measured;
}

// What is left of the judge's budget for its tests (test_budget_s), in seconds; a large
// number when it has none. Sanitizer replays get no more than this.
double remaining_budget_s() {
  const WorkerOptions& o = worker_options();
  if (o.test_budget_s <= 0) return 1e9;
  if (g_budget_start_ms < 0) g_budget_start_ms = now_ms();
  return o.test_budget_s - (now_ms() - g_budget_start_ms) / 1000.0;
}

// The seconds one call of `call` may take (see above), or why it is not run at all.
double call_timeout_for(const OpCall& call, std::string* not_run, std::string* kind) {
  const WorkerOptions& o = worker_options();
  if (g_budget_start_ms < 0) g_budget_start_ms = now_ms();
  if (o.test_budget_s > 0 && now_ms() - g_budget_start_ms > o.test_budget_s * 1000.0) {
    std::ostringstream os;
    os << "not run: this judge's tests have used up the lab's time budget (" << o.test_budget_s
       << " s, grading.toml's test_budget_s): calls before this one hung or crashed again and "
          "again";
    *not_run = os.str();
    *kind = "timeout";
    return 0;
  }
  const double pass_s = static_cast<double>(call_bytes(call)) / copy_bandwidth();
  Hangs v;
  with_streaks([&] {
    const auto h = g_hangs.find(call.variant);
    if (h != g_hangs.end()) v = h->second;
  });
  if (v.hangs_in_a_row >= kMaxHangsInARow || v.ended_in_a_row >= kMaxEndedInARow) {
    std::ostringstream os;
    os << "not run: " << call.variant << " ";
    if (v.hangs_in_a_row >= kMaxHangsInARow) {
      os << "did not finish in " << v.hangs_in_a_row << " calls in a row";
      *kind = "timeout";
    } else {
      os << "crashed or hung in " << v.ended_in_a_row << " calls in a row";
      *kind = "crashed";
    }
    os << " (the first in " << v.first
       << "); its remaining tests fail without running, so that a kernel that never ends or "
          "always faults costs bounded GPU time";
    *not_run = os.str();
    return 0;
  }
  if (!v.hung) return std::min(o.call_timeout_s, kCallFloorS + kWorkSlack * pass_s);
  return std::min(o.call_timeout_s, kHungFloorS + kWorkSlack / 10 * pass_s);
}

// After a call of `variant` ended as `outcome`.
void record_end(const std::string& variant, Outcome outcome) {
  const bool hung = outcome == Outcome::kTimeout;
  const bool ended_worker = hung || outcome == Outcome::kRunError || outcome == Outcome::kCrashed ||
                            outcome == Outcome::kProtocolError;
  with_streaks([&] {
    if (!ended_worker) {
      const auto h = g_hangs.find(variant);
      if (h != g_hangs.end()) h->second.hangs_in_a_row = h->second.ended_in_a_row = 0;
      return;
    }
    Hangs& h = g_hangs[variant];
    if (h.ended_in_a_row == 0) h.first = current_test_name();
    ++h.ended_in_a_row;
    if (hung) {
      ++h.hangs_in_a_row;
      h.hung = true;
    }
  });
}

}  // namespace

const std::string& last_failure_kind() { return g_failure_kind; }
void reset_failure_kind() { g_failure_kind = "failed"; }
bool sanitizer_available() { return !worker_options().sanitizer.empty(); }

void record_where(const std::string& where_json) {
  if (where_json.empty()) return;
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info != nullptr) {
    const ::testing::TestResult* result = info->result();
    for (int i = 0; i < result->test_property_count(); ++i) {
      if (std::string(result->GetTestProperty(i).key()) == kWhereProperty) return;
    }
  }
  ::testing::Test::RecordProperty(kWhereProperty, where_json);
}

std::string replay_hint() {
  std::ostringstream os;
  os << "  replay: LABKIT_SEED=" << test_seed() << " <this lab's _test program>";
  if (const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    os << " --gtest_filter='" << info->test_suite_name() << "." << info->name() << "'";
  }
  os << "\n";
  return os.str();
}

std::string describe_guard(const BufferSpec& buffer, const protocol::GuardInfo& g) {
  if (g.before == 0 && g.after == 0) return "";
  std::ostringstream os;
  const std::string& name = buffer.name;
  const uint64_t words_per_elem = std::max<uint64_t>(buffer.elem_size / 4, 1);
  if (g.after > 0) {
    const uint64_t offset = g.first_after / words_per_elem;
    const uint64_t index = buffer.count + offset;
    os << "the kernel wrote past the end of " << name;
    if (buffer.dims.size() == 2) {
      const uint64_t rows = buffer.dims[0], cols = std::max<uint64_t>(buffer.dims[1], 1);
      os << " (" << rows << " x " << buffer.dims[1] << "): the first at " << name << "[" << index
         << "], which would be row " << rows + offset / cols << ", col " << offset % cols
         << " of a larger matrix - a thread outside the matrix wrote (missing bounds guard?)\n";
    } else {
      os << " (" << buffer.count << " elements): the first at " << name << "[" << index
         << "] - a thread past the last element wrote (missing bounds guard?)\n";
    }
  }
  if (g.before > 0) {
    os << "the kernel wrote before the start of " << name << ", the nearest at " << name << "[-"
       << (g.nearest_before + words_per_elem - 1) / words_per_elem << "] (negative index?)\n";
  }
  if (buffer.role == protocol::Role::kInput) os << "  (" << name << " is an input: read-only)\n";
  return os.str();
}

// The GPU is shared with other gradings' tests: a call whose buffers did not fit waits for
// them to finish and tries again, for up to a minute (the tests past 2^31 elements hold 9 to
// 17 GiB each).
// A call larger than the whole GPU never fits: no waiting then.
constexpr int kOutOfMemoryRetries = 12;
constexpr unsigned kOutOfMemoryPauseS = 5;

static bool could_fit(const OpCall& call) {
  const uint64_t bytes = call_bytes(call);
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return bytes < total_bytes / 10 * 9;
}

MemoryLock::MemoryLock(bool large) {
  const std::string& path = worker_options().memory_lock;
  if (!large || path.empty()) return;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

MemoryLock::~MemoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

::testing::AssertionResult check(const CheckSpec& spec) {
  // A check on the device allocates the judge's reference beside the worker's buffers.
  std::string not_run, kind;
  const double timeout_s = call_timeout_for(spec.call, &not_run, &kind);
  if (!not_run.empty()) {
    g_failure_kind = kind;
    return ::testing::AssertionFailure() << spec.what << ": " << not_run << "\n";
  }
  // A check on the device allocates the judge's own copy beside the call's buffers.
  const MemoryLock lock(call_bytes(spec.call) * (spec.call.keep_on_device ? 2 : 1) >
                        kLargeCallBytes);
  OpResult r = worker_for(spec.call.variant).run(spec.call, timeout_s);
  for (int retry = 0; retry < kOutOfMemoryRetries && r.outcome == Outcome::kRefused &&
                      r.cuda_error == static_cast<int>(cudaErrorMemoryAllocation) &&
                      could_fit(spec.call);
       ++retry) {
    ::sleep(kOutOfMemoryPauseS);
    r = worker_for(spec.call.variant).run(spec.call, timeout_s);
  }
  const auto earlier = g_hangs.find(spec.call.variant);
  const std::string hung_before =
      earlier == g_hangs.end() || !earlier->second.hung
          ? ""
          : " (" + spec.call.variant + " hung before: its later calls get less time)";
  record_end(spec.call.variant, r.outcome);
  // Outputs kept on the device are freed once checked, inside the memory lock (this guard,
  // declared after `lock`, runs before it is released): the next large call of any grading on
  // this GPU finds the memory free.
  struct ReleaseKept {
    Worker& worker;
    ~ReleaseKept() { worker.release_kept(); }
  } const release_kept{worker_for(spec.call.variant)};
  const int c = r.failed_call;
  auto fail = [&](const std::string& kind, const std::string& body) {
    g_failure_kind = kind;
    std::string message = call_label(spec, c) + ": " + body;
    if (!message.empty() && message.back() != '\n') message += "\n";
    if (!r.log.empty() && kind != "failed") {
      message += "  the worker's last output:\n" + indent(r.log, "    ");
    }
    if (kind == "crashed") message += memcheck_findings(spec);
    message += replay_hint();
    return ::testing::AssertionFailure() << message;
  };
  switch (r.outcome) {
    case Outcome::kOk: break;
    case Outcome::kLaunchError:
      return fail("failed", "the launch failed: " + r.message + "\n  " + spec.launch_hint);
    case Outcome::kRunError:
      return fail("crashed", "the kernel failed while running: " + r.message + "\n  " +
                                 spec.fault_hint);
    case Outcome::kCaptureProblem: return fail("failed", r.message);
    case Outcome::kCrashed:
      return fail("crashed", r.message + " (did the code call exit() or abort(), or crash?)");
    case Outcome::kTimeout:
      return fail("timeout", r.message + hung_before +
                                 ": a kernel that never ends (a loop whose condition never "
                                 "changes?) or a launcher that waits forever");
    case Outcome::kProtocolError: return fail("crashed", r.message);
    case Outcome::kNoDevice: return fail("crashed", r.message);
    case Outcome::kRefused: return fail("failed", "the worker refused the call: " + r.message);
    case Outcome::kHostCompute: return fail("host_compute", r.message);
  }

  std::string problems;
  for (size_t b = 0; b < spec.call.buffers.size(); ++b) {
    problems += describe_guard(spec.call.buffers[b], r.guards[b]);
    if (r.inputs_changed & (1u << b)) {
      problems += "the kernel changed its input " + spec.call.buffers[b].name +
                  " (inputs are read-only)\n";
    }
  }
  static const bool log_time = std::getenv("LABKIT_CPU_LOG") != nullptr;
  if (spec.call.keep_on_device) {
    if (!spec.right_on_device) throw std::invalid_argument("labkit::check: keep_on_device without right_on_device");
    const auto t0 = std::chrono::steady_clock::now();
    const bool right =
        problems.empty() && retry_out_of_memory([&] { return spec.right_on_device(r.device_outputs); });
    if (log_time) {
      std::printf("labkit-cpu: the judge's check on the device took %.1f ms\n",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      std::fflush(stdout);
    }
    if (right) {
      g_some_check_passed = true;
      return ::testing::AssertionSuccess();
    }
  }
  // A wrong output (or a canary or input problem): the report of call `call`.
  auto wrong_output = [&](size_t call, const Verdict& wrong) {
    g_failure_kind = "failed";
    record_where(wrong.where);
    std::string message = call_label(spec, static_cast<int>(call)) + ": " + wrong.message + problems;
    if (wrong.ok()) message += "(every output element is right)\n";
    // Writes outside a buffer, or a kernel right at other sizes: memcheck can say where.
    if (!problems.empty() || g_some_check_passed) message += memcheck_findings(spec);
    message += replay_hint();
    return ::testing::AssertionFailure() << message;
  };
  if (spec.call.keep_on_device && spec.report_on_device) {
    const auto t0 = std::chrono::steady_clock::now();
    const Verdict wrong = retry_out_of_memory([&] { return spec.report_on_device(r.device_outputs); });
    release_kept.worker.release_kept();  // before a memcheck re-run of the same call
    if (log_time) {
      std::printf("labkit-cpu: the judge's report from the device took %.1f ms\n",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      std::fflush(stdout);
    }
    return wrong_output(0, wrong);
  }
  if (spec.call.keep_on_device) {
    // The outputs to the host, for verify's report.
    std::vector<Bytes> host(spec.call.buffers.size());
    for (size_t b = 0; b < host.size(); ++b) {
      if (r.device_outputs.at(b) == nullptr) continue;
      host[b].resize(spec.call.buffers[b].bytes());
      CUDA_CHECK(cudaMemcpy(host[b].data(), r.device_outputs[b], host[b].size(), cudaMemcpyDeviceToHost));
    }
    r.outputs.assign(1, std::move(host));
    release_kept.worker.release_kept();
  }
  for (size_t call = 0; call < r.outputs.size(); ++call) {
    const auto t0 = std::chrono::steady_clock::now();
    const Verdict wrong = spec.verify(static_cast<int>(call), r.outputs[call]);
    if (log_time) {
      std::printf("labkit-cpu: the judge's check of call %zu took %.1f ms\n", call + 1,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      std::fflush(stdout);
    }
    if (!wrong.ok() || (!problems.empty() && call + 1 == r.outputs.size())) {
      return wrong_output(call, wrong);
    }
  }
  g_some_check_passed = true;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_races(const CheckSpec& spec) {
  if (!sanitizer_available()) {
    return ::testing::AssertionFailure()
           << spec.what << ": no compute-sanitizer, so the race check could not run";
  }
  // The sum must be right first: racecheck does not look at results, and a launcher that
  // computes nothing has no races.
  const ::testing::AssertionResult values = check(spec);
  if (!values) {
    return ::testing::AssertionFailure()
           << "before the race check, the result must be right:\n" << values.message();
  }
  bool clean = false;
  const double left_s = remaining_budget_s();
  if (left_s <= 0) {
    g_failure_kind = "timeout";
    return ::testing::AssertionFailure()
           << spec.what << ": the race check was not run: this judge's tests have used up the "
           << "lab's time budget (grading.toml's test_budget_s)\n";
  }
  const std::string found =
      worker_for(spec.call.variant).sanitize(spec.call, "racecheck", &clean, left_s);
  if (clean) return ::testing::AssertionSuccess();
  g_failure_kind = "failed";
  if (found == kRaceReplayWithoutPlan) {
    return ::testing::AssertionFailure()
           << spec.what << ": the race check could not run on the graded call's code:\n"
           << found << replay_hint();
  }
  if (found == kSanitizerTimedOut) {
    // Not a hazard found: the call under racecheck (tens of times slower than without) took
    // longer than the check's limit or the judge's time left. Still no race points: a verdict
    // that was never reached is not a clean one.
    g_failure_kind = "timeout";
    return ::testing::AssertionFailure()
           << spec.what << ": compute-sanitizer racecheck did not finish within its limit (or "
           << "the lab's time budget left, " << static_cast<int>(left_s) << " s), so no race "
           << "verdict was reached; racecheck makes shared memory tens of times slower, and "
           << "this call was too slow under it\n" << replay_hint();
  }
  return ::testing::AssertionFailure()
         << spec.what << ": compute-sanitizer racecheck found shared-memory hazards (threads "
         << "of a block read and write the same shared location without a __syncthreads() "
         << "between them):\n"
         << (found.empty() ? "  (no details)\n" : found) << replay_hint();
}

}  // namespace labkit
