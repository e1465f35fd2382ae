// CHEATING (vendor library): calls cuBLAS SGEMM without including any cuBLAS header and
// without linking cuBLAS: the launcher dlopen()s libcublas at run time and looks up
// cublasCreate_v2, cublasSetStream_v2 and cublasSgemm_v2 with dlsym, declaring their types by
// hand. Neither an include rule nor a link failure would stop it. (If no libcublas can be
// loaded it falls back to a naive kernel.)
// Defence: the policy's import rule (dlopen, dlsym: no dynamic loading in a launcher).
#include <dlfcn.h>

#include "matmul.h"

namespace {

using Handle = void*;
using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using SgemmFn = int (*)(Handle, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);

struct Cublas {
  Handle handle = nullptr;
  SetStreamFn set_stream = nullptr;
  SgemmFn sgemm = nullptr;
  bool ok = false;
};

Cublas load() {
  Cublas c;
  const char* names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12"};
  void* lib = nullptr;
  for (const char* name : names) {
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  }
  if (lib == nullptr) return c;
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
  c.set_stream = reinterpret_cast<SetStreamFn>(dlsym(lib, "cublasSetStream_v2"));
  c.sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cublasSgemm_v2"));
  c.ok = create != nullptr && c.set_stream != nullptr && c.sgemm != nullptr &&
         create(&c.handle) == 0;
  return c;
}

}  // namespace

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  static Cublas cublas = load();
  if (cublas.ok) {
    const float one = 1.0f, zero = 0.0f;
    const int kNoTranspose = 0;  // CUBLAS_OP_N
    cublas.set_stream(cublas.handle, stream);
    // Row-major C = A * B is column-major C^T = B^T * A^T.
    cublas.sgemm(cublas.handle, kNoTranspose, kNoTranspose, N, M, K, &one, B, N, A, K, &zero, C, N);
    return;
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
