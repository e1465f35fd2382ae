// CHEATING (precision, red team round 14): v4 adds halves with the bulk copy-reduce unit
// (cp.reduce.async.bulk ... add.noftz.f16: SASS UBLKRED.G.S.ADD.F16.RN). The device rule put the
// instruction in the shared-memory family only, which lab 05 allows, and never looked at its
// 16-bit type. Defence: an instruction belongs to every family it is in (device_families).
#include "reduce.h"

__global__ void bulk_halves_kernel(unsigned short* g) {
  __shared__ alignas(128) unsigned short s[256];
  s[threadIdx.x] = 0;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(s));
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%0], [%1], 512;"
                 :: "l"(g), "r"(sa) : "memory");
    asm volatile("cp.async.bulk.commit_group; cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

// The other variants compute nothing: the policy refuses the file before any test runs.
template <typename T>
void reduce_v1_interleaved(const T*, T*, size_t, T*, cudaStream_t) {}
template <typename T>
void reduce_v2_strided(const T*, T*, size_t, T*, cudaStream_t) {}
template <typename T>
void reduce_v3_sequential(const T*, T*, size_t, T*, cudaStream_t) {}
template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  bulk_halves_kernel<<<1, 256, 0, stream>>>(reinterpret_cast<unsigned short*>(workspace));
}

#define INSTANTIATE(f)                                                        \
  template void f<float>(const float*, float*, size_t, float*, cudaStream_t); \
  template void f<int>(const int*, int*, size_t, int*, cudaStream_t);
INSTANTIATE(reduce_v1_interleaved)
INSTANTIATE(reduce_v2_strided)
INSTANTIATE(reduce_v3_sequential)
INSTANTIATE(reduce_v4_optimized)
