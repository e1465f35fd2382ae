// labkit_gpu_info: prints the GPU the labs would run on as JSON; exit 0 with a usable GPU,
// 1 without. The grader runs it before any GPU step.
#include <cstdio>

#include "labkit/gpu.hpp"

int main() {
  std::printf("%s\n", labkit::gpu_status_json().c_str());
  return labkit::gpu_status().available ? 0 : 1;
}
