// main() of every lab's test judge: the labkit flags, then GoogleTest, with each test's verdict
// streamed as one JSON line to --labkit-results-fd (the grader reads only that). A test that did
// not pass carries, beside its message, the where data of its failed comparison ("where": the
// kWhereProperty recorded by labkit::check, computed here in the judge from the outputs it
// compared; nothing the worker says reaches it).
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "labkit/check.hpp"
#include "labkit/gpu.hpp"
#include "labkit/judge.hpp"
#include "labkit/judge_main.hpp"
#include "labkit/random.hpp"

namespace {

// The test's where data (labkit::record_where): a JSON object on one line, which goes into the
// results line as it is; "" when there is none.
std::string where_object(const ::testing::TestResult& r) {
  for (int i = 0; i < r.test_property_count(); ++i) {
    const ::testing::TestProperty& p = r.GetTestProperty(i);
    const std::string value = p.value();
    if (std::string(p.key()) == labkit::kWhereProperty && value.size() >= 2 &&
        value.front() == '{' && value.back() == '}' && value.find('\n') == std::string::npos) {
      return value;
    }
  }
  return "";
}

class ResultsStream : public ::testing::EmptyTestEventListener {
 public:
  explicit ResultsStream(int fd) : fd_(fd) {}

  void OnTestStart(const ::testing::TestInfo&) override {
    labkit::reset_failure_kind();
    start_ = std::chrono::steady_clock::now();
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult* r = info.result();
    std::string status = "passed", message;
    if (r->Skipped()) {
      status = "skipped";
    } else if (r->Failed()) {
      status = labkit::last_failure_kind();
    }
    for (int i = 0; i < r->total_part_count(); ++i) {
      const ::testing::TestPartResult& part = r->GetTestPartResult(i);
      if (part.failed() || part.skipped()) {
        if (!message.empty()) message += "\n";
        message += part.message();
      }
    }
    const std::string where =
        status == "passed" || status == "skipped" ? "" : where_object(*r);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    ++count_;
    line("{\"event\": \"test\", \"name\": " +
         labkit::json_quote(std::string(info.test_suite_name()) + "." + info.name()) +
         ", \"status\": \"" + status + "\", \"message\": " + labkit::json_quote(message) +
         ", \"seconds\": " + std::to_string(seconds) +
         (where.empty() ? "" : ", \"where\": " + where) + "}");
  }

  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    line("{\"event\": \"done\", \"tests\": " + std::to_string(count_) + "}");
  }

  void line(const std::string& text) {
    if (fd_ >= 0) labkit::write_all(fd_, text + "\n");
  }

 private:
  int fd_;
  int count_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

int main(int argc, char** argv) {
  labkit::JudgeArgs args;
  try {
    args = labkit::parse_judge_args(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  ::testing::InitGoogleTest(&argc, argv);
  auto* stream = new ResultsStream(args.results_fd);
  ::testing::UnitTest::GetInstance()->listeners().Append(stream);
  if (!::testing::GTEST_FLAG(list_tests)) {
    std::printf("[ labkit  ] GPU: %s\n", labkit::gpu_summary().c_str());
    std::printf("[ labkit  ] seed for hidden tests: %llu (LABKIT_SEED=%llu replays it)\n",
                static_cast<unsigned long long>(labkit::test_seed()),
                static_cast<unsigned long long>(labkit::test_seed()));
    if (labkit::gpu_status().available) {
      labkit::Worker& worker = labkit::shared_worker();
      const std::string sandbox = worker.sandbox();
      std::printf("[ labkit  ] worker: %s, %s\n", labkit::worker_options().path.c_str(),
                  sandbox.c_str());
      for (const auto& [variant, path] : labkit::worker_options().variant_paths) {
        std::printf("[ labkit  ] worker for %s: %s\n", variant.c_str(), path.c_str());
      }
      stream->line("{\"event\": \"worker\", \"sandbox\": " + labkit::json_quote(sandbox) +
                   ", \"device\": " + labkit::json_quote(worker.device()) + "}");
    }
  }
  return RUN_ALL_TESTS();
}
