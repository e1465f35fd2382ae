// The judge's worker client against fake workers (no CUDA, no GPU needed): a reply that is not
// valid, silence, death, half a reply, impossible times, replies out of turn, a worker that is
// not confined, a daemon left behind. Each must become a failure of the call in flight, said for
// what it is, and never a pass. And the confinement itself: a worker confined by
// labkit::sandbox (as every real worker is once CUDA is up) that tries a forbidden call dies
// with a message naming it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "labkit/check.hpp"
#include "labkit/judge.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/judge_main.hpp"
#include "labkit/keep_last.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

OpCall small_call() {
  OpCall call;
  call.variant = "v";
  call.params = {2};
  call.buffers = {{"x", protocol::Role::kInput, 4, 2, {2}}, {"y", protocol::Role::kOutput, 4, 2, {2}}};
  call.inputs = {{Bytes(8, 1), {}}};
  return call;
}

Worker fake(const char* mode, double timeout_s = 5) {
  WorkerOptions o;
  o.path = std::string(LABKIT_FAKE_WORKER_DIR) + "/labkit_fake_worker_" + mode;
  o.call_timeout_s = timeout_s;
  return Worker(o);
}

TEST(JudgeHost, KeepsTheLastCasesInputsAndMakesAnotherCasesAfresh) {
  labkit::KeepLast<std::tuple<int, uint64_t>, std::vector<int>> last;
  int made = 0;
  auto make = [&made](int n) {
    return [&made, n] {
      ++made;
      return std::vector<int>(static_cast<size_t>(n), n);
    };
  };
  const auto a = last.get({3, 7}, make(3));
  EXPECT_EQ(*a, std::vector<int>(3, 3));
  EXPECT_EQ(last.get({3, 7}, make(3)), a);  // the same case: kept, not made again
  EXPECT_EQ(made, 1);
  const auto b = last.get({3, 8}, make(4));  // another seed: another case
  EXPECT_EQ(made, 2);
  EXPECT_EQ(*b, std::vector<int>(4, 4));
  EXPECT_EQ(*a, std::vector<int>(3, 3));  // a holder keeps its value after the memo moves on
  last.get({3, 7}, make(3));  // only the last is kept
  EXPECT_EQ(made, 3);
  EXPECT_THROW(last.get({5, 5}, []() -> std::vector<int> { throw std::runtime_error("no"); }),
               std::runtime_error);
  last.get({5, 5}, make(5));  // a make that threw kept nothing
  EXPECT_EQ(made, 4);
}

// A race check whose tool runs past its limit (a call far too slow under racecheck) reached no
// verdict: said so, never reported as hazards found, and never clean.
TEST(JudgeHost, ASanitizerThatDoesNotFinishIsNotReadAsHazards) {
  char tool[] = "/tmp/labkit-slow-sanitizer-XXXXXX";
  const int fd = ::mkstemp(tool);
  ASSERT_GE(fd, 0);
  const std::string script = "#!/bin/sh\nexec sleep 60\n";
  ASSERT_EQ(::write(fd, script.data(), script.size()), static_cast<ssize_t>(script.size()));
  ::close(fd);
  ASSERT_EQ(::chmod(tool, 0755), 0);
  WorkerOptions o;
  o.path = std::string(LABKIT_FAKE_WORKER_DIR) + "/labkit_fake_worker_garbage";
  o.call_timeout_s = 5;
  o.sanitizer = tool;
  Worker w(o);
  bool clean = true;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string found = w.sanitize(small_call(), "racecheck", &clean, 1.0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::unlink(tool);
  EXPECT_FALSE(clean);
  EXPECT_EQ(found, kSanitizerTimedOut);
  EXPECT_LT(seconds, 10.0);
}

// Racecheck skips the executor's scrubs, and only them: the pattern matches every name this
// binary registers for them (it links the scrubs: their host stubs name the device functions)
// and nothing a student's kernel can be called, mangled or demangled (round 38: a plain
// identifier starting _ZN6labkit matched a pattern open at its end once demangled).
TEST(JudgeHost, RacecheckLeavesOutTheHarnessScrubsOnly) {
  const std::vector<std::string> race = sanitizer_argv("cs", "racecheck", "/r");
  EXPECT_EQ(race.front(), "cs");
  EXPECT_EQ(race[2], "racecheck");
  const auto at = std::find(race.begin(), race.end(), "--kernel-name-exclude");
  ASSERT_NE(at, race.end());
  ASSERT_NE(at + 1, race.end());
  EXPECT_EQ(*(at + 1), std::string("regex=") + kScrubKernels);
  EXPECT_EQ(std::count(race.begin(), race.end(), "--kernel-name-exclude"), 1);
  const std::regex scrubs(kScrubKernels);
  std::ifstream self("/proc/self/exe", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  const std::vector<std::string> names = labkit::scrub_kernel_names();
  EXPECT_EQ(names.size(), 8u);  // shared memory, and the local frames of 2^10 .. 2^16 bytes
  for (const std::string& name : names) {
    EXPECT_TRUE(std::regex_search(name, scrubs)) << name;
    EXPECT_NE(bytes.find(name + '\0'), std::string::npos) << name << " is not a kernel here";
  }
  for (const char* student :
       {"_Z19scrub_shared_kernelj", "_ZN12_GLOBAL__N_113shared_kernelEj",
        "_ZN2my6labkit5scrub13shared_kernelEj", "shared_kernel",
        // a static kernel named like the scrub, mangled and demangled (round 38)
        "_Z33_ZN6labkit5scrub13shared_kernelEjv", "_ZN6labkit5scrub13shared_kernelEj()",
        "_ZN6labkit5scrub13shared_kernelEj(float const*, float*, unsigned long)",
        "_ZN6labkit_v3f_scrub_shared_kernel(float const*, float*, unsigned long)",
        "_ZN6labkit5scrub12local_kernelILi1024EEEvv_racy", "x_ZN6labkit5scrub13shared_kernelEj"}) {
    EXPECT_FALSE(std::regex_search(student, scrubs)) << student;
  }
  const std::vector<std::string> mem = sanitizer_argv("cs", "memcheck", "/r");
  EXPECT_EQ(std::find(mem.begin(), mem.end(), "--kernel-name-exclude"), mem.end());
}

TEST(JudgeHost, RejectsAReplyWithTheWrongMagic) {
  Worker w = fake("garbage");
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kProtocolError) << r.message;
  EXPECT_TRUE(r.outputs.empty());
}

TEST(JudgeHost, KillsASilentWorkerAfterTheTimeout) {
  Worker w = fake("silent", 1);
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kTimeout) << r.message;
  EXPECT_NE(r.message.find("killed"), std::string::npos) << r.message;
}

