// main() for every lab's test binary: says which GPU (or none) and which seed, then runs.
#include <cstdio>

#include <gtest/gtest.h>

#include "labkit/gpu.hpp"
#include "labkit/random.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!::testing::GTEST_FLAG(list_tests)) {
    std::printf("[ labkit  ] GPU: %s\n", labkit::gpu_summary().c_str());
    std::printf("[ labkit  ] seed for hidden tests: %llu (set LABKIT_SEED to replay)\n",
                static_cast<unsigned long long>(labkit::test_seed()));
  }
  return RUN_ALL_TESTS();
}
