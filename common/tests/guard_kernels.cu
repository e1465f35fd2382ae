// Small kernels the harness tests use to prove each check catches what it claims to.
#include "guard_kernels.hpp"

namespace {

__global__ void write_at_kernel(float* p, long long offset, float value) { p[offset] = value; }

__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void launch_write_at(float* p, long long offset, float value) {
  write_at_kernel<<<1, 1>>>(p, offset, value);
}

void launch_spin(long long cycles, cudaStream_t stream) { spin_kernel<<<1, 1, 0, stream>>>(cycles); }

void launch_bad_config(cudaStream_t stream) { spin_kernel<<<1, 4096, 0, stream>>>(1); }
