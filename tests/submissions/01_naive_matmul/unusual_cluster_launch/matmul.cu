// CORRECT (unusual): thread-block clusters (sm_90). The reference kernel launched with
// cudaLaunchKernelEx and a cluster dimension of 2 x 1 x 1 (the grid's x rounded up to even);
// each block waits at a cluster barrier (cooperative_groups::this_cluster().sync()) before it
// computes. Nothing here needs a system call the worker's sandbox refuses: it must keep full
// correctness.
#include <cooperative_groups.h>

#include "matmul.h"

namespace cg = cooperative_groups;

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  cg::this_cluster().sync();  // every block of the cluster reaches it: no early return before
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const dim3 block(32, 8);
  unsigned gx = (N + block.x - 1) / block.x;
  gx += gx % 2;  // a whole number of clusters
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(gx, (M + block.y - 1) / block.y);
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 2;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, matmul_v1_naive_kernel, A, B, C, M, N, K);
}
