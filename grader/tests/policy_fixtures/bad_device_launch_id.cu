// WRONG for every lab: device code that reads the grid's launch id (%gridid: LDC.64 of
// c[0x0][0x30] on sm_90), which counts the kernels launched before it and so tells a call that
// follows others from the race check's replay in a fresh process; and the two other ways to the
// same slot: constant bank 0 read at a run-time index (a parameter array indexed by a variable,
// or a __grid_constant__ parameter's address moved back to the slot: c[0x0][Rn+...]), and the
// parameters' generic address (c[0x0][0x198]) escaping to a plain load. All must fail the device
// rule in every lab; a parameter array indexed by constants passes. So must any other slot of the
// driver's launch state in bank 0 (%envreg3: c[0x0][0x4c]), which honest code never reads, and a
// parameter slot past the kernel's own parameters (what another launch left there).
#include "matmul.h"

__global__ void launch_id_kernel(unsigned long long* out) {
  unsigned long long id;
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(id));
  out[threadIdx.x] = id;
}

__global__ void envreg_kernel(unsigned* out) {
  unsigned v;
  asm volatile("mov.u32 %0, %%envreg3;" : "=r"(v));
  out[threadIdx.x] = v;
}

__global__ void past_params_kernel(unsigned* out) {
  unsigned v;
  asm volatile("ld.param.u32 %0, [_Z18past_params_kernelPj_param_0+1024];" : "=r"(v));
  out[threadIdx.x] = v;
}

struct Table {
  float v[64];
};

__global__ void indexed_param_kernel(Table t, float* out, int i) { out[threadIdx.x] = t.v[i & 63]; }

__global__ void param_address_kernel(const __grid_constant__ Table t, unsigned long long* slot,
                                     float* out) {
  slot[0] = reinterpret_cast<unsigned long long>(&t.v[0]);
  __threadfence();
  const unsigned long long a = *reinterpret_cast<volatile unsigned long long*>(slot);
  out[threadIdx.x] = static_cast<float>(reinterpret_cast<const unsigned long long*>(a)[-60]);
}

__global__ void constant_index_kernel(Table t, float* out) { out[threadIdx.x] = t.v[3] + t.v[7]; }
