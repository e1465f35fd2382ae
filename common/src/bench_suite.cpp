// The benchmark framework (see bench.hpp): the timing protocol every lab's benchmark uses.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "labkit/bench.hpp"
#include "labkit/check.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/gpu.hpp"
#include "labkit/judge_main.hpp"
#include "labkit/random.hpp"

namespace labkit::bench {
namespace {

bool g_failed = false;

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Thrown with a message for the student; becomes the benchmark's error.
struct Failed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string worker_problem(const std::string& when, Outcome o, const std::string& message) {
  std::ostringstream os;
  os << when << ": " << outcome_name(o) << ": " << message;
  return os.str();
}

// The timing overheads of the path itself, from calls that launch nothing.
struct Overhead {
  double host_ms = 0;   // the worker's host clock around a no-op
  double judge_ms = 0;  // the judge's clock around a no-op request
};

Overhead calibrate(Worker& w, uint64_t seed) {
  std::vector<double> host, judge;
  for (int i = 0; i < 7; ++i) {
    const OpResult prep = w.bench_prepare(mix_seed(seed, 1000 + i));
    if (!prep.ok()) throw Failed(worker_problem("preparing a calibration call", prep.outcome, prep.message));
    const TimedCall t = w.bench_timed(false);
    if (t.outcome != Outcome::kOk) throw Failed(worker_problem("a calibration call", t.outcome, t.message));
    host.push_back(t.host_ms);
    judge.push_back(t.judge_ms);
  }
  return {median(host), median(judge)};
}

// The time a call is graded on: the events on its stream, unless a clock that also sees other
// streams and the CPU (the worker's host clock, then the judge's own) says clearly more.
double graded_ms(const TimedCall& t, const Overhead& o, int* escapes) {
  double ms = t.event_ms;
  const double host = t.host_ms - o.host_ms;
  if (host > ms * 1.5 + 0.050) {
    ms = host;
    ++*escapes;
  }
  const double judge = t.judge_ms - o.judge_ms;
  if (judge > ms * 1.5 + 0.200) {
    ms = judge;
    ++*escapes;
  }
  return std::max(ms, 1e-6);
}

void run_spec(benchmark::State& state, const Spec& spec, bool smoke) {
  Worker& w = shared_worker();
  const OpResult setup = w.bench_setup(spec.call);
  if (!setup.ok()) throw Failed(worker_problem("setting up", setup.outcome, setup.message));
  std::unique_ptr<Baseline> baseline = spec.baseline();
  Stream stream;
  L2Flusher flusher;
  EventTimer timer(stream);
  const uint64_t base_seed = mix_seed(test_seed(), std::hash<std::string>{}(spec.name));
  const Overhead overhead = calibrate(w, base_seed);

  std::vector<double> student, base, ratios;
  int escapes = 0;
  const int min_samples = smoke ? 2 : spec.min_samples;
  const int max_samples = smoke ? 2 : spec.max_samples;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0;; ++i) {
    const uint64_t seed = mix_seed(base_seed, static_cast<uint64_t>(i));
    const OpResult prep = w.bench_prepare(seed);
    if (!prep.ok()) throw Failed(worker_problem("preparing call " + std::to_string(i + 1), prep.outcome, prep.message));
    const TimedCall t = w.bench_timed(true);
    if (t.outcome != Outcome::kOk) {
      throw Failed(worker_problem("timed call " + std::to_string(i + 1), t.outcome, t.message));
    }
    if (t.event_ms > t.judge_ms + 1.0 || t.host_ms > t.judge_ms + 1.0) {
      throw Failed("timed call " + std::to_string(i + 1) + ": the worker reported a time longer than "
                   "the judge's own clock measured for the whole request");
    }
    const double s_ms = graded_ms(t, overhead, &escapes);
    const OpResult out = w.bench_fetch();
    if (!out.ok()) throw Failed(worker_problem("fetching the output of call " + std::to_string(i + 1), out.outcome, out.message));
    std::string guard_problems;
    for (size_t b = 0; b < spec.call.buffers.size(); ++b) {
      guard_problems += describe_guard(spec.call.buffers[b], out.guards[b]);
    }
    if (!guard_problems.empty()) throw Failed("timed call " + std::to_string(i + 1) + ": " + guard_problems);

    baseline->prepare(seed, stream);
    flusher.flush(stream);
    // The worker starts the student's clock on an idle GPU (it synchronizes first, for its host
    // clock), so the launch latency is inside the student's window; the baseline's window must
    // hold it too, or small sizes would be graded against a head start.
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const double b_ms = timer.time_ms([&] { baseline->run(stream); });
    const std::string wrong = baseline->verify(out.outputs[0], stream);
    if (!wrong.empty()) {
      throw Failed("the output of timed call " + std::to_string(i + 1) +
                   " (fresh inputs) is wrong; every timed call is checked: " + wrong);
    }
    if (i < (smoke ? 0 : spec.warmup)) continue;
    student.push_back(s_ms);
    base.push_back(b_ms);
    ratios.push_back(b_ms / s_ms);
    const int n = static_cast<int>(student.size());
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (n >= max_samples || (n >= min_samples && elapsed > spec.budget_s)) break;
    if (n >= min_samples) {
      const auto [lo, hi] = median_interval(ratios);
      const double mid = median(base) / median(student);
      if ((hi - lo) / mid <= spec.target_interval) break;
    }
  }

