// GPU tests of the harness itself: each check must catch the fault it is there for.
// Every test here skips (visibly) without a GPU.
#include <gtest/gtest.h>

#include "guard_kernels.hpp"
#include "labkit/bench.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/gpu.hpp"
#include "labkit/random.hpp"

namespace labkit {
namespace {

TEST(DeviceBufferGpu, RoundTripAndMove) {
  LABKIT_REQUIRE_GPU();
  const std::vector<float> host = random_floats(1000, 3);
  DeviceBuffer<float> a(host);
  EXPECT_EQ(a.download(), host);
  DeviceBuffer<float> b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.download(), host);
  EXPECT_THROW(b.upload(std::vector<float>(3)), std::invalid_argument);
}

TEST(GuardedBufferGpu, CatchesWritesPastEitherEnd) {
  LABKIT_REQUIRE_GPU();
  GuardedBuffer buf(100 * sizeof(float));
  float* data = reinterpret_cast<float*>(buf.data());
  EXPECT_TRUE(buf.check().intact());
  launch_write_at(data, 99, 1.0f);  // inside: fine
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(buf.check().intact());
  launch_write_at(data, 103, 1.0f);
  launch_write_at(data, -2, 1.0f);
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  const protocol::GuardInfo g = buf.check();
  EXPECT_EQ(g.after, 1u);
  EXPECT_EQ(g.first_after, 3u);
  EXPECT_EQ(g.before, 1u);
  EXPECT_EQ(g.nearest_before, 2u);
}

TEST(GuardedBufferGpu, OddSizesRoundUpToWholeWordsAndNoGuardChecksNothing) {
  LABKIT_REQUIRE_GPU();
  GuardedBuffer odd(5);  // 2 words of data: byte 7 is still inside, word [2] is past the end
  launch_write_at(reinterpret_cast<float*>(odd.data()), 1, 1.0f);
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_TRUE(odd.check().intact());
  launch_write_at(reinterpret_cast<float*>(odd.data()), 2, 1.0f);
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(odd.check().after, 1u);
  EXPECT_EQ(odd.check().first_after, 0u);

  GuardedBuffer bare(16, 0);
  EXPECT_TRUE(bare.check().intact());
  EXPECT_NE(bare.data(), nullptr);
}

// A lead moves the data off the allocation's alignment; its words are canaries too, with and
// without a guard zone (compute-sanitizer replays run with none).
TEST(GuardedBufferGpu, ALeadMisalignsTheDataAndGuardsItsWords) {
  LABKIT_REQUIRE_GPU();
  for (size_t guard : {GuardedBuffer::kDefaultGuard, size_t{0}}) {
    GuardedBuffer buf(10 * sizeof(float), guard, 12);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buf.data()) % 256, 12u) << guard;
    EXPECT_TRUE(buf.check().intact()) << guard;
    launch_write_at(reinterpret_cast<float*>(buf.data()), -3, 1.0f);  // the first lead word
    LABKIT_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    const protocol::GuardInfo g = buf.check();
    EXPECT_EQ(g.before, 1u) << guard;
    EXPECT_EQ(g.nearest_before, 3u) << guard;
  }
}

TEST(CudaCheckGpu, BadLaunchConfigThrowsWithTheExpression) {
  LABKIT_REQUIRE_GPU();
  launch_bad_config(nullptr);
  try {
    LABKIT_CHECK_LAUNCH();
    FAIL() << "a 4096-thread block was not reported";
  } catch (const CudaError& e) {
    // CUDA reports an oversized block as an invalid configuration or an invalid value.
    EXPECT_TRUE(e.code() == cudaErrorInvalidConfiguration || e.code() == cudaErrorInvalidValue)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaGetLastError()"), std::string::npos) << e.what();
  }
}

TEST(EventTimerGpu, TimesDeviceWork) {
  LABKIT_REQUIRE_GPU();
  EventTimer timer(nullptr);
  const double short_ms = timer.time_ms([] { launch_spin(1000, nullptr); });
  const double long_ms = timer.time_ms([] { launch_spin(50'000'000, nullptr); });  // ~25 ms
  EXPECT_GT(long_ms, 5.0);
  EXPECT_GT(long_ms, 10 * short_ms);
}

}  // namespace
}  // namespace labkit
