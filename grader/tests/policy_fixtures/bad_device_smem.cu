// WRONG for a lab that refuses shared memory (lab 02: forbid_device_instructions
// "shared_memory"): every way into shared memory, one kernel each. Must fail the device rule
// there, naming each kernel and its instruction; compiles and passes every other rule (and the
// device rule of a lab that allows shared memory). canned/shared_memory.cuobjdump.txt is this
// file's `cuobjdump -sass -res-usage` (nvcc 13.0, -O3 -arch=sm_90a).
#include <cuda_pipeline.h>

#include "matmul.h"

// A static __shared__ array: STS, LDS and SHARED:1280 in -res-usage (1 KiB reserved + 256).
__global__ void k_static(float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
}

// Dynamic shared memory (extern __shared__): STS, LDS; SHARED shows the reserved 1 KiB only.
__global__ void k_dynamic(float* out) {
  extern __shared__ float d[];
  d[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = d[63 - threadIdx.x];
}

// A shared-memory atomic: ATOMS.
__global__ void k_atomic(int* out) {
  extern __shared__ int c[];
  atomicAdd(&c[threadIdx.x % 4], 1);
  __syncthreads();
  out[threadIdx.x] = c[0];
}

// st.shared and ld.shared in inline PTX: STS, LDS.
__global__ void k_ptx(float* out) {
  extern __shared__ float d[];
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(d)) + threadIdx.x * 4;
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(a), "f"(out[threadIdx.x]));
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a ^ 4));
  out[threadIdx.x] = v;
}

// A generic pointer made from the shared window (cvta.shared): S2R SR_SWINHI, then plain
// generic loads and stores (ST.E, LD.E) that name no shared memory.
__global__ void k_generic(float* out, int n) {
  unsigned long long base;
  asm("cvta.shared.u64 %0, 0;" : "=l"(base));
  float* p = reinterpret_cast<float*>(base) + threadIdx.x;
  *p = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = p[n];
}

// cp.async into a static array: LDGSTS, padded by ptxas with `@!PT LDS RZ, [RZ]` (never runs).
__global__ void k_cp_async(const float* in, float* out) {
  __shared__ __align__(16) float s[256];
  __pipeline_memcpy_async(&s[threadIdx.x * 4], &in[threadIdx.x * 4], 16);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[threadIdx.x] = s[255 - threadIdx.x];
}

// No shared memory: SHARED:1024 beside the others (the reserved kilobyte), and no finding.
__global__ void k_plain(float* out) { out[threadIdx.x] *= 2.0f; }

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)N; (void)K;
  k_static<<<1, 64, 0, stream>>>(C);
  k_dynamic<<<1, 64, 256, stream>>>(C);
  k_atomic<<<1, 64, 16, stream>>>(reinterpret_cast<int*>(C));
  k_ptx<<<1, 64, 256, stream>>>(C);
  k_generic<<<1, 64, 512, stream>>>(C, M);
  k_cp_async<<<1, 64, 0, stream>>>(A, C);
  k_plain<<<1, 64, 0, stream>>>(C);
}