  const double s_ms = median(student), b_ms = median(base);
  for (auto _ : state) state.SetIterationTime(s_ms / 1e3);
  const auto [lo, hi] = median_interval(ratios);
  auto& c = state.counters;
  c["ratio"] = b_ms / s_ms;
  c["ratio_lo"] = lo;
  c["ratio_hi"] = hi;
  if (spec.flop > 0) {
    c["GFLOPS"] = spec.flop / (s_ms * 1e-3) / 1e9;
    c["baseline_GFLOPS"] = spec.flop / (b_ms * 1e-3) / 1e9;
  }
  if (spec.bytes > 0) {
    c["GBps"] = spec.bytes / (s_ms * 1e-3) / 1e9;
    c["baseline_GBps"] = spec.bytes / (b_ms * 1e-3) / 1e9;
  }
  c["student_ms"] = s_ms;
  c["baseline_ms"] = b_ms;
  c["student_iqr"] = relative_iqr(student);
  c["baseline_iqr"] = relative_iqr(base);
  c["samples"] = static_cast<double>(student.size());
  c["untimed_work_calls"] = escapes;
  for (const auto& [name, value] : spec.counters) c[name] = value;
  state.SetLabel(spec.baseline_name);
}

// Console for people, JSON for the grader, from one run.
class TeeReporter : public benchmark::BenchmarkReporter {
 public:
  TeeReporter(benchmark::BenchmarkReporter* a, benchmark::BenchmarkReporter* b) : a_(a), b_(b) {}
  bool ReportContext(const Context& context) override {
    const bool ra = a_->ReportContext(context);
    const bool rb = b_->ReportContext(context);
    return ra && rb;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    a_->ReportRuns(runs);
    b_->ReportRuns(runs);
  }
  void Finalize() override {
    a_->Finalize();
    b_->Finalize();
  }

 private:
  benchmark::BenchmarkReporter* a_;
  benchmark::BenchmarkReporter* b_;
};

}  // namespace

int main(int argc, char** argv, const std::function<std::vector<Spec>(bool smoke)>& specs) {
  JudgeArgs args;
  try {
    args = parse_judge_args(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (!gpu_status().available) {
    std::fprintf(stderr, "no CUDA GPU: %s; benchmark skipped\n", gpu_status().reason.c_str());
    return 77;
  }
  std::fprintf(stderr, "GPU: %s; worker: %s (%s)\n", gpu_summary().c_str(),
               worker_options().path.c_str(), shared_worker().sandbox().c_str());
  const bool smoke = args.smoke;
  for (const Spec& spec : specs(smoke)) {
    benchmark::RegisterBenchmark(spec.name.c_str(),
                                 [spec, smoke](benchmark::State& state) {
                                   try {
                                     run_spec(state, spec, smoke);
                                   } catch (const std::exception& e) {
                                     g_failed = true;
                                     state.SkipWithError(e.what());
                                     for (auto _ : state) {
                                     }
                                   }
                                 })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::ConsoleReporter console;
  benchmark::JSONReporter json;
  std::ostringstream json_text;
  json.SetOutputStream(&json_text);
  json.SetErrorStream(&json_text);
  TeeReporter tee(&console, &json);
  benchmark::RunSpecifiedBenchmarks(&tee);
  benchmark::Shutdown();
  if (args.results_fd >= 0) write_all(args.results_fd, json_text.str());
  return g_failed ? 1 : 0;
}

}  // namespace labkit::bench
