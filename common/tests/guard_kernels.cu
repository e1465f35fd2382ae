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

namespace {

// Marks in a thread's shared or local memory: a thread that finds another call's mark (tag)
// counts it, then leaves its own.
__device__ __forceinline__ unsigned long long tagged(unsigned tag) {
  return (0xC0FFEEull << 32) | tag;
}

__device__ __forceinline__ void tally(unsigned long long was, unsigned tag,
                                      unsigned long long* found) {
  if ((was >> 32) == 0xC0FFEEull && static_cast<unsigned>(was) != tag) atomicAdd(found, 1ull);
}

__global__ void __launch_bounds__(256) shared_mark_kernel(unsigned tag, unsigned long long* found) {
  __shared__ unsigned long long cells[64];
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(cells + threadIdx.x % 64));
  unsigned long long was;
  asm volatile("ld.shared.u64 %0, [%1];" : "=l"(was) : "r"(at) : "memory");
  tally(was, tag, found);
  asm volatile("st.shared.u64 [%0], %1;" ::"r"(at), "l"(tagged(tag)) : "memory");
}

__global__ void __launch_bounds__(256) local_mark_kernel(unsigned tag, unsigned long long* found) {
  unsigned long long cells[4];
  const unsigned at = static_cast<unsigned>(__cvta_generic_to_local(cells + threadIdx.x % 4));
  unsigned long long was;
  asm volatile("ld.local.u64 %0, [%1];" : "=l"(was) : "r"(at) : "memory");
  tally(was, tag, found);
  asm volatile("st.local.u64 [%0], %1;" ::"r"(at), "l"(tagged(tag)) : "memory");
}

}  // namespace

void launch_shared_mark(unsigned tag, int carveout, unsigned long long* found) {
  if (carveout >= 0) {
    cudaFuncSetAttribute(shared_mark_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                         carveout);
  }
  shared_mark_kernel<<<4096, 256>>>(tag, found);
}

void launch_local_mark(unsigned tag, unsigned long long* found) {
  local_mark_kernel<<<4096, 256>>>(tag, found);
}
