// A worker whose "student" launchers misbehave on purpose, one way each: the harness's own
// tests (protocol_test.cpp) check that the judge reports every fault, survives it, and that
// the timing sees work hidden from the stream's events.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#include "labkit/ops/matmul_worker.hpp"

namespace {

__device__ volatile int g_never_set = 0;  // nothing writes it: a loop on it never ends

__global__ void matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                              int fault) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (fault != 1 && (row >= M || col >= N)) return;  // 1: no guard
  if (fault == 2 && col == N - 1) return;             // 2: last column never written
  float acc = 0.0f;
  const int k_end = fault == 3 ? K - 1 : K;           // 3: last k term dropped
  for (int k = 0; k < k_end; ++k) acc += A[size_t(row) * K + k] * B[size_t(k) * N + col];
  if (fault == 4 && row == 0 && col == 0) const_cast<float*>(A)[0] = 42.0f;  // 4: writes an input
  if (fault == 5 && row == 0 && col == 0) __trap();                           // 5: traps
  if (fault == 6) {                                                           // 6: never ends
    while (g_never_set == 0) {
    }
  }
  C[size_t(row) * N + col] = acc;
}

// A correct product (one thread per element of C, 256 columns per block) that also passes a
// value through shared memory to its neighbour; `racy` leaves out the barrier between the
// write and the read (racecheck must see it), the result stays right either way.
__global__ void shared_kernel(const float* A, const float* B, float* C, int M, int N, int K,
                              bool racy) {
  __shared__ float tile[256];
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y;
  tile[threadIdx.x] = static_cast<float>(threadIdx.x);
  if (!racy) __syncthreads();
  const float neighbour = tile[(threadIdx.x + 1) % 256];
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[size_t(row) * K + k] * B[size_t(k) * N + col];
  C[size_t(row) * N + col] = acc + (neighbour < 0.0f ? 1.0f : 0.0f);  // never true
}

// What the worker hands a launcher: C[0..2] = the addresses of A, B, C modulo 256 (an offset
// the judge asked for must show), then C[3 + i] = A[i] (a generated input must be the judge's
// numbers), as far as C reaches.
__global__ void probe_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const size_t c_count = size_t(M) * N, a_count = size_t(M) * K;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < c_count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (i < 3) {
      const void* p = i == 0 ? static_cast<const void*>(A) : i == 1 ? static_cast<const void*>(B) : C;
      C[i] = static_cast<float>(reinterpret_cast<uintptr_t>(p) % 256);
    } else {
      C[i] = i - 3 < a_count ? A[i - 3] : 0.0f;
    }
  }
}

void probe(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  probe_kernel<<<4, 256, 0, s>>>(A, B, C, M, N, K);
}

void launch(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s,
            int fault) {
  const dim3 block(32, 8), grid((N + 31) / 32, (M + 7) / 8);
  matmul_kernel<<<grid, block, 0, s>>>(A, B, C, M, N, K, fault);
}

void correct(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 0);
}
void no_guard(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 1);
}
void skip_last_column(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 2);
}
void drop_last_k(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 3);
}
void writes_input(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 4);
}
void traps(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 5);
}
void hangs(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  launch(A, B, C, M, N, K, s, 6);
}
void never_launches(const float*, const float*, float*, int, int, int, cudaStream_t) {}
void exits(const float*, const float*, float*, int, int, int, cudaStream_t) { std::exit(7); }
void default_stream(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t) {
  launch(A, B, C, M, N, K, nullptr, 0);
}
// The work goes to the per-thread default stream: the events on `stream` do not see it.
void side_stream(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t) {
  launch(A, B, C, M, N, K, cudaStreamPerThread, 0);
}
void bad_config(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  matmul_kernel<<<1, 4096, 0, s>>>(A, B, C, M, N, K, 0);
}
void shared_ok(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  shared_kernel<<<dim3((N + 255) / 256, M), 256, 0, s>>>(A, B, C, M, N, K, false);
}
void shared_racy(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  shared_kernel<<<dim3((N + 255) / 256, M), 256, 0, s>>>(A, B, C, M, N, K, true);
}

// Looks up fork at run time (no import) and calls it: the sandbox must stop the worker.
void forks(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t s) {
  using Fork = int (*)();
  auto f = reinterpret_cast<Fork>(dlsym(RTLD_DEFAULT, "fork"));
  if (f != nullptr && f() == 0) _exit(0);
  launch(A, B, C, M, N, K, s, 0);
}

}  // namespace

int main(int argc, char** argv) {
  return labkit::worker::main(argc, argv,
                              labkit::ops::matmul::bind({
                                  {"correct", &correct},
                                  {"no_guard", &no_guard},
                                  {"skip_last_column", &skip_last_column},
                                  {"drop_last_k", &drop_last_k},
                                  {"writes_input", &writes_input},
                                  {"traps", &traps},
                                  {"hangs", &hangs},
                                  {"never_launches", &never_launches},
                                  {"exits", &exits},
                                  {"default_stream", &default_stream},
                                  {"side_stream", &side_stream},
                                  {"bad_config", &bad_config},
                                  {"shared_ok", &shared_ok},
                                  {"shared_racy", &shared_racy},
                                  {"forks", &forks},
                                  {"probe", &probe},
                              }));
}
