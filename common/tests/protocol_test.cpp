// The judge <-> worker protocol, end to end on the GPU, against labkit_selftest_worker (whose
// launchers misbehave on purpose): each fault is reported for what it is, costs the call in
// flight only, and the next call runs in a fresh worker. Every test skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"

#include "labkit/check.hpp"
#include "labkit/gpu.hpp"
#include "labkit/judge.hpp"
#include "labkit/ops/matmul.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

namespace mm = ops::matmul;

std::string failure(const std::string& variant, const mm::Case& c) {
  const ::testing::AssertionResult r = labkit::check(mm::spec(variant, c));
  EXPECT_FALSE(r) << variant;
  return r.message();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(WorkerGpu, PassesACorrectKernelAlsoUnderCaptureAndRepeatedCalls) {
  LABKIT_REQUIRE_GPU();
  EXPECT_TRUE(labkit::check(mm::spec("correct", {127, 129, 33, 1, 1})));
  EXPECT_TRUE(labkit::check(mm::spec("correct", {1, 1, 1, 2, 3})));
  mm::Case captured{96, 80, 40, 3, 1};
  captured.capture = true;
  EXPECT_TRUE(labkit::check(mm::spec("correct", captured)));
}

// A generated input is drawn by the worker, fresh per call, the judge's numbers; a buffer
// with an offset starts that many bytes past an aligned address; a generated input that the
// launcher writes is reported like any other.
TEST(WorkerGpu, HonoursBufferOffsetsAndGeneratedInputs) {
  LABKIT_REQUIRE_GPU();
  const int M = 4, N = 64, K = 16;
  const uint64_t seed = 0xC0FFEE;
  auto make_spec = [&](const std::string& variant, int calls) {
    CheckSpec s;
    s.what = variant + " on generated A, offset B";
    s.call.variant = variant;
    s.call.params = mm::Sig::params(M, N, K);
    s.call.buffers = buffer_specs(mm::Sig::kBufs, mm::Sig::Sizes{M, N, K});
    BufferSpec& A = s.call.buffers[mm::Sig::kA];
    A.source = protocol::Source::kUniformF32;
    A.seed = seed;
    A.lo = -2;
    A.hi = 3;
    A.offset = 4;
    s.call.buffers[mm::Sig::kB].offset = 12;
    for (int c = 0; c < calls; ++c) {
      std::vector<Bytes>& in = s.call.inputs.emplace_back(mm::Sig::kCount);  // A: generated
      in[mm::Sig::kB] = Bytes(K * N * 4, 0);
    }
    s.verify = [=](int c, const std::vector<Bytes>& out) -> Verdict {
      const Bytes& C = out[mm::Sig::kC];
      std::vector<float> got(M * N);
      std::memcpy(got.data(), C.data(), C.size());
      if (got[0] != 4 || got[1] != 12 || got[2] != 0) {
        return {"offsets " + std::to_string(got[0]) + " " + std::to_string(got[1]) + " " +
                    std::to_string(got[2]),
                ""};
      }
      for (int i = 0; i < M * K; ++i) {
        const float want =
            uniform_f32(protocol::source_seed(seed, static_cast<uint32_t>(c)), i, -2.0f, 3.0f);
        if (got[3 + i] != want) return {"A[" + std::to_string(i) + "] is not the judge's draw", ""};
      }
      return {};
    };
    return s;
  };
  EXPECT_TRUE(check(make_spec("probe", 3)));
  const ::testing::AssertionResult written = check(make_spec("writes_input", 1));
  EXPECT_FALSE(written);
  EXPECT_TRUE(contains(written.message(), "changed its input A")) << written.message();
}

// keep_on_device: the outputs stay in the worker's buffers and are checked where they are
// (right_on_device gets them mapped into the judge); `verify` runs only when that check says
// wrong or a canary or input problem needs the report, on the outputs brought to the host.
TEST(WorkerGpu, KeptOutputsAreCheckedOnTheDeviceAndReportedFromTheHost) {
  LABKIT_REQUIRE_GPU();
  const int M = 4, N = 64, K = 16;
  const uint64_t seed = 0xBEEF;
  struct Counts {
    int device = 0, host = 0;
  };
  // probe writes C = {A's offset, B's offset, 0, A...}: right when A is the judge's draw.
  auto right = [=](const std::vector<float>& got) {
    if (got[0] != 0 || got[1] != 0 || got[2] != 0) return false;
    for (int i = 0; i < M * K; ++i) {
      if (got[3 + i] != uniform_f32(protocol::source_seed(seed, 0), i, -2.0f, 3.0f)) return false;
    }
    return true;
  };
  auto make_spec = [=](const std::string& variant, bool device_says, std::shared_ptr<Counts> n) {
    CheckSpec s;
    s.what = variant + " with its outputs kept on the device";
    s.call.variant = variant;
    s.call.params = mm::Sig::params(M, N, K);
    s.call.buffers = buffer_specs(mm::Sig::kBufs, mm::Sig::Sizes{M, N, K});
    BufferSpec& A = s.call.buffers[mm::Sig::kA];
    A.source = protocol::Source::kUniformF32;
    A.seed = seed;
    A.lo = -2;
    A.hi = 3;
    std::vector<Bytes>& in = s.call.inputs.emplace_back(mm::Sig::kCount);
    in[mm::Sig::kB] = Bytes(K * N * 4, 0);
    s.call.keep_on_device = true;
    s.right_on_device = [=](const std::vector<const void*>& out) {
      ++n->device;
      EXPECT_EQ(out[mm::Sig::kA], nullptr);  // an input
      std::vector<float> got(M * N);
      CUDA_CHECK(cudaMemcpy(got.data(), out.at(mm::Sig::kC), got.size() * 4, cudaMemcpyDeviceToHost));
      EXPECT_TRUE(right(got));  // the worker's output, mapped here
      return device_says;
    };
    s.verify = [=](int, const std::vector<Bytes>& out) -> Verdict {
      ++n->host;
      std::vector<float> got(M * N);
      std::memcpy(got.data(), out.at(mm::Sig::kC).data(), got.size() * 4);
      return right(got) ? Verdict{} : Verdict{"C is not what probe writes", ""};
    };
    return s;
  };
  auto n = std::make_shared<Counts>();
  EXPECT_TRUE(check(make_spec("probe", true, n)));
  EXPECT_EQ(n->device, 1);
  EXPECT_EQ(n->host, 0);  // right on the device: nothing crossed the host
  *n = Counts{};
  // The device check says wrong: the outputs come to the host (the same bytes) for the report.
  EXPECT_TRUE(check(make_spec("probe", false, n)));
  EXPECT_EQ(n->device, 1);
  EXPECT_EQ(n->host, 1);
  *n = Counts{};
  const ::testing::AssertionResult written = check(make_spec("writes_input", true, n));
  EXPECT_FALSE(written);
  EXPECT_TRUE(contains(written.message(), "changed its input A")) << written.message();
  EXPECT_EQ(n->device, 0);
  EXPECT_EQ(n->host, 1);
}

TEST(WorkerGpu, ExplainsEachWrongResult) {
  LABKIT_REQUIRE_GPU();
  const mm::Case shape{100, 70, 33, 5, 1};
  const std::string unwritten = failure("never_launches", shape);
  EXPECT_TRUE(contains(unwritten, "7000 never written")) << unwritten;
  const std::string column = failure("skip_last_column", shape);
  EXPECT_TRUE(contains(column, "wrong cols: 69 (1 of 70)")) << column;
  const std::string k = failure("drop_last_k", shape);
  EXPECT_TRUE(contains(k, "wrong rows: 0-99 (100 of 100)")) << k;
  const std::string guard = failure("no_guard", shape);
  EXPECT_TRUE(contains(guard, "past the end of C")) << guard;
  EXPECT_TRUE(contains(guard, "M=100 N=70 K=33")) << guard;
  EXPECT_TRUE(contains(guard, "seed 5")) << guard;
  const std::string input = failure("writes_input", shape);
  EXPECT_TRUE(contains(input, "changed its input A")) << input;
  const std::string launch = failure("bad_config", shape);
  EXPECT_TRUE(contains(launch, "the launch failed")) << launch;
}

// A wrong output's comparison is recorded on the test as data too (record_where): the column
// a kernel skipped, by its coordinates, for the grader's map.
TEST(WorkerGpu, RecordsWhereAWrongOutputIsWrongAsData) {
  LABKIT_REQUIRE_GPU();
  failure("skip_last_column", {100, 70, 33, 5, 1});
  const ::testing::TestResult* r =
      ::testing::UnitTest::GetInstance()->current_test_info()->result();
  std::string where;
  for (int i = 0; i < r->test_property_count(); ++i) {
    if (std::string(r->GetTestProperty(i).key()) == kWhereProperty) {
      where = r->GetTestProperty(i).value();
    }
  }
  EXPECT_TRUE(contains(where, R"("kind":"matrix","name":"C","shape":[100,70],)")) << where;
  EXPECT_TRUE(contains(where, R"("first":[{"index":69,"at":[0,69],)")) << where;
  EXPECT_TRUE(contains(where, R"("wrong_cols":{"ranges":[[69,69]],"ranges_total":1,"count":1,)"))
      << where;
}

TEST(WorkerGpu, AFaultCostsOneCallAndTheNextRunsInAFreshWorker) {
  LABKIT_REQUIRE_GPU();
  const std::string trap = failure("traps", {64, 64, 8, 1, 1});
  EXPECT_TRUE(contains(trap, "failed while running")) << trap;
  EXPECT_EQ(last_failure_kind(), "crashed");
  const std::string exited = failure("exits", {64, 64, 8, 1, 1});
  EXPECT_TRUE(contains(exited, "exited with code 7")) << exited;
  EXPECT_TRUE(labkit::check(mm::spec("correct", {64, 64, 8, 1, 1})));
}

TEST(WorkerGpu, AHangIsKilledAfterTheCallTimeout) {
  LABKIT_REQUIRE_GPU();
  WorkerOptions options = worker_options();
  options.call_timeout_s = 3;
  Worker worker(options);
  const CheckSpec spec = mm::spec("hangs", {64, 64, 8, 1, 1});
  const OpResult r = worker.run(spec.call);
  EXPECT_EQ(r.outcome, Outcome::kTimeout) << r.message;
  const OpResult next = worker.run(mm::spec("correct", {64, 64, 8, 1, 1}).call);
  EXPECT_EQ(next.outcome, Outcome::kOk) << next.message;
}

TEST(WorkerGpu, WorkOffTheGivenStreamFailsTheCaptureRule) {
  LABKIT_REQUIRE_GPU();
  for (const char* variant : {"default_stream", "side_stream"}) {
    mm::Case c{96, 80, 40, 3, 1};
    c.capture = true;
    const std::string message = failure(variant, c);
    EXPECT_TRUE(contains(message, "stream")) << message;
  }
}

TEST(WorkerGpu, IsConfinedAndUnprivilegedWhenTheJudgeIsRoot) {
  LABKIT_REQUIRE_GPU();
  const std::string sandbox = shared_worker().sandbox();
  EXPECT_TRUE(contains(sandbox, "seccomp")) << sandbox;
  EXPECT_FALSE(contains(sandbox, "SURVEY")) << sandbox;
  if (::geteuid() == 0) {
    EXPECT_TRUE(contains(sandbox, "uid 65534")) << sandbox;
  } else {
    EXPECT_TRUE(contains(sandbox, "same user")) << sandbox;
  }
}

// A launcher that finds fork at run time (no import the policy could see) is stopped by the
// sandbox, and the next call runs in a fresh worker.
TEST(WorkerGpu, TheSandboxStopsAForkFoundAtRunTime) {
  LABKIT_REQUIRE_GPU();
  const std::string forked = failure("forks", {64, 64, 8, 1, 1});
  EXPECT_TRUE(contains(forked, "stopped by the sandbox")) << forked;
  EXPECT_TRUE(contains(forked, "(fork)") || contains(forked, "(clone)")) << forked;
  EXPECT_TRUE(labkit::check(mm::spec("correct", {64, 64, 8, 1, 1})));
}

// The worker's benchmark buffers, mapped here by CUDA IPC, for the timing test below.
struct Shared {
  std::vector<char*> data;
  Shared(Worker& worker, const OpCall& call) {
    std::vector<SharedBuffer> handles;
    const OpResult setup = worker.bench_setup(call, &handles);
    EXPECT_TRUE(setup.ok()) << setup.message;
    for (size_t b = 0; b < handles.size() && setup.ok(); ++b) {
      cudaIpcMemHandle_t h;
      std::memcpy(&h, handles[b].handle.data(), sizeof(h));
      void* base = nullptr;
      EXPECT_EQ(cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess), cudaSuccess);
      data.push_back(static_cast<char*>(base) + protocol::kGuardBytes);
      fill_uniform_f32(reinterpret_cast<float*>(data.back()), call.buffers[b].count, 7, -1.0f, 1.0f, nullptr);
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ~Shared() {
    for (char* d : data) cudaIpcCloseMemHandle(d - protocol::kGuardBytes);
  }
};

// The judge's clock sees work the stream's events miss (here: the product runs on the
// per-thread default stream), and the output it copies is the worker's.
TEST(WorkerGpu, TheJudgesClockSeesWorkHiddenFromTheStreamsEvents) {
  LABKIT_REQUIRE_GPU();
  Worker worker(worker_options());
  const OpCall call = mm::spec("side_stream", {2048, 2048, 2048, 1, 1}).call;
  Shared shared(worker, call);
  ASSERT_EQ(shared.data.size(), 3u);
  fill_pattern32(shared.data[2], 2048 * 2048 * 4, kPoisonBits, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const TimedCall t = worker.bench_timed([] {}, [] {});
  ASSERT_EQ(t.outcome, Outcome::kOk) << t.message;
  // A 2048^3 product takes milliseconds; the events on `stream` see next to none of it.
  EXPECT_GT(t.judge_ms, 1.2 * t.event_ms + 0.5) << "event " << t.event_ms << " judge " << t.judge_ms;
  const std::vector<float> c = [&] {
    std::vector<float> host(2048 * 2048);
    EXPECT_EQ(cudaMemcpy(host.data(), shared.data[2], host.size() * 4, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }();
  EXPECT_NE(bits_of(c[0]), kPoisonBits);
}

TEST(SanitizerGpu, MemcheckNamesTheKernelAndLine) {
  LABKIT_REQUIRE_GPU();
  if (!sanitizer_available()) GTEST_SKIP() << "no --labkit-sanitizer given: nothing to test";
  const std::string found =
      shared_worker().sanitize(mm::spec("no_guard", {100, 70, 33, 5, 1}).call, "memcheck");
  EXPECT_TRUE(contains(found, "Invalid __global__")) << found;
  EXPECT_TRUE(contains(found, "selftest_worker.cu:")) << found;
  // The executor's own CUDA calls (its snapshot asks for attribute ids the device lacks) are
  // not findings: reported, they filled the printed ten and hid the kernel's access.
  EXPECT_FALSE(contains(found, "CUDA API call")) << found;
}

TEST(SanitizerGpu, RacecheckFindsAMissingBarrier) {
  LABKIT_REQUIRE_GPU();
  if (!sanitizer_available()) GTEST_SKIP() << "no --labkit-sanitizer given: nothing to test";
  const ::testing::AssertionResult racy = check_races(mm::spec("shared_racy", {2, 256, 256, 1, 1}));
  EXPECT_FALSE(racy);
  EXPECT_TRUE(contains(racy.message(), "racecheck found")) << racy.message();
  EXPECT_TRUE(check_races(mm::spec("shared_ok", {2, 256, 256, 1, 1})));
  // A wrong result fails the race check before racecheck runs (a kernel that computes nothing
  // has no races, and must not earn them).
  const ::testing::AssertionResult wrong = check_races(mm::spec("never_launches", {2, 256, 256, 1, 1}));
  EXPECT_FALSE(wrong);
  EXPECT_TRUE(contains(wrong.message(), "the result must be right")) << wrong.message();
}

}  // namespace
}  // namespace labkit
