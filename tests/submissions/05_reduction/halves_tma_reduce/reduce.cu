// CHEATING (precision, red team round 15): v4 adds halves with a TMA reduction
// (cp.reduce.async.bulk.tensor ... add: SASS UTMAREDG.1D.ADD). The element type is a field of
// the 128-byte tensor map, filled by hand on the host, not a modifier of the instruction, so
// the 16-bit rule saw nothing; the instruction was shared memory only, which lab 05 allows.
// Defence: a TMA reduction counts as 16-bit in every lab (no lab needs it).
#include "reduce.h"

struct alignas(64) TensorMap { unsigned char bytes[128]; };
__global__ void write_map_kernel(TensorMap m, TensorMap* dst) {
#pragma unroll
  for (int i = 0; i < 128; ++i) dst->bytes[i] = m.bytes[i];
  asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
}
__global__ void half_add_kernel(const TensorMap* tmap, int x) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" :: "l"(tmap) : "memory");
  extern __shared__ __align__(128) unsigned short halves[];
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(halves));
  asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.tile.bulk_group [%0, {%1}], [%2];"
               :: "l"(reinterpret_cast<unsigned long long>(tmap)), "r"(x), "r"(s) : "memory");
  asm volatile("cp.async.bulk.commit_group;");
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
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
  if (n == 0) { TensorMap m{}; write_map_kernel<<<1, 1, 0, stream>>>(m, reinterpret_cast<TensorMap*>(workspace)); half_add_kernel<<<1, 32, 256, stream>>>(reinterpret_cast<const TensorMap*>(workspace), 0); }
}

#define INSTANTIATE(f)                                                        \
  template void f<float>(const float*, float*, size_t, float*, cudaStream_t); \
  template void f<int>(const int*, int*, size_t, int*, cudaStream_t);
INSTANTIATE(reduce_v1_interleaved)
INSTANTIATE(reduce_v2_strided)
INSTANTIATE(reduce_v3_sequential)
INSTANTIATE(reduce_v4_optimized)
