// CHEATING (vendor library): no kernel of its own: thrust::transform over a counting iterator
// computes each element of C with a functor, on the given stream (thrust::cuda::par_nosync).
// The arithmetic is right; the lab asks for the kernel and launch configuration, which Thrust
// chooses instead.
// Defence: the policy's include rule (no Thrust, CUB or other vendor library headers).
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>

#include "matmul.h"

namespace {

struct DotProduct {
  const float* A;
  const float* B;
  int N, K;
  __device__ float operator()(size_t idx) const {
    const size_t row = idx / N, col = idx % N;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[(size_t)k * N + col];
    return acc;
  }
};

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const size_t count = (size_t)M * N;
  thrust::transform(thrust::cuda::par_nosync.on(stream), thrust::counting_iterator<size_t>(0),
                    thrust::counting_iterator<size_t>(count), C, DotProduct{A, B, N, K});
}
