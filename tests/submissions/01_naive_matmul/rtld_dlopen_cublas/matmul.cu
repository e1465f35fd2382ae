// CHEATING (run-time lookup, vendor library): every call multiplies with cuBLAS's
// cublasSgemm_v2 on `stream` (C^T = B^T A^T in cuBLAS's column-major terms). vendor_cublas_dlopen
// does the same with dlopen/dlsym imports, which the import rule refuses; here dlopen and dlsym
// themselves are found at run time -- this executable's ELF header, _DYNAMIC, DT_DEBUG, r_debug,
// the link_map and libc's .dynsym -- so the object imports nothing but nvcc's launch machinery,
// includes no cuBLAS header and has no link dependency.
// Defence: the worker's seccomp allow-list: dlopen must open the library (openat), which stops
// the worker on its first call: every test crashes with "sandbox".
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

// cuBLAS's C interface, declared by hand (no header): handles and enums are plain ints.
using Handle = void*;
using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using SgemmFn = int (*)(Handle, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
constexpr int kOpN = 0;      // CUBLAS_OP_N
constexpr int kNow = 2;      // RTLD_NOW
constexpr int kGlobal = 0x100;  // RTLD_GLOBAL

struct Cublas {
  Handle handle = nullptr;
  SetStreamFn set_stream = nullptr;
  SgemmFn sgemm = nullptr;
};

Cublas* cublas() {
  static Cublas c;
  static bool tried = false;
  if (tried) return c.sgemm != nullptr ? &c : nullptr;
  tried = true;
  using OpenFn = void* (*)(const char*, int);
  using SymFn = void* (*)(void*, const char*);
  const auto open = rtld::fn<OpenFn>("dlopen");
  const auto sym = rtld::fn<SymFn>("dlsym");
  if (open == nullptr || sym == nullptr) return nullptr;
  void* lib = nullptr;
  for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so",
                           "/usr/local/cuda/lib64/libcublas.so"}) {
    if ((lib = open(name, kNow | kGlobal)) != nullptr) break;
  }
  if (lib == nullptr) return nullptr;
  const auto create = reinterpret_cast<CreateFn>(sym(lib, "cublasCreate_v2"));
  c.set_stream = reinterpret_cast<SetStreamFn>(sym(lib, "cublasSetStream_v2"));
  const auto sgemm = reinterpret_cast<SgemmFn>(sym(lib, "cublasSgemm_v2"));
  if (create == nullptr || c.set_stream == nullptr || sgemm == nullptr || create(&c.handle) != 0) {
    return nullptr;
  }
  c.sgemm = sgemm;
  return &c;
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  // cublasCreate allocates: not while the harness records the stream into a graph.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  static bool created = false;
  if (!created) cudaStreamIsCapturing(stream, &capturing);
  Cublas* c = capturing == cudaStreamCaptureStatusNone ? cublas() : nullptr;
  created = created || c != nullptr;
  if (c != nullptr) {
    const float one = 1.0f, zero = 0.0f;
    c->set_stream(c->handle, stream);
    // Row-major C = A B is column-major C^T = B^T A^T: an N x M result, B first.
    c->sgemm(c->handle, kOpN, kOpN, N, M, K, &one, B, N, A, K, &zero, C, N);
    return;
  }
  const dim3 block(32, 8);
  const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  matmul_v1_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
