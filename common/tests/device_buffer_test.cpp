// GPU tests of the harness itself: each check must catch the fault it is there for.
// Every test here skips (visibly) without a GPU.
#include <gtest/gtest.h>

#include "guard_kernels.hpp"
#include "labkit/bench.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_fill.hpp"
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

// The canary after the data runs to the end of the allocation's whole device pages: no byte
// past the 64 KiB guard is left where a kernel could keep a mark from one call to the next.
TEST(GuardedBufferGpu, TheTailCanaryRunsToTheEndOfTheAllocationsPages) {
  LABKIT_REQUIRE_GPU();
  GuardedBuffer buf(100 * sizeof(float));
  const long long guard_words = GuardedBuffer::kDefaultGuard / 4;
  const long long last = static_cast<long long>(kDevicePageBytes / 4) - guard_words - 1;
  float* data = reinterpret_cast<float*>(buf.data());
  launch_write_at(data, 100 + guard_words + 64, 1.0f);  // past the guard, in the page
  launch_write_at(data, last, 1.0f);                      // the allocation's last word
  LABKIT_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  const protocol::GuardInfo g = buf.check();
  EXPECT_EQ(g.after, 2u);
  EXPECT_EQ(g.first_after, static_cast<uint64_t>(guard_words + 64));
  EXPECT_EQ(guarded_allocation_bytes(kDevicePageBytes, 1 << 16), 2 * kDevicePageBytes);
  EXPECT_EQ(guarded_allocation_bytes(100, 0), 100u);  // exact buffers stay exact
}

// What one call's threads leave in shared and local memory, the next call's find, unless the
// executor's scrubs ran between them, whatever split between L1 and shared memory the kernel
// ran with (an H200 kept marks of the 8 KiB split that a block of all 228 KiB never reached).
TEST(ScrubGpu, NoMarkSurvivesTheSharedAndLocalScrubs) {
  LABKIT_REQUIRE_GPU();
  DeviceBuffer<unsigned long long> found(1);
  auto foreign = [&](bool shared, int carveout, bool scrub) {
    shared ? launch_shared_mark(1, carveout, found.get()) : launch_local_mark(1, found.get());
    LABKIT_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(found.get(), 0, sizeof(unsigned long long)));
    if (scrub) {
      EXPECT_TRUE(shared ? scrub_shared_memory(nullptr) : scrub_local_memory(0, nullptr));
    }
    shared ? launch_shared_mark(2, carveout, found.get()) : launch_local_mark(2, found.get());
    LABKIT_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    return found.download().at(0);
  };
  // The probes see marks without the scrubs (or this test could not fail) ...
  EXPECT_GT(foreign(true, -1, false), 0u);
  EXPECT_GT(foreign(false, -1, false), 0u);
  // ... and none with them.
  for (int carveout : {-1, 0, 3, 4, 10, 50, 100}) {
    EXPECT_EQ(foreign(true, carveout, true), 0u) << "shared memory, carveout " << carveout;
  }
  EXPECT_EQ(foreign(false, -1, true), 0u) << "local memory";
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
