// A test judge whose tests fail on purpose, for common/tests/where_to_grader.py: each runs the
// real labkit::check against labkit_fake_worker_sandboxed (no CUDA: its outputs come back as the
// judge's arena held them, all zeros), so the failures below take check's own path: verify,
// labkit::verdict, record_where, the results stream (gtest_main.cpp). Not a test of its own: it
// is run only by that script, which says what each test must report.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "labkit/check.hpp"
#include "labkit/compare.hpp"

namespace labkit {
namespace {

// One call of the fake worker's "allowed" variant (it answers, having computed nothing) with one
// float output `y` of `dims`, judged by `judge` (the zeros it gets back, as an Observed).
CheckSpec zeros_spec(const std::vector<uint64_t>& dims,
                     std::function<Verdict(const Observed&)> judge) {
  uint64_t count = 1;
  for (uint64_t d : dims) count *= d;
  CheckSpec s;
  s.what = "allowed on a made-up op";
  s.call.variant = "allowed";
  s.call.params = {static_cast<int64_t>(count)};
  s.call.buffers = {{"x", protocol::Role::kInput, 4, 1, {1}},
                    {"y", protocol::Role::kOutput, 4, count, dims}};
  s.call.inputs = {{Bytes(4, 0), {}}};
  s.verify = [judge](int, const std::vector<Bytes>& outputs) {
    return judge(observe(outputs[1], DType::kF32));
  };
  return s;
}

// A 70 x 50 output whose reference is 1 in rows 40-69 of columns 0-31 and 0 elsewhere: with
// tiles of 32, the map is "x." over "X." once the fake returns zeros.
TEST(WhereDemo, Matrix) {
  const size_t rows = 70, cols = 50;
  LABKIT_EXPECT_OK(check(zeros_spec({rows, cols}, [=](const Observed& got) {
    std::vector<float> values(got.values.begin(), got.values.end());
    std::vector<double> ref(rows * cols, 0.0);
    for (size_t i = 40; i < rows; ++i) {
      for (size_t j = 0; j < 32; ++j) ref[i * cols + j] = 1.0;
    }
    return verdict(compare_matrix(values, ref, uniform_bounds(ref, 1e-6, 0), rows, cols),
                   "C is wrong: ");
  })));
}

// A vector of 1000 whose reference is 2 from element 600 on, grouped at 500.
TEST(WhereDemo, Vector) {
  const size_t n = 1000;
  LABKIT_EXPECT_OK(check(zeros_spec({n}, [=](const Observed& got) {
    std::vector<double> ref(n, 0.0);
    for (size_t i = 600; i < n; ++i) ref[i] = 2.0;
    VectorLayout layout{n, 256, [](size_t i) { return i < 500 ? std::string("low half")
                                                              : std::string("high half"); },
                        "y"};
    return verdict(compare_vector(got, ref, uniform_bounds(ref, 1e-6, 0), layout),
                   "y is wrong: ");
  })));
}

// An NCHW output (2, 3, 5, 7) whose reference is 3 on image 1, channel 2, row 4.
TEST(WhereDemo, Nchw) {
  const NchwLayout layout{2, 3, 5, 7, 1, 1, "y"};
  LABKIT_EXPECT_OK(check(zeros_spec({2, 3, 5, 7}, [=](const Observed& got) {
    std::vector<double> ref(2 * 3 * 5 * 7, 0.0);
    for (size_t x = 0; x < 7; ++x) ref[((1 * 3 + 2) * 5 + 4) * 7 + x] = 3.0;
    return verdict(compare_nchw(got, ref, uniform_bounds(ref, 1e-6, 0), layout), "y is wrong: ");
  })));
}

// Right: zeros are what it wants. No where data.
TEST(WhereDemo, Right) {
  LABKIT_EXPECT_OK(check(zeros_spec({4}, [](const Observed& got) {
    return verdict(compare_vector(got, std::vector<double>(4, 0.0), std::vector<double>(4, 0.0),
                                  VectorLayout{4}));
  })));
}

// Wrong, but not by a comparison: a message and no where data.
TEST(WhereDemo, WrongWithoutAComparison) {
  LABKIT_EXPECT_OK(check(zeros_spec({4}, [](const Observed&) {
    return Verdict{"the output is wrong in a way no map shows\n", ""};
  })));
}

// A comparison that fails but is passed over (a check expected to fail): the test passes, and
// a passing test carries no where data.
TEST(WhereDemo, PassesAfterAnExpectedFailure) {
  EXPECT_FALSE(check(zeros_spec({4}, [](const Observed& got) {
    return verdict(compare_vector(got, std::vector<double>(4, 1.0), std::vector<double>(4, 0.0),
                                  VectorLayout{4}));
  })));
}

}  // namespace
}  // namespace labkit
