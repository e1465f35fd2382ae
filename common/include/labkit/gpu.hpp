// Is there a usable CUDA GPU? Tests skip with the reason when there is none; the grader
// refuses to award GPU points.
#pragma once

#include <string>

namespace labkit {

struct GpuStatus {
  bool available = false;
  std::string reason;       // why not, when unavailable
  std::string name;         // device 0
  std::string uuid;         // device 0's UUID, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  int major = 0, minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
  size_t global_mem_bytes = 0;
  int driver_version = 0, runtime_version = 0;
  int device_count = 0;
};

// Probes once (cached) with cudaGetDeviceCount / cudaGetDeviceProperties on device 0.
const GpuStatus& gpu_status();

// One line: "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 50 MiB L2)" or "no CUDA GPU: <reason>".
std::string gpu_summary();

// JSON object for the grader.
std::string gpu_status_json();

}  // namespace labkit

// In a GPU test: skip (visibly, with the reason) when no GPU can be used.
#define LABKIT_REQUIRE_GPU()                                                          \
  do {                                                                                \
    if (!::labkit::gpu_status().available) {                                          \
      GTEST_SKIP() << "no CUDA GPU: " << ::labkit::gpu_status().reason                \
                   << " (this test needs one; it was skipped, not passed)";           \
    }                                                                                 \
  } while (0)
