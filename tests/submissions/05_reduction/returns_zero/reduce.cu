// WRONG (does nothing): every launcher stores 0 in out[0] with a one-thread kernel on the
// stream: the "return 0" that inputs of mean zero would let through (a sum of zero-mean values
// is near 0, and a float tolerance that scales with sum|x| would accept it). The tests' inputs
// have a non-zero mean, so every sum is far from 0.
// Caught by: every MatchesReference, repeat and stream test (but see cases.toml: the race tests
// pass, as there is no shared memory to race on, and an int input that sums to 0 passes).
#include "reduce.h"

namespace {

template <typename T>
__global__ void store_zero(T* out) { out[0] = T(0); }

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T*, T* out, size_t, T*, cudaStream_t stream) {
  store_zero<T><<<1, 1, 0, stream>>>(out);
}

template <typename T>
void reduce_v2_strided(const T*, T* out, size_t, T*, cudaStream_t stream) {
  store_zero<T><<<1, 1, 0, stream>>>(out);
}

template <typename T>
void reduce_v3_sequential(const T*, T* out, size_t, T*, cudaStream_t stream) {
  store_zero<T><<<1, 1, 0, stream>>>(out);
}

template <typename T>
void reduce_v4_optimized(const T*, T* out, size_t, T*, cudaStream_t stream) {
  store_zero<T><<<1, 1, 0, stream>>>(out);
}

template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);
