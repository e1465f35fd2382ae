// CHEATING (protocol race, deferred work): at the benchmark shapes the launcher launches
// nothing: it notes the call, prints one line and returns. On the first such call it replaces
// the C library's `stdout` by a fopencookie stream whose write callback forwards the text to
// the real stdout and then launches the pending kernel on `stream`. Written against the old
// worker, which ran the launcher itself and flushed stdout after its clocks stopped and before
// its reply, so the kernel started outside every clock of the timed call. The launcher now
// runs in the planner, which flushes stdout after each call's plan is made (for a timed call,
// at the judge's ping, off the clock): the callback's launch is recorded into the next call's
// plan, which the executor checks and runs inside that call's window.
// fopencookie is found at run time (ELF header, _DYNAMIC, DT_DEBUG, r_debug, the link_map,
// libc's .dynsym): the object imports only printf, fwrite and stdout.
// Defence: the planner (a launch is only ever an op of a plan) and judge-side timing: the
// window ends at the judge's own copy of C. No gain: max_ratio.
#include <stdio.h>
#include <sys/types.h>

#include "matmul.h"

// ---- run-time symbol lookup with no import: this executable's ELF header (found by walking
// down from our own code), its _DYNAMIC, DT_DEBUG -> r_debug -> link_map, then each loaded
// library's .dynsym/.dynstr through its GNU (or SysV) hash table. x86-64 Linux, glibc.
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>

namespace rtld {

inline bool same(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

inline const ElfW(Ehdr)* own_header() {
  uintptr_t page = reinterpret_cast<uintptr_t>(&own_header) & ~uintptr_t{0xFFF};
  for (;; page -= 0x1000) {
    const auto* e = reinterpret_cast<const ElfW(Ehdr)*>(page);
    if (e->e_ident[0] == 0x7f && e->e_ident[1] == 'E' && e->e_ident[2] == 'L' &&
        e->e_ident[3] == 'F' && e->e_ident[EI_CLASS] == ELFCLASS64 &&
        e->e_machine == EM_X86_64 && (e->e_type == ET_DYN || e->e_type == ET_EXEC) &&
        e->e_phentsize == sizeof(ElfW(Phdr))) {
      return e;
    }
  }
}

inline const r_debug* debug_struct() {
  const ElfW(Ehdr)* e = own_header();
  const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(reinterpret_cast<const char*>(e) + e->e_phoff);
  uintptr_t bias = reinterpret_cast<uintptr_t>(e);
  for (int i = 0; i < e->e_phnum; ++i) {
    if (ph[i].p_type == PT_PHDR) bias = reinterpret_cast<uintptr_t>(ph) - ph[i].p_vaddr;
  }
  if (e->e_type == ET_EXEC) bias = 0;
  for (int i = 0; i < e->e_phnum; ++i) {
    if (ph[i].p_type != PT_DYNAMIC) continue;
    for (const auto* d = reinterpret_cast<const ElfW(Dyn)*>(bias + ph[i].p_vaddr); d->d_tag != DT_NULL; ++d) {
      if (d->d_tag == DT_DEBUG) return reinterpret_cast<const r_debug*>(d->d_un.d_ptr);
    }
  }
  return nullptr;
}

inline void* lookup_in(const link_map* l, const char* name) {
  if (l->l_ld == nullptr) return nullptr;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu = nullptr;
  const uint32_t* sysv = nullptr;
  for (const ElfW(Dyn)* d = l->l_ld; d->d_tag != DT_NULL; ++d) {
    uintptr_t v = d->d_un.d_ptr;
    if (v < l->l_addr) v += l->l_addr;  // the vDSO's (read-only) dynamic section is not relocated
    if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(v);
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(v);
    if (d->d_tag == DT_GNU_HASH) gnu = reinterpret_cast<const uint32_t*>(v);
    if (d->d_tag == DT_HASH) sysv = reinterpret_cast<const uint32_t*>(v);
  }
  if (symtab == nullptr || strtab == nullptr) return nullptr;
  auto hit = [&](uint32_t i) -> void* {
    const ElfW(Sym)& s = symtab[i];
    if (s.st_shndx == SHN_UNDEF || s.st_value == 0 || !same(strtab + s.st_name, name)) return nullptr;
    void* at = reinterpret_cast<void*>(l->l_addr + s.st_value);
    if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC) at = reinterpret_cast<void* (*)()>(at)();
    return at;
  };
  if (gnu != nullptr) {
    uint32_t h = 5381;
    for (const char* c = name; *c != '\0'; ++c) h = h * 33 + static_cast<unsigned char>(*c);
    const uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
    const auto* buckets = gnu + 4 + 2 * bloom_size;  // 64-bit bloom words
    const auto* chain = buckets + nbuckets;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset) return nullptr;
    for (;; ++i) {
      const uint32_t ch = chain[i - symoffset];
      if ((ch | 1) == (h | 1)) {
        if (void* at = hit(i)) return at;
      }
      if (ch & 1) return nullptr;
    }
  }
  if (sysv != nullptr) {
    uint32_t h = 0;
    for (const char* c = name; *c != '\0'; ++c) {
      h = (h << 4) + static_cast<unsigned char>(*c);
      const uint32_t g = h & 0xf0000000u;
      if (g != 0) h ^= g >> 24;
      h &= ~g;
    }
    const uint32_t nbucket = sysv[0];
    const uint32_t* bucket = sysv + 2;
    const uint32_t* chain = bucket + nbucket;
    for (uint32_t i = bucket[h % nbucket]; i != 0; i = chain[i]) {
      if (void* at = hit(i)) return at;
    }
  }
  return nullptr;
}

