// CHEATING (protocol race, forged early reply): on the first timed benchmark call the
// launcher looks on its stack for the judge's bench_timed request (protocol version 2 or 3)
// and writes a reply of its own -- status ok, 1 us on its clocks, the request's nonce echoed
// (version 3) -- to fd 4 before it launches anything, so that the judge's clock would stop at
// once. Against version 2, whose outputs were fetched through the arena, it also maps the
// arena (fd 5) and copies C into it with the driver's cuMemcpyDtoH_v2, at the output offset of
// the bench_setup request it finds on the stack. write, mmap and cuMemcpyDtoH_v2 are found at
// run time (ELF header, _DYNAMIC, DT_DEBUG, r_debug, the link_map, each library's .dynsym):
// nothing is imported. Tests: honest.
// Written against the old worker, which ran the launcher in the process that held the judge's
// requests, its reply pipe and the arena. The launcher now runs in the planner, which never
// holds a request of the judge's (a call reaches it as a plan request), so it finds none and
// launches as an honest launcher does; the planner has no arena and no driver, and its fd 4 is
// its pipe to the executor, read as plan frames (bytes that are not a frame end the executor).
// Defence: the planner, the nonce and judge-side timing: the judge copies C itself at the end
// of its own window. No gain: max_ratio.
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

// The worker's wire format, copied from common/include/labkit/protocol.hpp: version 2 ("LBK2",
// outputs fetched through the arena) and version 3 ("LBK3": judge-owned buffers, a nonce).
constexpr uint32_t kMagic2 = 0x4C424B32u, kMagic3 = 0x4C424B33u;
constexpr uint32_t kOpBenchSetup = 3, kOpBenchTimed = 5;
constexpr uint32_t kRoleOutput = 2;
constexpr int kReplyFd = 4, kArenaFd = 5;

struct BufferDesc2 {
  uint32_t role, elem_size;
  uint64_t count, in_offset, out_offset;
  uint32_t source, reserved;
  double lo, hi;
};
struct BufferDesc3 : BufferDesc2 {
  char ipc_handle[64];
  uint64_t ipc_offset;
};
template <typename Desc>
struct Request {
  uint32_t magic, op, flags, calls;
  char variant[64];
  uint32_t n_params, n_buffers;
  int64_t params[16];
  Desc buffers[8];
  uint64_t arena_bytes, seed_or_nonce;
};
using Request2 = Request<BufferDesc2>;
using Request3 = Request<BufferDesc3>;
struct GuardInfo {
  uint64_t before, after, first_after, nearest_before;
};
struct Reply {  // both versions: v3 turned `reserved` into `confined` and host_ms into `nonce`
  uint32_t magic, status;
  int32_t cuda_error;
  uint32_t failed_call;
  char message[1024];
  GuardInfo guards[8];
  uint32_t inputs_changed, reserved_or_confined;
  union {
    double host_ms_v2;
    uint64_t nonce_v3;
  } u1;
  double v2_event_ms_or_v3_event_ms;
  char device[128];
  uint32_t n_variants;
  char variants[16][64];
};
static_assert(sizeof(Reply) == 2480, "protocol.hpp's Reply");

// A request header of the worker with this op, on the main thread's stack above us.
const uint32_t* find_request(uint32_t op) {
  char here = 0;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(&here) + 7) & ~uintptr_t{7};
  const auto* stack_end = rtld::fn<void* const*>("__libc_stack_end");
  uintptr_t end = start + 64 * 1024;
  if (stack_end != nullptr && reinterpret_cast<uintptr_t>(*stack_end) < end) {
    end = reinterpret_cast<uintptr_t>(*stack_end);
  }
  for (uintptr_t at = start; at + sizeof(Request3) <= end; at += 8) {
    const auto* r = reinterpret_cast<const Request2*>(at);
    if ((r->magic == kMagic2 || r->magic == kMagic3) && r->op == op && r->calls >= 1 &&
        r->calls <= 8 && r->n_buffers <= 8 && r->n_params <= 16) {
      return reinterpret_cast<const uint32_t*>(at);
    }
  }
  return nullptr;
}

using WriteFn = long (*)(int, const void*, unsigned long);
using MmapFn = void* (*)(void*, unsigned long, int, int, int, long);
using DtoHFn = int (*)(void*, unsigned long long, unsigned long);

uint32_t g_replied_early = 0;  // the protocol's magic once the early reply is out

// The worker's reply to the timed request, before its kernel even starts: 1 us on its clocks,
// the request's nonce echoed (version 3).
void forge_early_reply() {
  const auto write = rtld::fn<WriteFn>("write");
  const uint32_t* req = find_request(kOpBenchTimed);
  if (write == nullptr || req == nullptr) return;
  static Reply fake;  // zero-filled: status ok, no canary damage
  fake.magic = req[0];
  if (req[0] == kMagic3) {
    fake.u1.nonce_v3 = reinterpret_cast<const Request3*>(req)->seed_or_nonce;
    fake.reserved_or_confined = 1;
  } else {
    fake.u1.host_ms_v2 = 0.001;
  }
  fake.v2_event_ms_or_v3_event_ms = 0.001;
  if (write(kReplyFd, &fake, sizeof(fake)) == static_cast<long>(sizeof(fake))) {
    g_replied_early = req[0];
  }
}

// Version 2: C -> the arena at the output's offset, as the worker's fetch would do, so that C
// is there when the judge reads the arena after the (early) reply to its fetch.
void copy_into_arena(const float* C, int M, int N) {
  static char* arena = nullptr;
  static uint64_t mapped = 0;
  const auto* setup = reinterpret_cast<const Request2*>(find_request(kOpBenchSetup));
  const auto mmap = rtld::fn<MmapFn>("mmap");
  const auto dtoh = rtld::fn<DtoHFn>("cuMemcpyDtoH_v2");
  if (setup == nullptr || setup->magic != kMagic2 || mmap == nullptr || dtoh == nullptr) return;
  if (arena == nullptr || mapped < setup->arena_bytes) {
    void* m = mmap(nullptr, setup->arena_bytes, 3 /* PROT_READ|PROT_WRITE */, 1 /* MAP_SHARED */,
                   kArenaFd, 0);
    if (m == reinterpret_cast<void*>(-1)) return;
    arena = static_cast<char*>(m);
    mapped = setup->arena_bytes;
  }
  for (uint32_t b = 0; b < setup->n_buffers; ++b) {
    const BufferDesc2& d = setup->buffers[b];
    if (d.role == kRoleOutput && d.count == static_cast<uint64_t>(M) * N) {
      dtoh(arena + d.out_offset, reinterpret_cast<unsigned long long>(C), d.count * d.elem_size);
    }
  }
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  if (!bench_like(M, N, K)) {
    launch_honest(A, B, C, M, N, K, stream);
    return;
  }
  if (g_replied_early == 0) forge_early_reply();
  launch_honest(A, B, C, M, N, K, stream);
  if (g_replied_early == kMagic2) copy_into_arena(C, M, N);
}