TEST(JudgeHost, ReportsHowADeadWorkerEnded) {
  Worker w = fake("dies");
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kCrashed) << r.message;
  EXPECT_NE(r.message.find("exited with code 9"), std::string::npos) << r.message;
  EXPECT_NE(r.log.find("fake worker: request"), std::string::npos) << r.log;
  // The next call gets a fresh worker (which dies again, the same way).
  EXPECT_EQ(w.run(small_call()).outcome, Outcome::kCrashed);
}

TEST(JudgeHost, RejectsAFailedCallThatDoesNotExist) {
  Worker w = fake("bad_call");
  EXPECT_EQ(w.run(small_call()).outcome, Outcome::kProtocolError);
}

TEST(JudgeHost, RejectsImpossibleTimes) {
  Worker w = fake("bad_time");
  int opened = 0, closed = 0;
  const TimedCall t = w.bench_timed([&] { ++opened; }, [&] { ++closed; });
  EXPECT_EQ(t.outcome, Outcome::kProtocolError) << t.message;
  EXPECT_EQ(opened, 1);
}

TEST(JudgeHost, TheJudgesClockRunsFromOpenToClose) {
  Worker w = fake("bad_time");
  const TimedCall t = w.bench_timed(
      [] { std::this_thread::sleep_for(std::chrono::milliseconds(30)); }, [] {});
  EXPECT_GE(t.judge_ms, 30.0);
}

TEST(JudgeHost, ARepliesOutOfTurnAreProtocolErrors) {
  Worker stale = fake("stale_nonce");
  const OpResult a = stale.run(small_call());
  EXPECT_EQ(a.outcome, Outcome::kProtocolError) << a.message;
  EXPECT_NE(a.message.find("out of turn"), std::string::npos) << a.message;
  EXPECT_TRUE(a.outputs.empty());
  Worker twice = fake("two_replies");
  const OpResult b = twice.run(small_call());
  // The second reply is seen at once (already in the pipe), or by the next request's nonce.
  const OpResult c = b.outcome == Outcome::kProtocolError ? b : twice.run(small_call());
  EXPECT_EQ(c.outcome, Outcome::kProtocolError) << c.message;
}

TEST(JudgeHost, CpuTimeSpentInACallIsHostCompute) {
  // Read from outside (/proc): the worker cannot hide it. A call that moves 16 bytes needs
  // milliseconds; 1.5 s of CPU is computing on the CPU, in the first worker and in the fresh
  // one that makes the call again.
  Worker w = fake("busy", 120);  // 1.5 s of CPU can take much longer on a loaded machine
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kHostCompute) << r.message;
  EXPECT_GE(r.worker_cpu_ms, 1400.0);
  EXPECT_NE(r.message.find("computing on the CPU is not allowed"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("over twice: the first attempt, in another worker, used 1"),
            std::string::npos)
      << r.message;
  Worker quiet = fake("two_replies");
  const OpResult q = quiet.run(small_call());
  EXPECT_LT(q.worker_cpu_ms, host_cpu_allowance_ms(16));
}

TEST(JudgeHost, ACallOverTheAllowanceOnceIsMadeAgainInAFreshWorker) {
  // The first worker spends 1.5 s of CPU (as copies on a busy machine can); the fresh worker
  // that makes the call again does not: the call is not host_compute, and the fresh worker
  // goes on serving the calls that follow.
  const std::string marker = "/tmp/labkit-fake-busy-once-" + std::to_string(::getpid());
  std::remove(marker.c_str());
  Worker w = fake("busy_once", 120);
  const OpResult r = w.run(small_call());
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the first worker did not spend its CPU time";
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  EXPECT_LT(r.worker_cpu_ms, host_cpu_allowance_ms(16));
  const OpResult next = w.run(small_call());
  EXPECT_EQ(next.outcome, Outcome::kOk) << next.message;
  EXPECT_LT(next.worker_cpu_ms, host_cpu_allowance_ms(16));
  std::remove(marker.c_str());
}

