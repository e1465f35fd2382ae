#include "labkit/judge_main.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "labkit/judge.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

bool take(const char* arg, const char* flag, std::string* value) {
  const size_t n = std::strlen(flag);
  if (std::strncmp(arg, flag, n) != 0) return false;
  if (arg[n] == '\0') {
    *value = "";
    return true;
  }
  if (arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

uint64_t parse_u64(const std::string& text, const char* what) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || errno != 0 || end == nullptr || *end != '\0') {
    throw std::invalid_argument(std::string(what) + " is not a non-negative integer: '" + text + "'");
  }
  return v;
}

}  // namespace

bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

JudgeArgs parse_judge_args(int& argc, char** argv) {
  // A process the worker (same user) cannot open through /proc or trace; whatever a worker
  // leaves behind is reparented here (kill_strays).
  ::prctl(PR_SET_DUMPABLE, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  JudgeArgs args;
  WorkerOptions options = worker_options();
  bool seed_stdin = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (take(argv[i], "--labkit-worker", &v)) {
      options.path = v;
    } else if (take(argv[i], "--labkit-worker-for", &v)) {
      // VARIANT=PATH: the variant's calls go to that binary (WorkerOptions::variant_paths).
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
        throw std::invalid_argument("--labkit-worker-for: VARIANT=PATH, not '" + v + "'");
      }
      const std::string variant = v.substr(0, eq);
      if (!options.variant_paths.emplace(variant, v.substr(eq + 1)).second) {
        throw std::invalid_argument("--labkit-worker-for: " + variant + " is named twice");
      }
    } else if (take(argv[i], "--labkit-executor", &v)) {
      options.executor = v;  // empty: the worker is a self-contained runner (harness self-tests)
    } else if (take(argv[i], "--labkit-null-worker", &v)) {
      options.null_path = v;
    } else if (take(argv[i], "--labkit-results-fd", &v)) {
      args.results_fd = static_cast<int>(parse_u64(v, "--labkit-results-fd"));
    } else if (take(argv[i], "--labkit-seed-stdin", &v)) {
      seed_stdin = true;
    } else if (take(argv[i], "--labkit-ready-fd", &v)) {
      args.ready_fd = static_cast<int>(parse_u64(v, "--labkit-ready-fd"));
    } else if (take(argv[i], "--labkit-call-timeout", &v)) {
      const double s = std::strtod(v.c_str(), nullptr);
      if (!(s > 0 && s < 1e6)) throw std::invalid_argument("--labkit-call-timeout: bad seconds '" + v + "'");
      options.call_timeout_s = s;
    } else if (take(argv[i], "--labkit-test-budget", &v)) {
      const double s = std::strtod(v.c_str(), nullptr);
      if (!(s >= 0 && s < 1e6)) throw std::invalid_argument("--labkit-test-budget: bad seconds '" + v + "'");
      options.test_budget_s = s;
    } else if (take(argv[i], "--labkit-sanitizer", &v)) {
      options.sanitizer = v;
    } else if (std::strcmp(argv[i], "--labkit-race-audit") == 0) {
      options.race_audit = true;
    } else if (take(argv[i], "--labkit-profiler", &v)) {
      options.profiler = v;
    } else if (take(argv[i], "--labkit-profile-only", &v)) {
      std::string::size_type at = 0;
      while (at <= v.size()) {
        const std::string::size_type comma = std::min(v.find(',', at), v.size());
        if (comma == at) throw std::invalid_argument("--labkit-profile-only: an empty name in '" + v + "'");
        options.profile_only.push_back(v.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (take(argv[i], "--labkit-memory-lock", &v)) {
      if (v.empty() || v[0] != '/') throw std::invalid_argument("--labkit-memory-lock: an absolute path, not '" + v + "'");
      options.memory_lock = v;
    } else if (take(argv[i], "--labkit-no-shared-memory", &v)) {
      if (!v.empty()) throw std::invalid_argument("--labkit-no-shared-memory takes no value");
      options.no_shared_memory = true;
    } else if (take(argv[i], "--labkit-streaks", &v)) {
      if (v.empty() || v[0] != '/') throw std::invalid_argument("--labkit-streaks: an absolute path, not '" + v + "'");
      options.streaks = v;
    } else if (take(argv[i], "--labkit-memcheck", &v)) {
      if (v != "0" && v != "1") throw std::invalid_argument("--labkit-memcheck: 0 or 1, not '" + v + "'");
      options.memcheck = v == "1";
    } else if (std::strcmp(argv[i], "--labkit-list-benchmarks") == 0) {
      args.list = true;
    } else if (std::strcmp(argv[i], "--smoke") == 0) {
      args.smoke = true;
    } else if (std::strncmp(argv[i], "--labkit-", 9) == 0) {
      throw std::invalid_argument(std::string("unknown flag ") + argv[i]);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  set_worker_options(options);
  if (args.results_fd >= 0 && ::fcntl(args.results_fd, F_GETFD) < 0) {
    throw std::invalid_argument("--labkit-results-fd: descriptor " + std::to_string(args.results_fd) + " is not open");
  }
  if (args.ready_fd >= 0 && ::fcntl(args.ready_fd, F_GETFD) < 0) {
    throw std::invalid_argument("--labkit-ready-fd: descriptor " + std::to_string(args.ready_fd) + " is not open");
  }
  if (seed_stdin) {
    std::string line;
    if (!std::getline(std::cin, line)) throw std::invalid_argument("--labkit-seed-stdin: no seed on stdin");
    set_test_seed(parse_u64(line, "the seed"));
  }
  return args;
}

void judge_ready(JudgeArgs& args) {
  if (args.ready_fd < 0) return;
  const bool said = write_all(args.ready_fd, "ready\n");
  ::close(args.ready_fd);
  args.ready_fd = -1;
  if (!said) throw std::invalid_argument("--labkit-ready-fd: the grader is not reading it");
  std::string line;
  if (!std::getline(std::cin, line) || line != "go") {
    throw std::invalid_argument("--labkit-ready-fd: no 'go' on stdin");
  }
}

}  // namespace labkit
