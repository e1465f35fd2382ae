// A planner for the planner's own tests (planner_test.cpp, no GPU): a few kernels and launchers
// that plan what a lab's launchers plan, and some that do what the planner must not let them.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <unistd.h>

#include <stdexcept>

#include "labkit/worker.hpp"

using labkit::worker::Call;

__global__ void demo_kernel(float* out, int n, double scale) {
  if (threadIdx.x < n) out[threadIdx.x] = static_cast<float>(scale);
}
__global__ void other_kernel(int* x) { x[0] = 1; }

namespace {

void plan_ok(const Call& c) {
  demo_kernel<<<3, 128, 0, c.stream>>>(c.buffer<float>(0), 7, 2.5);
  cudaMemsetAsync(c.buffer<float>(1), 0, 16, c.stream);
}

// A cluster of two blocks, 100000 bytes of dynamic shared memory opted in first.
cudaLaunchAttribute pair_of_blocks() {
  cudaLaunchAttribute a{};
  a.id = cudaLaunchAttributeClusterDimension;
  a.val.clusterDim = {2, 1, 1};
  return a;
}

void plan_ex(const Call& c) {
  cudaFuncSetAttribute(other_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 100000);
  cudaLaunchAttribute cluster[] = {pair_of_blocks()};
  const cudaLaunchConfig_t config = {dim3(4), dim3(64), 100000, c.stream, cluster, 1};
  cudaLaunchKernelEx(&config, other_kernel, c.buffer<int>(0));
}

void plan_queries(const Call& c) {
  cudaDeviceProp prop;
  int sms = 0, blocks = 0;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) throw std::runtime_error("no properties");
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess ||
      sms != prop.multiProcessorCount) {
    throw std::runtime_error("attribute and property disagree");
  }
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, demo_kernel, 128, 0) != cudaSuccess) {
    throw std::runtime_error("no occupancy");
  }
  cudaStreamCaptureStatus capturing;
  cudaStreamIsCapturing(c.stream, &capturing);
  demo_kernel<<<sms * blocks, 128, 0, c.stream>>>(c.buffer<float>(0),
                                                   capturing == cudaStreamCaptureStatusActive, 1.0);
}

void plan_throws(const Call&) { throw std::runtime_error("the launcher says no"); }

void plan_opens_a_file(const Call&) {
  const int fd = ::open("/etc/hostname", O_RDONLY);
  if (fd >= 0) ::close(fd);
}

void host_function(int*) {}

void plan_unknown(const Call& c) {
  void* args[] = {nullptr};
  int* p = c.buffer<int>(0);
  args[0] = &p;
  if (cudaLaunchKernel(reinterpret_cast<const void*>(&host_function), 1, 1, args, 0, c.stream) !=
          cudaErrorInvalidDeviceFunction ||
      cudaGetLastError() != cudaErrorInvalidDeviceFunction || cudaGetLastError() != cudaSuccess) {
    throw std::runtime_error("a launch of a host function was not refused");
  }
}

}  // namespace

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              {{"ok", plan_ok, nullptr},
                               {"ex", plan_ex, nullptr},
                               {"queries", plan_queries, nullptr},
                               {"throws", plan_throws, nullptr},
                               {"opens_a_file", plan_opens_a_file, nullptr},
                               {"unknown", plan_unknown, nullptr}});
}