TEST(JudgeHost, AWorkerThatIsNotConfinedRunsNothing) {
  Worker w = fake("unconfined");
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kNoDevice) << r.message;
  EXPECT_NE(r.message.find("did not confine itself"), std::string::npos) << r.message;
}

TEST(JudgeHost, WhatAWorkerLeavesBehindIsKilled) {
  // The fake forks a daemon (double fork, new session) that creates a file two seconds later,
  // as a student's code would to rewrite a results file after the grader exits. The judge is a
  // child subreaper: the daemon is reparented to it and killed after the call.
  char dir_template[] = "/tmp/labkit-daemon-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string marker = std::string(dir_template) + "/written";
  OpCall call = small_call();
  call.variant = marker;
  {
    Worker w = fake("daemon");
    const OpResult r = w.run(call);
    EXPECT_EQ(r.outcome, Outcome::kOk) << r.message;
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a process the worker started outlived it";
  std::error_code ec;
  std::filesystem::remove_all(dir_template, ec);
}

// ---- the confinement, for real (x86-64 Linux; no CUDA needed)

struct Attack {
  const char* variant;
  const char* syscalls;  // the names the sandbox's message may give, '|'-separated
};

bool names_one_of(const std::string& message, const std::string& names) {
  size_t from = 0;
  while (from <= names.size()) {
    const size_t bar = names.find('|', from);
    const std::string name = names.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
    if (message.find("(" + name + ")") != std::string::npos) return true;
    if (bar == std::string::npos) break;
    from = bar + 1;
  }
  return false;
}

class Sandbox : public ::testing::TestWithParam<Attack> {};

TEST_P(Sandbox, AForbiddenCallStopsTheWorkerAndSaysWhich) {
  Worker w = fake("sandboxed");
  OpCall call = small_call();
  call.variant = GetParam().variant;
  const OpResult r = w.run(call);
  EXPECT_EQ(r.outcome, Outcome::kCrashed) << r.message << r.log;
  EXPECT_NE(r.message.find("stopped by the sandbox"), std::string::npos) << r.message;
  EXPECT_TRUE(names_one_of(r.message, GetParam().syscalls)) << r.message;
  EXPECT_EQ(r.log.find("was not stopped"), std::string::npos) << r.log;
}

INSTANTIATE_TEST_SUITE_P(
    JudgeHost, Sandbox,
    ::testing::Values(Attack{"thread_found_at_run_time", "rt_sigaction|clone3|clone"},
                      Attack{"fork_raw_syscall", "fork"}, Attack{"executable_memory", "mmap"},
                      Attack{"mprotect_exec", "mprotect"}, Attack{"open_file", "openat"},
                      Attack{"socket", "socket"}, Attack{"signal_parent", "kill"},
                      Attack{"setsid", "setsid"}, Attack{"ptrace", "ptrace"},
                      Attack{"execve", "execve"}, Attack{"sigio_on_request_pipe", "fcntl"},
                      Attack{"memfd", "memfd_create"}),
    [](const ::testing::TestParamInfo<Attack>& info) { return std::string(info.param.variant); });

TEST(JudgeHost, TheSandboxLetsTheWorkerComputeAndAnswer) {
  Worker w = fake("sandboxed");
  OpCall call = small_call();
  call.variant = "allowed";
  const OpResult r = w.run(call);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.message << r.log;
  EXPECT_NE(r.log.find("allowed calls"), std::string::npos) << r.log;
  // A child started before the confinement (the executor's planner) can be reaped, and how it
  // ended read: the executor says so when the launcher's process dies.
  EXPECT_NE(r.log.find("reaped a child killed by signal 11"), std::string::npos) << r.log;
  EXPECT_NE(w.sandbox().find("seccomp"), std::string::npos) << w.sandbox();
}

TEST(JudgeHost, HalfAReplyIsACrashNotAResult) {
  Worker w = fake("half");
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kCrashed) << r.message;
}

TEST(JudgeHost, AMissingWorkerIsReported) {
  WorkerOptions o;
  o.path = "/nonexistent/worker";
  Worker w(o);
  const OpResult r = w.run(small_call());
  EXPECT_EQ(r.outcome, Outcome::kNoDevice);
  EXPECT_NE(r.message.find("/nonexistent/worker"), std::string::npos) << r.message;
}

TEST(JudgeHost, RefusesCallsThatDoNotFitTheProtocol) {
  Worker w = fake("garbage");
  OpCall call = small_call();
  call.inputs[0][0].resize(3);  // not the declared size
  EXPECT_THROW(w.run(call), std::invalid_argument);
  call = small_call();
  call.inputs.assign(protocol::kMaxCalls + 1, call.inputs[0]);
  EXPECT_THROW(w.run(call), std::invalid_argument);
}

