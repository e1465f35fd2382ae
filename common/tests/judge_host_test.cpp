// The judge's worker client against fake workers (no CUDA, no GPU needed): a reply that is not
// valid, silence, death, half a reply, impossible times. Each must become a failure of the call
// in flight, said for what it is, and never a pass.
#include <gtest/gtest.h>

#include <string>

#include "labkit/judge.hpp"

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
  const TimedCall t = w.bench_timed(true);
  EXPECT_EQ(t.outcome, Outcome::kProtocolError) << t.message;
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

}  // namespace
}  // namespace labkit
