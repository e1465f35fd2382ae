// A correct, legitimate submission that uses many ordinary features: it must PASS the policy.
// Host helpers (static and not), a template kernel and its instantiations, std::min, printf,
// cudaMemsetAsync, cudaFuncSetAttribute, dynamic shared memory, __constant__ and __device__
// memory, inline PTX in device code, a __host__ __device__ helper, a class with a method.
#include <algorithm>
#include <cstdio>

#include "matmul.h"

namespace {
constexpr int kTile = 16;
}  // namespace

__constant__ float c_scale[4] = {1.0f, 1.0f, 1.0f, 1.0f};  // registered by nvcc
__device__ int d_launches;

__host__ __device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

__host__ __device__ int round_up(int a, int b) { return ceil_div(a, b) * b; }

struct Shape {
  int m, n, k;
  int tiles() const { return ceil_div(m, kTile) * ceil_div(n, kTile); }
};

__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

template <int TILE, typename T>
__global__ void tiled_kernel(const T* A, const T* B, T* C, int M, int N, int K) {
  extern __shared__ unsigned char smem_raw[];
  T* As = reinterpret_cast<T*>(smem_raw);
  T* Bs = As + TILE * TILE;
  const int col = blockIdx.x * TILE + threadIdx.x;
  const int row = blockIdx.y * TILE + threadIdx.y;
  T acc = 0;
  for (int t = 0; t < K; t += TILE) {
    const int ak = t + threadIdx.x, bk = t + threadIdx.y;
    As[threadIdx.y * TILE + threadIdx.x] = (row < M && ak < K) ? A[(size_t)row * K + ak] : T(0);
    Bs[threadIdx.y * TILE + threadIdx.x] = (col < N && bk < K) ? B[(size_t)bk * N + col] : T(0);
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y * TILE + k] * Bs[k * TILE + threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc * c_scale[0];
  if (lane_id() == 0 && row == 0 && col == 0) atomicAdd(&d_launches, 1);
}

__global__ void fill_kernel(float* p, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

static dim3 grid_for(const Shape& s) {
  return dim3(ceil_div(s.n, kTile), ceil_div(s.m, kTile));
}

int pick_block(int n) { return std::min(256, round_up(n, 32)); }

template <typename T>
void launch_tiled(const T* A, const T* B, T* C, const Shape& s, cudaStream_t stream) {
  const size_t smem = 2 * kTile * kTile * sizeof(T);
  static bool configured = false;
  if (!configured) {
    cudaFuncSetAttribute(tiled_kernel<kTile, T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(smem));
    configured = true;
  }
  tiled_kernel<kTile, T><<<grid_for(s), dim3(kTile, kTile), smem, stream>>>(A, B, C, s.m, s.n,
                                                                            s.k);
}

template void launch_tiled<double>(const double*, const double*, double*, const Shape&,
                                   cudaStream_t);

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  const Shape s{M, N, K};
  if (s.tiles() == 0) {
    printf("empty problem %d x %d\n", M, N);
    return;
  }
  cudaMemsetAsync(C, 0, sizeof(float) * M * N, stream);
  fill_kernel<<<ceil_div(M * N, pick_block(M * N)), pick_block(M * N), 0, stream>>>(C, 0, 0.f);
  launch_tiled(A, B, C, s, stream);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fprintf(stderr, "launch failed: %s\n", cudaGetErrorString(err));
}