// Outputs kept on the device: the request says so, and the handles in the reply are the
// worker's word only: one the judge cannot map is a protocol error, never a pass (with a GPU
// the forged bytes map nothing; without one nothing maps). Only one call, not captured, can be
// kept: anything else is refused before the worker hears of it.
TEST(JudgeHost, ForgedHandlesOfKeptOutputsAreAProtocolError) {
  Worker w = fake("forged_handles");
  OpCall call = small_call();
  call.keep_on_device = true;
  const OpResult r = w.run(call);
  EXPECT_EQ(r.outcome, Outcome::kProtocolError) << r.message;
  EXPECT_NE(r.message.find("cannot map"), std::string::npos) << r.message;
  EXPECT_TRUE(r.outputs.empty());
  call.inputs.assign(2, call.inputs[0]);
  EXPECT_THROW(w.run(call), std::invalid_argument);
  call = small_call();
  call.keep_on_device = true;
  call.capture = true;
  EXPECT_THROW(w.run(call), std::invalid_argument);
  const OpResult plain = w.run(small_call());  // the fake answers only kept calls
  EXPECT_EQ(plain.outcome, Outcome::kRefused) << plain.message;
}

// Parses `args` as a judge's command line; returns what is left of it (argv[0] included).
std::vector<std::string> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "judge");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  parse_judge_args(argc, argv.data());
  return std::vector<std::string>(argv.begin(), argv.begin() + argc);
}

