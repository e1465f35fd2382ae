// Host compute through the driver, found at run time (as host_compute_driver_copy), made to
// survive the judge's second look: a call over the CPU-time allowance is made once more, with
// the same inputs, and this launcher keeps every answer it computed, keyed by a hash of A and
// B, so that the same inputs again are answered from the cache in a few milliseconds.
// Defence: the second attempt runs in a fresh worker (a new process, arena, log and scratch
// folder), where no cache survives: the launcher computes on the CPU again, the call is over
// twice, and the lab earns no correctness points.
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

namespace {

using CopyDtoH = int (*)(void*, unsigned long long, unsigned long);
using CopyHtoD = int (*)(unsigned long long, const void*, unsigned long);
using Malloc = void* (*)(unsigned long);
using Free = void (*)(void*);

// Every answer computed, by inputs: what a worker asked the same call again would replay.
struct Kept {
  int m = 0, n = 0, k = 0;
  uint64_t hash = 0;
  float* c = nullptr;
};
Kept kept[64];
int n_kept = 0;

uint64_t fnv(const float* x, size_t count, uint64_t h) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(x);
  for (size_t i = 0; i < count * sizeof(float); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)stream;
  static const auto dtoh = rtld::fn<CopyDtoH>("cuMemcpyDtoH_v2");
  static const auto htod = rtld::fn<CopyHtoD>("cuMemcpyHtoD_v2");
  static const auto alloc = rtld::fn<Malloc>("malloc");
  static const auto release = rtld::fn<Free>("free");
  if (dtoh == nullptr || htod == nullptr || alloc == nullptr || release == nullptr) return;
  const size_t a = size_t(M) * K, b = size_t(K) * N, c = size_t(M) * N;
  float* h = static_cast<float*>(alloc((a + b) * sizeof(float)));
  if (h == nullptr) return;
  float *ha = h, *hb = h + a;
  dtoh(ha, reinterpret_cast<unsigned long long>(A), a * sizeof(float));
  dtoh(hb, reinterpret_cast<unsigned long long>(B), b * sizeof(float));
  const uint64_t hash = fnv(hb, b, fnv(ha, a, 0xcbf29ce484222325ull));
  for (int i = 0; i < n_kept; ++i) {
    if (kept[i].m == M && kept[i].n == N && kept[i].k == K && kept[i].hash == hash) {
      htod(reinterpret_cast<unsigned long long>(C), kept[i].c, c * sizeof(float));
      release(h);
      return;
    }
  }
  float* hc = static_cast<float*>(alloc(c * sizeof(float)));
  if (hc == nullptr) return;
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc += ha[size_t(i) * K + k] * hb[size_t(k) * N + j];
      hc[size_t(i) * N + j] = acc;
    }
  }
  htod(reinterpret_cast<unsigned long long>(C), hc, c * sizeof(float));
  release(h);
  if (n_kept < 64) kept[n_kept++] = {M, N, K, hash, hc};
  else release(hc);
}