// The address of `name` in the first loaded object that defines it, or nullptr.
inline void* find(const char* name) {
  const r_debug* rd = debug_struct();
  if (rd == nullptr) return nullptr;
  for (const link_map* l = rd->r_map; l != nullptr; l = l->l_next) {
    if (void* at = lookup_in(l, name)) return at;
  }
  return nullptr;
}

template <typename F>
F fn(const char* name) {
  return reinterpret_cast<F>(find(name));
}

}  // namespace rtld

__global__ void matmul_v1_naive_kernel(const float* A, const float* B, float* C, int M, int N,
                                       int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}

namespace {

void launch_honest(const float* A, const float* B, float* C, int M, int N, int K,
                   cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

// The benchmarks' shapes (1024^3, 4096^3); no test uses a square power of two this large.
[[maybe_unused]] bool bench_like(int M, int N, int K) {
  return M == N && N == K && M >= 1024 && (M & (M - 1)) == 0;
}

}  // namespace

namespace {

struct Pending {
  const float* A;
  const float* B;
  float* C;
  int M, N, K;
  cudaStream_t stream;
  bool armed;
};
Pending g_pending{};
FILE* g_real_stdout = nullptr;

ssize_t on_write(void*, const char* buf, size_t n) {
  if (g_real_stdout != nullptr) {
    fwrite(buf, 1, n, g_real_stdout);
    fflush(g_real_stdout);
  }
  if (g_pending.armed) {
    g_pending.armed = false;
    launch_honest(g_pending.A, g_pending.B, g_pending.C, g_pending.M, g_pending.N, g_pending.K,
                  g_pending.stream);
  }
  return static_cast<ssize_t>(n);
}

bool hook_stdout() {
  static int state = 0;  // 0 not tried, 1 hooked, 2 impossible
  if (state == 0) {
    using OpenCookieFn = FILE* (*)(void*, const char*, cookie_io_functions_t);
    const auto open_cookie = rtld::fn<OpenCookieFn>("fopencookie");
    cookie_io_functions_t io{};
    io.write = on_write;
    FILE* f = open_cookie != nullptr ? open_cookie(nullptr, "w", io) : nullptr;
    if (f != nullptr) {
      g_real_stdout = stdout;
      stdout = f;  // the worker's fflush(stdout) now calls on_write
    }
    state = f != nullptr ? 1 : 2;
  }
  return state == 1;
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (!bench_like(M, N, K) || !hook_stdout()) {
    launch_honest(A, B, C, M, N, K, stream);
    return;
  }
  g_pending = Pending{A, B, C, M, N, K, stream, true};
  printf("v1_naive: %d x %d x %d queued\n", M, N, K);  // something for the flush to write
}