// --labkit-ready-fd: a bench judge started ahead of the GPU's exclusive hold reads its seed at
// once, says it is ready, and goes on only at the grader's 'go' (judge_ready).
TEST(JudgeHost, ReadyFdWaitsForGoAfterSayingReady) {
  const WorkerOptions saved = worker_options();
  const uint64_t saved_seed = test_seed();
  const int stdin_copy = ::dup(0);
  ASSERT_GE(stdin_copy, 0);
  for (const char* rest : {"go\n", "", "gone\n"}) {
    int ready[2], in[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(in), 0);
    const std::string input = std::string("4242\n") + rest;
    ASSERT_EQ(::write(in[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
    ::close(in[1]);
    ASSERT_EQ(::dup2(in[0], 0), 0);
    ::close(in[0]);
    std::clearerr(stdin);  // the last round's end of file
    std::cin.clear();
    set_test_seed(7);
    std::vector<std::string> args = {"judge", "--labkit-seed-stdin",
                                     "--labkit-ready-fd=" + std::to_string(ready[1])};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    JudgeArgs parsed = parse_judge_args(argc, argv.data());
    EXPECT_EQ(test_seed(), 4242u);
    EXPECT_EQ(parsed.ready_fd, ready[1]);
    if (std::string(rest) == "go\n") {
      EXPECT_NO_THROW(judge_ready(parsed));
    } else {
      EXPECT_THROW(judge_ready(parsed), std::invalid_argument) << rest;
    }
    EXPECT_EQ(parsed.ready_fd, -1);
    char said[16] = {};
    EXPECT_EQ(::read(ready[0], said, sizeof said), 6);
    EXPECT_STREQ(said, "ready\n");
    EXPECT_EQ(::read(ready[0], said, sizeof said), 0) << "the ready descriptor stays open";
    ::close(ready[0]);
  }
  ::dup2(stdin_copy, 0);
  ::close(stdin_copy);
  std::clearerr(stdin);
  std::cin.clear();
  set_test_seed(saved_seed);
  set_worker_options(saved);
  EXPECT_THROW(parse({"--labkit-ready-fd=1000000"}), std::invalid_argument);
  EXPECT_THROW(parse({"--labkit-ready-fd=x"}), std::invalid_argument);
  set_worker_options(saved);
}

// A lab whose helper is given to some variants only (lab 07's cuBLAS GEMM, v1_im2col) runs
// them in another worker binary: --labkit-worker-for routes each call by its variant.
TEST(JudgeHost, WorkerForRoutesEachVariantToItsBinary) {
  const WorkerOptions saved = worker_options();
  const std::string garbage = std::string(LABKIT_FAKE_WORKER_DIR) + "/labkit_fake_worker_garbage";
  const std::vector<std::string> left =
      parse({"--labkit-worker=/nonexistent/plain", "--gtest_brief=1",
             "--labkit-worker-for=v1_im2col=" + garbage, "--labkit-worker-for=v3=/x=y"});
  const WorkerOptions parsed = worker_options();
  set_worker_options(saved);
  EXPECT_EQ(left, (std::vector<std::string>{"judge", "--gtest_brief=1"}));
  EXPECT_EQ(parsed.path, "/nonexistent/plain");
  EXPECT_EQ(parsed.variant_paths.size(), 2u);
  EXPECT_EQ(worker_path_for(parsed, "v1_im2col"), garbage);
  EXPECT_EQ(worker_path_for(parsed, "v3"), "/x=y");  // the first '=' ends the variant
  EXPECT_EQ(worker_path_for(parsed, "v2_implicit_gemm"), "/nonexistent/plain");

  for (const char* bad : {"--labkit-worker-for=v1_im2col", "--labkit-worker-for==/w",
                          "--labkit-worker-for=v1_im2col=", "--labkit-worker-for"}) {
    EXPECT_THROW(parse({bad}), std::invalid_argument) << bad;
    set_worker_options(saved);
  }
  EXPECT_THROW(parse({"--labkit-worker-for=v=/a", "--labkit-worker-for=v=/b"}),
               std::invalid_argument);
  set_worker_options(saved);

  // The routed variant's calls reach its binary (here a fake that answers garbage), not the
  // default worker (which does not exist: a call there would be no_device).
  WorkerOptions routed = saved;
  routed.path = "/nonexistent/plain";
  routed.call_timeout_s = 5;
  routed.variant_paths = {{"v", garbage}};
  set_worker_options(routed);
  const OpResult r = worker_for("v").run(small_call());
  set_worker_options(saved);
  EXPECT_EQ(r.outcome, Outcome::kProtocolError) << r.message;
  // Any other variant: the judge's shared worker.
  EXPECT_EQ(&worker_for("not_routed"), &shared_worker());
}

// A wrong submission costs bounded GPU time: a variant that hangs once gets less time in its
// later calls, and after three hangs (or six hangs and crashes) in a row the rest of its tests
// fail without running; once the
// judge's budget (--labkit-test-budget) is spent, every call fails without running.
TEST(JudgeHost, AVariantThatKeepsHangingStopsBeingRun) {
  const WorkerOptions saved = worker_options();
  parse({"--labkit-test-budget=240"});
  EXPECT_EQ(worker_options().test_budget_s, 240.0);
  set_worker_options(saved);
  EXPECT_THROW(parse({"--labkit-test-budget=-1"}), std::invalid_argument);
  set_worker_options(saved);

  WorkerOptions o = saved;
  o.call_timeout_s = 1;
  o.sanitizer.clear();
  o.variant_paths = {{"hangs", std::string(LABKIT_FAKE_WORKER_DIR) + "/labkit_fake_worker_silent"}};
  set_worker_options(o);
  CheckSpec spec;
  spec.what = "hangs on n=2";
  spec.call = small_call();
  spec.call.variant = "hangs";
  int verified = 0;
  spec.verify = [&verified](int, const std::vector<Bytes>&) {
    ++verified;
    return Verdict{};
  };
  std::vector<std::string> messages;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) {
    const ::testing::AssertionResult r = check(spec);
    EXPECT_FALSE(r);
    EXPECT_EQ(last_failure_kind(), "timeout");
    messages.push_back(r.message());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // A worker that dies in every call: six in a row, then the rest are not run.
  o.variant_paths["dies"] = std::string(LABKIT_FAKE_WORKER_DIR) + "/labkit_fake_worker_dies";
  set_worker_options(o);
  spec.call.variant = "dies";
  std::vector<std::string> crashes;
  for (int i = 0; i < 8; ++i) {
    crashes.push_back(check(spec).message());
    EXPECT_EQ(last_failure_kind(), "crashed");
  }
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(crashes[i].find("not run"), std::string::npos) << crashes[i];
  }
  for (int i = 6; i < 8; ++i) {
    EXPECT_NE(crashes[i].find("not run: dies crashed or hung in 6 calls in a row"),
              std::string::npos) << crashes[i];
  }
  o.test_budget_s = 1e-3;  // spent by now
  set_worker_options(o);
  spec.call.variant = "v";  // another variant: not stopped by the hangs, but by the budget
  const ::testing::AssertionResult after_budget = check(spec);
  set_worker_options(saved);

  EXPECT_EQ(verified, 0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(messages[i].find("did not finish within 1 s"), std::string::npos) << messages[i];
  }
  EXPECT_EQ(messages[0].find("hung before"), std::string::npos) << messages[0];
  EXPECT_NE(messages[1].find("hangs hung before: its later calls get less time"),
            std::string::npos) << messages[1];
  for (int i = 3; i < 6; ++i) {
    EXPECT_NE(messages[i].find("not run: hangs did not finish in 3 calls in a row"),
              std::string::npos) << messages[i];
  }
  // Three calls killed after a second each (and their fresh workers' starts); the rest cost
  // nothing.
  EXPECT_LT(seconds, 12.0);
  EXPECT_FALSE(after_budget);
  EXPECT_NE(std::string(after_budget.message()).find("not run: this judge's tests have used up the lab's "
                                        "time budget"), std::string::npos)
      << after_budget.message();
}

// The judges of one lab's tests, side by side, count each variant's run of crashes together
// (--labkit-streaks): crashes in another judge count here, and a normal end there ends the run.
TEST(JudgeHost, TheLabsJudgesCountCrashesTogether) {
  const WorkerOptions saved = worker_options();
  EXPECT_THROW(parse({"--labkit-streaks=relative/streaks"}), std::invalid_argument);
  set_worker_options(saved);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("labkit-streaks-" + std::to_string(::getpid()))).string();
  std::filesystem::remove(path);
  parse({"--labkit-streaks=" + path});
  EXPECT_EQ(worker_options().streaks, path);
  WorkerOptions o = worker_options();
  o.call_timeout_s = 5;
  o.sanitizer.clear();
  o.variant_paths = {{"faults", std::string(LABKIT_FAKE_WORKER_DIR) + "/labkit_fake_worker_dies"}};
  set_worker_options(o);
  CheckSpec spec;
  spec.what = "faults on n=2";
  spec.call = small_call();
  spec.call.variant = "faults";
  spec.verify = [](int, const std::vector<Bytes>&) { return Verdict{}; };
  const auto file = [&] {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto write = [&](const std::string& text) { std::ofstream(path, std::ios::trunc) << text; };
  for (int i = 0; i < 2; ++i) EXPECT_EQ(std::string(check(spec).message()).find("not run"), std::string::npos);
  EXPECT_EQ(file().rfind("faults\t0 2 0\t", 0), 0u) << file();
  // Another judge's four crashes of the same variant: six in a row, so this one stops.
  write("faults\t0 6 0\tSome.Test\n");
  const std::string stopped = check(spec).message();
  EXPECT_NE(stopped.find("not run: faults crashed or hung in 6 calls in a row (the first in Some.Test)"),
            std::string::npos) << stopped;
  // A call that ended normally in another judge ends the run: this judge runs the variant again.
  write("faults\t0 0 0\t\n");
  const std::string again = check(spec).message();
  EXPECT_EQ(again.find("not run"), std::string::npos) << again;
  EXPECT_EQ(file().rfind("faults\t0 1 0\t", 0), 0u) << file();
  set_worker_options(saved);
  std::filesystem::remove(path);
}

// A lab that refuses shared memory has its executor refuse dynamic shared memory
// (--labkit-no-shared-memory, passed on as the executor's --no-shared-memory).
TEST(JudgeHost, NoSharedMemoryIsAFlagWithoutAValue) {
  const WorkerOptions saved = worker_options();
  EXPECT_FALSE(saved.no_shared_memory);
  parse({"--labkit-no-shared-memory"});
  EXPECT_TRUE(worker_options().no_shared_memory);
  set_worker_options(saved);
  EXPECT_THROW(parse({"--labkit-no-shared-memory=0"}), std::invalid_argument);
  set_worker_options(saved);
}

TEST(JudgeHost, TheRaceAuditIsAFlagWithoutAValue) {
  const WorkerOptions saved = worker_options();
  EXPECT_FALSE(saved.race_audit);
  parse({"--labkit-race-audit"});
  EXPECT_TRUE(worker_options().race_audit);
  set_worker_options(saved);
  EXPECT_THROW(parse({"--labkit-race-audit=1"}), std::invalid_argument);
  set_worker_options(saved);
}

// Large calls of gradings side by side take turns: MemoryLock holds the file given by
// --labkit-memory-lock exclusively while it lives, and only for a large call.
TEST(JudgeHost, LargeCallsHoldTheMemoryLock) {
  const WorkerOptions saved = worker_options();
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("labkit-memory-lock-" + std::to_string(::getpid()))).string();
  EXPECT_THROW(parse({"--labkit-memory-lock=relative/lock"}), std::invalid_argument);
  set_worker_options(saved);
  parse({"--labkit-memory-lock=" + path});
  EXPECT_EQ(worker_options().memory_lock, path);
  // Whether another open file description could take the lock now.
  const auto free_now = [&] {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const bool got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return got;
  };
  {
    const MemoryLock small(false);
    EXPECT_TRUE(free_now()) << "a small call takes no lock";
  }
  {
    const MemoryLock large(true);
    EXPECT_FALSE(free_now()) << "a large call holds the lock";
  }
  EXPECT_TRUE(free_now()) << "released when the call is done";
  // The judge's own GPU work: the lock only past kLargeCallBytes.
  EXPECT_TRUE(with_gpu_memory(kLargeCallBytes, [&] { return free_now(); }))
      << "a judge's work of 4 GiB or less takes no lock";
  EXPECT_FALSE(with_gpu_memory(kLargeCallBytes + 1, [&] { return free_now(); }))
      << "a judge's larger work holds the lock";
  EXPECT_TRUE(free_now());
  set_worker_options(saved);
  {
    WorkerOptions none = saved;
    none.memory_lock.clear();
    set_worker_options(none);
    const MemoryLock large(true);  // no lock given: nothing to hold
    set_worker_options(saved);
    EXPECT_TRUE(free_now());
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace labkit

// The profile stage's reader of ncu's --csv report (one row per kernel and metric), from the
// layout ncu 2025.3 prints (the GPU machines' toolkit), with a kernel name holding commas and
// values with thousands separators.
TEST(JudgeHost, ProfileSumsEachKernelsCountersFromNcusCsv) {
  const std::string head =
      "==PROF== Connected to process 8174 (/tmp/labkit-replay-x/worker)\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
      "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\","
      "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  auto row = [](int id, const std::string& metric, const std::string& value) {
    return "\"" + std::to_string(id) + "\",\"8174\",\"worker\",\"127.0.0.1\",\"void k<1, 2>(float *, int)\","
           "\"1\",\"13\",\"(256, 1, 1)\",\"(12, 1, 1)\",\"0\",\"9.0\",\"Command line profiler "
           "metrics\",\"" + metric + "\",\"byte\",\"" + value + "\"\n";
  };
  std::string report = head;
  for (int id : {0, 1}) {
    report += row(id, "dram__bytes_read.sum", id == 0 ? "1,048,576" : "2,048");
    report += row(id, "dram__bytes_write.sum", "512");
    report += row(id, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "400");
    report += row(id, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "100");
    report += row(id, "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
                  id == 0 ? "100" : "50");
    report += row(id, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "n/a");
    report += row(id, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "7");
    report += row(id, "gpu__time_duration.sum", id == 0 ? "3000" : "1000");
    report += row(id, "sm__warps_active.avg.pct_of_peak_sustained_active", id == 0 ? "80" : "40");
    report += row(id, "launch__registers_per_thread", id == 0 ? "32" : "64");
  }
  // The executor's own fill of an input: not the call's work.
  report += "\"2\",\"8174\",\"worker\",\"127.0.0.1\",\"labkit::<unnamed>::uniform_f32_kernel(float *, "
            "unsigned long)\",\"1\",\"13\",\"(256, 1, 1)\",\"(12, 1, 1)\",\"0\",\"9.0\",\"Command "
            "line profiler metrics\",\"dram__bytes_read.sum\",\"byte\",\"999\"\n";
  report += "==PROF== Disconnected from process 8174\n";
  const labkit::Profile p = labkit::parse_profile(report);
  ASSERT_EQ(p.status, labkit::ProfileStatus::kOk) << p.why;
  EXPECT_EQ(p.kernels, 2);
  EXPECT_DOUBLE_EQ(p.dram_read_bytes, 1048576.0 + 2048.0);
  EXPECT_DOUBLE_EQ(p.dram_write_bytes, 1024.0);
  EXPECT_DOUBLE_EQ(p.ld_sectors / p.ld_requests, 4.0);
  EXPECT_DOUBLE_EQ(p.ld_sector_use_pct, 75.0);       // weighted by sectors: 400 each
  EXPECT_DOUBLE_EQ(p.st_sector_use_pct, 0.0);        // no stores
  EXPECT_DOUBLE_EQ(p.shared_bank_conflicts, 14.0);  // "n/a" counts as nothing
  EXPECT_DOUBLE_EQ(p.gpu_ns, 4000.0);
  EXPECT_DOUBLE_EQ(p.occupancy_pct, 70.0);           // (80 * 3000 + 40 * 1000) / 4000
  EXPECT_DOUBLE_EQ(p.registers, 64.0);
}

TEST(JudgeHost, ProfileSaysWhyThereAreNoCounters) {
  EXPECT_EQ(labkit::parse_profile("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission "
                                  "to access NVIDIA GPU Performance Counters\n").status,
            labkit::ProfileStatus::kNoPermission);
  const labkit::Profile none = labkit::parse_profile("==WARNING== No kernels were profiled.\n");
  EXPECT_EQ(none.status, labkit::ProfileStatus::kNoKernels);
  EXPECT_NE(none.why.find("no kernel"), std::string::npos);
  const labkit::Profile failed = labkit::parse_profile("==ERROR== Failed to connect\n");
  EXPECT_EQ(failed.status, labkit::ProfileStatus::kToolFailed);
  EXPECT_NE(failed.why.find("Failed to connect"), std::string::npos);
  // A header of another layout is not read as counters.
  EXPECT_EQ(labkit::parse_profile("\"Kernel\",\"Value\"\n\"k\",\"5\"\n").status,
            labkit::ProfileStatus::kNoKernels);
  EXPECT_NE(labkit::profile_metrics().find("dram__bytes_read.sum"), std::string::npos);
}

namespace {
// ncu's --csv report layout (ncu 2025.3): its header, and one row per kernel and metric.
const char* const kNcuCsvHead =
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
    "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\","
    "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
std::string ncu_row(int id, const std::string& kernel, const std::string& metric,
                    const std::string& value) {
  return "\"" + std::to_string(id) + "\",\"1\",\"worker\",\"h\",\"" + kernel +
         "\",\"1\",\"13\",\"(256, 1, 1)\",\"(12, 1, 1)\",\"0\",\"9.0\",\"s\",\"" + metric +
         "\",\"x\",\"" + value + "\"\n";
}
}  // namespace

// A kernel may be named anything: its name in ncu's lines never reads as ncu's permission
// error, and the executor's own measured kernels are counted (the grader tells a machine that
// measures nothing from a submission whose kernels were not measured).
TEST(JudgeHost, ProfileReadsOnlyNcusOwnPermissionLineAndCountsTheExecutorsKernels) {
  const std::string head = kNcuCsvHead;
  auto row = [](int id, const std::string& kernel, const std::string& value) {
    return ncu_row(id, kernel, "dram__bytes_read.sum", value);
  };
  const std::string student = "ERR_NVGPUCTRPERM_sum(float *)";
  std::string report = "==PROF== Profiling \"" + student + "\" - 1: 0%....50%....100%\n" +
                       "==ERROR== Failed to profile \"ERR_NVGPUCTRPERM\" in process 1\n" + head +
                       row(0, "labkit::fill_kernel(float *)", "64") + row(1, student, "4096");
  labkit::Profile p = labkit::parse_profile(report);
  ASSERT_EQ(p.status, labkit::ProfileStatus::kOk) << p.why;
  EXPECT_EQ(p.kernels, 1);
  EXPECT_EQ(p.own_kernels, 1);
  EXPECT_DOUBLE_EQ(p.dram_read_bytes, 4096.0);
  // Mangled names, as the stage asks ncu for them: the executor's template fill is its own
  // (its scope is labkit's), a student's kernel returning a harness type is not.
  p = labkit::parse_profile(
      head +
      row(0, "_ZN6labkit11elementwise11fill_kernelINS_3gen10UniformF32EEEvPNT_10value_typeEmS4_",
          "64") +
      row(1, "_Z1kIfEN6labkit3RetIT_E4typeEPf", "4096") + row(2, "plain_c_kernel", "8"));
  ASSERT_EQ(p.status, labkit::ProfileStatus::kOk) << p.why;
  EXPECT_EQ(p.own_kernels, 1);
  EXPECT_EQ(p.kernels, 2);
  EXPECT_DOUBLE_EQ(p.dram_read_bytes, 4104.0);
  // The executor's fill measured, the student's kernel not: counted, and a tool failure.
  p = labkit::parse_profile("==ERROR== Failed to profile kernel\n" + head +
                            row(0, "labkit::fill_kernel(float *)", "64"));
  EXPECT_EQ(p.status, labkit::ProfileStatus::kToolFailed);
  EXPECT_EQ(p.own_kernels, 1);
  EXPECT_EQ(labkit::parse_profile("==ERROR== ERR_NVGPUCTRPERM - no permission\n").own_kernels, 0);
}

// A coalesced kernel added to the call raises the sectors-weighted share, never the worst: the
// lesson reads the worst kernel of those that move at least 32 MiB.
TEST(JudgeHost, ProfileWorstSectorUseIsTheLeastOfTheLargeKernels) {
  const std::string head = kNcuCsvHead;
  auto row = [](int id, const std::string& kernel, const std::string& metric, double value) {
    return ncu_row(id, kernel, metric, std::to_string(value));
  };
  const char* sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
  const char* use = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct";
  std::string report = head;
  report += row(0, "matmul_rows(float *)", sectors, 7e10) + row(0, "matmul_rows(float *)", use, 12.5);
  report += row(1, "pad(float *)", sectors, 9e10) + row(1, "pad(float *)", use, 100);
  report += row(2, "tiny(float *)", sectors, 1000) + row(2, "tiny(float *)", use, 3);
  const labkit::Profile p = labkit::parse_profile(report);
  ASSERT_EQ(p.status, labkit::ProfileStatus::kOk) << p.why;
  EXPECT_GT(p.ld_sector_use_pct, 50.0);             // the weighted share: padded past 50%
  EXPECT_DOUBLE_EQ(p.ld_sector_use_worst_pct, 12.5);  // the tiny kernel's 3% does not count
  // No kernel large enough (the work split into small kernels): the least of them all.
  const labkit::Profile small = labkit::parse_profile(
      head + row(0, "k(float *)", sectors, 1000) + row(0, "k(float *)", use, 12.5) +
      row(1, "pad(float *)", sectors, 900000) + row(1, "pad(float *)", use, 100));
  EXPECT_DOUBLE_EQ(small.ld_sector_use_worst_pct, 12.5);
  EXPECT_GT(small.ld_sector_use_pct, 90.0);
  // Reads through value-returning atomics count: an uncoalesced atomicOr(p, 0) read (32
  // sectors a request) beside a coalesced decoy load.
  const labkit::Profile atomics = labkit::parse_profile(
      head + row(0, "k(float *)", sectors, 2.1e6) + row(0, "k(float *)", use, 100) +
      row(0, "k(float *)", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", 7e10) +
      row(0, "k(float *)", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", 7e10 / 32));
  EXPECT_NEAR(atomics.ld_sector_use_worst_pct, 12.5, 0.1);
  EXPECT_DOUBLE_EQ(atomics.atom_sectors, 7e10);
  EXPECT_NE(labkit::profile_metrics().find("global_op_atom.sum"), std::string::npos);
}

TEST(JudgeHost, ProfileOnlyTheNamedBenchmarks) {
  labkit::WorkerOptions options;
  EXPECT_FALSE(labkit::profile_wanted(options, "scan/v3/i32/268435456"));
  options.profiler = "/usr/local/cuda/bin/ncu";
  EXPECT_TRUE(labkit::profile_wanted(options, "scan/v3/i32/268435456"));
  options.profile_only = {"scan/v3/i32"};
  EXPECT_TRUE(labkit::profile_wanted(options, "scan/v3/i32"));
  EXPECT_TRUE(labkit::profile_wanted(options, "scan/v3/i32/268435456"));
  EXPECT_FALSE(labkit::profile_wanted(options, "scan/v3/i32x/268435456"));
  EXPECT_FALSE(labkit::profile_wanted(options, "scan/v3/f32/268435456"));
  EXPECT_FALSE(labkit::profile_wanted(options, "scan/v3"));
}
