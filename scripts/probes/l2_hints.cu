// What an L2 eviction-priority hint carries across the benchmark's flush, on this GPU: the
// measurements behind labkit::L2Flusher (common/src/bench.cpp) and the worker's reset of
// persisting lines (red team round 37, docs/threat-model.md). Not part of a grading.
//
//   nvcc -arch=sm_90 -O2 -std=c++17 -o /tmp/l2_hints scripts/probes/l2_hints.cu && /tmp/l2_hints
//
// Each line: a scenario and the median of 25 timed reads of a buffer X of 0.6 x L2 (or of a
// fresh buffer Y). S0 against S2: whether lines read with an evict_last policy survive a flush
// that writes twice L2; S3, S12b: whether cudaCtxResetPersistingL2Cache, from this context or
// another process's, undoes that; S7 against S8: the write-back a writing flush leaves, and
// whether an evict_first read dodges it; S9-S11: a reading flush.
#include <cuda_runtime.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <unistd.h>
#include <sys/wait.h>
#include <csignal>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

__global__ void readk(const float4* x, size_t n, float* out, int mode) {
  unsigned long long pol = 0;
  if (mode == 1) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  if (mode == 2) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  float acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float4 v;
    if (mode == 0) {
      v = x[i];
    } else {
      asm volatile("ld.global.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(x + i), "l"(pol));
    }
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) out[0] = acc;
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1 && std::strcmp(argv[1], "reset") == 0) {
    CK(cudaFree(0));
    CK(cudaCtxResetPersistingL2Cache());
    CK(cudaDeviceSynchronize());
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "server") == 0) {
    // Another process with a context of its own: on each line from stdin, 'r' resets the
    // persisting lines from its context, 'n' does nothing; it answers one byte when done.
    CK(cudaFree(0));
    char c;
    while (::read(0, &c, 1) == 1) {
      if (c == 'r') CK(cudaCtxResetPersistingL2Cache());
      CK(cudaDeviceSynchronize());
      if (::write(1, "k", 1) != 1) return 1;
    }
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "noop") == 0) {
    CK(cudaFree(0));
    CK(cudaDeviceSynchronize());
    return 0;
  }
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  size_t limit = 0;
  CK(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
  std::printf("%s L2 %d B, persisting max %d B, set-aside now %zu B\n", p.name, p.l2CacheSize,
              p.persistingL2CacheMaxSize, limit);
  const size_t l2 = p.l2CacheSize;
  const size_t xb = l2 * 6 / 10, fb = 2 * l2;
  float4 *x, *y, *rd; char* scratch; float* out;
  CK(cudaMalloc(&x, xb)); CK(cudaMalloc(&y, xb)); CK(cudaMalloc(&rd, fb)); CK(cudaMalloc(&scratch, fb));
  CK(cudaMalloc(&out, 64));
  CK(cudaMemset(x, 1, xb)); CK(cudaMemset(y, 1, xb)); CK(cudaMemset(rd, 1, fb));
  const size_t nx = xb / 16, nr = fb / 16;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  const int grid = p.multiProcessorCount * 8, block = 256;
  auto memflush = [&] { CK(cudaMemsetAsync(scratch, 0x5A, fb)); };
  auto readflush = [&] { readk<<<grid, block>>>(rd, nr, out, 0); CK(cudaGetLastError()); };
  auto timed = [&](const float4* buf, int mode) {
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(a));
    readk<<<grid, block>>>(buf, nx, out, mode);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    return ms * 1000.0f;  // us
  };
  auto run = [&](const char* name, auto body) {
    std::vector<float> v;
    for (int i = 0; i < 25; ++i) v.push_back(body());
    std::sort(v.begin(), v.end());
    std::printf("%-62s median %7.2f us  (min %7.2f, max %7.2f)\n", name, v[v.size() / 2], v[0], v.back());
  };
  run("S0 cold: read X normal; memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 0); memflush(); return timed(x, 0); });
  run("S1 hot: read X normal; time X", [&] { readk<<<grid, block>>>(x, nx, out, 0); return timed(x, 0); });
  run("S2 pin: read X evict_last; memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); memflush(); return timed(x, 0); });
  run("S3 pin; reset (same ctx); memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); CK(cudaCtxResetPersistingL2Cache()); memflush(); return timed(x, 0); });
  run("S4 pin; read flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); readflush(); return timed(x, 0); });
  run("S5 pin; reset; read flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); CK(cudaCtxResetPersistingL2Cache()); readflush(); return timed(x, 0); });
  run("S2b pin; memset flush x2; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); memflush(); memflush(); return timed(x, 0); });
  char cmd[4096];
  std::snprintf(cmd, sizeof cmd, "%s noop", argv[0]);
  run("S6a pin; other process (no reset); memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); if (std::system(cmd) != 0) std::exit(2); memflush(); return timed(x, 0); });
  std::snprintf(cmd, sizeof cmd, "%s reset", argv[0]);
  run("S6b pin; other process resets; memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); if (std::system(cmd) != 0) std::exit(2); memflush(); return timed(x, 0); });
  {
    std::vector<double> v;
    for (int i = 0; i < 25; ++i) {
      readk<<<grid, block>>>(x, nx, out, 1);
      CK(cudaDeviceSynchronize());
      const auto t0 = std::chrono::steady_clock::now();
      CK(cudaCtxResetPersistingL2Cache());
      v.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(v.begin(), v.end());
    std::printf("cudaCtxResetPersistingL2Cache on the host: median %.1f us, max %.1f us\n", v[12], v.back());
  }
  int to[2], from[2];
  if (::pipe(to) != 0 || ::pipe(from) != 0) return 3;
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(to[0], 0); ::dup2(from[1], 1);
    ::close(to[0]); ::close(to[1]); ::close(from[0]); ::close(from[1]);
    ::execl(argv[0], argv[0], "server", (char*)nullptr);
    std::_Exit(4);
  }
  auto ask = [&](char c) { char k; if (::write(to[1], &c, 1) != 1 || ::read(from[0], &k, 1) != 1) std::exit(5); };
  ask('n');  // its context is up
  run("S12a pin; other ctx does nothing; memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); ask('n'); memflush(); return timed(x, 0); });
  run("S12b pin; other ctx resets; memset flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); ask('r'); memflush(); return timed(x, 0); });
  run("S12c pin; other ctx does nothing; read flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); ask('n'); readflush(); return timed(x, 0); });
  run("S12d pin; other ctx resets; read flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 1); CK(cudaDeviceSynchronize()); ask('r'); readflush(); return timed(x, 0); });
  run("S12e normal X; other ctx nothing; read flush; time X", [&] { readk<<<grid, block>>>(x, nx, out, 0); CK(cudaDeviceSynchronize()); ask('n'); readflush(); return timed(x, 0); });
  ::close(to[1]);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  run("S7 debt: memset flush; time Y normal", [&] { memflush(); return timed(y, 0); });
  run("S8 debt: memset flush; time Y evict_first", [&] { memflush(); return timed(y, 2); });
  run("S9 memset + read flush; time Y normal", [&] { memflush(); readflush(); return timed(y, 0); });
  run("S10 memset + read flush; time Y evict_first", [&] { memflush(); readflush(); return timed(y, 2); });
  run("S11 read flush only; time Y normal", [&] { readflush(); return timed(y, 0); });
  return 0;
}
