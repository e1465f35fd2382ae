// Temporary probe driver (deleted after use): probe M N K [mode]; mode: once | twice | bench
#include "matmul.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include <chrono>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("RESULT CUDAERR %s: %s\n", #x, cudaGetErrorString(e)); fflush(stdout); return 3; } } while (0)
static const size_t G = 1024;
static uint32_t kCanary = 0x7FA5A5A5u;

static void fill(std::vector<float>& v, unsigned seed) { std::mt19937 g(seed); std::uniform_real_distribution<float> d(-1.f, 1.f); for (auto& x : v) x = d(g); }

static int check(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int M, int N, int K, bool full, long long* bad_out) {
  long long bad = 0; int shown = 0;
  auto one = [&](int i, int j) {
    double ref = 0, mag = 0;
    for (int k = 0; k < K; ++k) { double p = (double)a[(size_t)i*K+k] * b[(size_t)k*N+j]; ref += p; mag += std::fabs(p); }
    double tol = 1e-5 * std::fabs(ref) + 2.0 * K * 5.96e-8 * mag + 1e-6;
    float got = c[(size_t)i*N+j];
    if (!(std::fabs(got - ref) <= tol)) { if (shown++ < 3) printf("  mismatch (%d,%d) got %g ref %g tol %g\n", i, j, got, ref, tol); ++bad; }
  };
  if (full) {
    // i-k-j reference for speed
    std::vector<double> ref((size_t)M*N, 0.0), mag((size_t)M*N, 0.0);
    for (int i = 0; i < M; ++i) for (int k = 0; k < K; ++k) { double x = a[(size_t)i*K+k]; for (int j = 0; j < N; ++j) { double p = x * b[(size_t)k*N+j]; ref[(size_t)i*N+j] += p; mag[(size_t)i*N+j] += std::fabs(p); } }
    for (size_t t = 0; t < (size_t)M*N; ++t) { double tol = 1e-5*std::fabs(ref[t]) + 2.0*K*5.96e-8*mag[t] + 1e-6; float got = c[t];
      if (!(std::fabs(got - ref[t]) <= tol)) { if (shown++ < 3) printf("  mismatch @%zu got %g ref %g tol %g\n", t, got, ref[t], tol); ++bad; } }
  } else {
    std::mt19937 g(7); for (int s = 0; s < 2000; ++s) one(g() % M, g() % N);
  }
  *bad_out = bad; return bad == 0;
}

int main(int argc, char** argv) {
  int M = atoi(argv[1]), N = atoi(argv[2]), K = atoi(argv[3]);
  const char* mode = argc > 4 ? argv[4] : "once";
  int calls = !strcmp(mode, "twice") ? 2 : !strcmp(mode, "bench") ? 6 : 1;
  bool full = strcmp(mode, "bench") != 0;
  std::vector<float> a((size_t)M*K), b((size_t)K*N), c((size_t)M*N);
  float *dA, *dB, *dCg;
  CK(cudaMalloc(&dA, a.size()*4)); CK(cudaMalloc(&dB, b.size()*4)); CK(cudaMalloc(&dCg, (c.size()+2*G)*4));
  float* dC = dCg + G;
  std::vector<uint32_t> canary(G, kCanary);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  int ok = 1;
  for (int call = 0; call < calls; ++call) {
    fill(a, 100 + (call && strcmp(mode, "twice") == 0 ? call : 0)); fill(b, 200 + (call && strcmp(mode, "twice") == 0 ? call : 0));
    CK(cudaMemcpyAsync(dA, a.data(), a.size()*4, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(dB, b.data(), b.size()*4, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(dCg, canary.data(), G*4, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(dC + c.size(), canary.data(), G*4, cudaMemcpyHostToDevice, s));
    CK(cudaMemsetAsync(dC, 0xFF, c.size()*4, s));  // NaN poison
    CK(cudaStreamSynchronize(s));
    CK(cudaEventRecord(e0, s));
    matmul_v1_naive(dA, dB, dC, M, N, K, s);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1, s));
    CK(cudaStreamSynchronize(s));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
    std::vector<uint32_t> g1(G), g2(G);
    CK(cudaMemcpy(c.data(), dC, c.size()*4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g1.data(), dCg, G*4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g2.data(), dC + c.size(), G*4, cudaMemcpyDeviceToHost));
    bool guards = g1 == canary && g2 == canary;
    long long bad = 0; int good = check(a, b, c, M, N, K, full, &bad);
    if (!strcmp(mode, "bench")) printf("  call %d: %.3f ms (%.1f TFLOP/s)%s\n", call, ms, 2.0*M*N*K/ms/1e9, good ? "" : " WRONG");
    if (!guards) { printf("  canary overwritten (write past the end of C)\n"); ok = 0; }
    if (!good) { printf("  %lld bad elements (call %d)\n", bad, call); ok = 0; }
  }
  printf("RESULT %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
