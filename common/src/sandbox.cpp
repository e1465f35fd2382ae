// The worker's seccomp confinement (see sandbox.hpp). x86-64 Linux only: elsewhere confine()
// says so and the worker refuses to run student code.
#include "labkit/sandbox.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__linux__) && defined(__x86_64__)
#define LABKIT_SANDBOX_SUPPORTED 1
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#endif

namespace labkit::sandbox {

#ifdef LABKIT_SANDBOX_SUPPORTED

namespace {

struct Named {
  long nr;
  const char* name;
};

// Names for messages: the calls the filter refuses that a student (or a driver) is likely to
// make, and those it allows.
constexpr Named kNames[] = {
    {SYS_read, "read"}, {SYS_write, "write"}, {SYS_open, "open"}, {SYS_close, "close"},
    {SYS_stat, "stat"}, {SYS_fstat, "fstat"}, {SYS_lstat, "lstat"}, {SYS_poll, "poll"},
    {SYS_lseek, "lseek"}, {SYS_mmap, "mmap"}, {SYS_mprotect, "mprotect"},
    {SYS_munmap, "munmap"}, {SYS_brk, "brk"}, {SYS_rt_sigaction, "rt_sigaction"},
    {SYS_rt_sigprocmask, "rt_sigprocmask"}, {SYS_ioctl, "ioctl"}, {SYS_pread64, "pread64"},
    {SYS_pwrite64, "pwrite64"}, {SYS_readv, "readv"}, {SYS_writev, "writev"},
    {SYS_access, "access"}, {SYS_pipe, "pipe"}, {SYS_select, "select"},
    {SYS_sched_yield, "sched_yield"}, {SYS_mremap, "mremap"}, {SYS_madvise, "madvise"},
    {SYS_shmget, "shmget"}, {SYS_shmat, "shmat"}, {SYS_dup, "dup"}, {SYS_dup2, "dup2"},
    {SYS_nanosleep, "nanosleep"}, {SYS_getpid, "getpid"}, {SYS_socket, "socket"},
    {SYS_connect, "connect"}, {SYS_accept, "accept"}, {SYS_sendto, "sendto"},
    {SYS_recvfrom, "recvfrom"}, {SYS_sendmsg, "sendmsg"}, {SYS_recvmsg, "recvmsg"},
    {SYS_bind, "bind"}, {SYS_listen, "listen"}, {SYS_socketpair, "socketpair"},
    {SYS_clone, "clone"}, {SYS_fork, "fork"}, {SYS_vfork, "vfork"}, {SYS_execve, "execve"},
    {SYS_exit, "exit"}, {SYS_wait4, "wait4"}, {SYS_kill, "kill"}, {SYS_uname, "uname"},
    {SYS_fcntl, "fcntl"}, {SYS_truncate, "truncate"}, {SYS_ftruncate, "ftruncate"},
    {SYS_getdents, "getdents"}, {SYS_getcwd, "getcwd"}, {SYS_chdir, "chdir"},
    {SYS_rename, "rename"}, {SYS_mkdir, "mkdir"}, {SYS_rmdir, "rmdir"}, {SYS_creat, "creat"},
    {SYS_link, "link"}, {SYS_unlink, "unlink"}, {SYS_symlink, "symlink"},
    {SYS_readlink, "readlink"}, {SYS_chmod, "chmod"}, {SYS_chown, "chown"},
    {SYS_umask, "umask"}, {SYS_gettimeofday, "gettimeofday"}, {SYS_getrlimit, "getrlimit"},
    {SYS_getrusage, "getrusage"}, {SYS_sysinfo, "sysinfo"}, {SYS_ptrace, "ptrace"},
    {SYS_getuid, "getuid"}, {SYS_getgid, "getgid"}, {SYS_setuid, "setuid"},
    {SYS_setgid, "setgid"}, {SYS_geteuid, "geteuid"}, {SYS_getegid, "getegid"},
    {SYS_setpgid, "setpgid"}, {SYS_getppid, "getppid"}, {SYS_setsid, "setsid"},
    {SYS_sigaltstack, "sigaltstack"}, {SYS_prctl, "prctl"}, {SYS_arch_prctl, "arch_prctl"},
    {SYS_setrlimit, "setrlimit"}, {SYS_mount, "mount"}, {SYS_gettid, "gettid"},
    {SYS_tkill, "tkill"}, {SYS_futex, "futex"}, {SYS_sched_getaffinity, "sched_getaffinity"},
    {SYS_getdents64, "getdents64"}, {SYS_set_tid_address, "set_tid_address"},
    {SYS_restart_syscall, "restart_syscall"}, {SYS_clock_gettime, "clock_gettime"},
    {SYS_clock_getres, "clock_getres"}, {SYS_clock_nanosleep, "clock_nanosleep"},
    {SYS_exit_group, "exit_group"}, {SYS_epoll_wait, "epoll_wait"},
    {SYS_epoll_ctl, "epoll_ctl"}, {SYS_tgkill, "tgkill"}, {SYS_openat, "openat"},
    {SYS_mkdirat, "mkdirat"}, {SYS_newfstatat, "newfstatat"}, {SYS_unlinkat, "unlinkat"},
    {SYS_renameat, "renameat"}, {SYS_linkat, "linkat"}, {SYS_readlinkat, "readlinkat"},
    {SYS_faccessat, "faccessat"}, {SYS_pselect6, "pselect6"}, {SYS_ppoll, "ppoll"},
    {SYS_unshare, "unshare"}, {SYS_set_robust_list, "set_robust_list"},
    {SYS_epoll_pwait, "epoll_pwait"}, {SYS_eventfd2, "eventfd2"},
    {SYS_epoll_create1, "epoll_create1"}, {SYS_dup3, "dup3"}, {SYS_pipe2, "pipe2"},
    {SYS_prlimit64, "prlimit64"}, {SYS_process_vm_readv, "process_vm_readv"},
    {SYS_process_vm_writev, "process_vm_writev"}, {SYS_seccomp, "seccomp"},
    {SYS_getrandom, "getrandom"}, {SYS_memfd_create, "memfd_create"}, {SYS_bpf, "bpf"},
    {SYS_execveat, "execveat"}, {SYS_userfaultfd, "userfaultfd"},
    {SYS_membarrier, "membarrier"}, {SYS_pkey_mprotect, "pkey_mprotect"},
    {SYS_statx, "statx"}, {SYS_rseq, "rseq"}, {SYS_io_uring_setup, "io_uring_setup"},
    {SYS_io_uring_enter, "io_uring_enter"}, {SYS_pidfd_open, "pidfd_open"},
    {SYS_clone3, "clone3"}, {SYS_openat2, "openat2"}, {SYS_pidfd_getfd, "pidfd_getfd"},
    {SYS_sched_getparam, "sched_getparam"}, {SYS_sched_getscheduler, "sched_getscheduler"},
    {SYS_getcpu, "getcpu"}, {SYS_msync, "msync"}, {SYS_mincore, "mincore"},
    {SYS_shutdown, "shutdown"},
};

// Allowed whatever their arguments. Nothing here creates a process or thread, opens a file
// or socket, signals another process, or makes memory executable.
constexpr long kAllowed[] = {
    SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64, SYS_pwrite64, SYS_close,
    SYS_fstat, SYS_newfstatat, SYS_lseek, SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk,
    SYS_msync, SYS_mincore, SYS_futex, SYS_set_robust_list, SYS_rseq, SYS_clock_gettime,
    SYS_clock_getres, SYS_gettimeofday, SYS_clock_nanosleep, SYS_nanosleep, SYS_sched_yield,
    SYS_sched_getaffinity, SYS_sched_getparam, SYS_sched_getscheduler, SYS_getcpu,
    SYS_getpid, SYS_gettid, SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid,
    SYS_getrusage, SYS_sysinfo, SYS_uname, SYS_ioctl, SYS_dup, SYS_dup2, SYS_dup3,
    SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6, SYS_epoll_wait, SYS_epoll_pwait,
    SYS_epoll_ctl, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_sigaltstack, SYS_exit,
    SYS_exit_group, SYS_restart_syscall, SYS_getrandom,
};

// fcntl commands that only read or copy descriptors (no F_SETOWN/F_SETSIG/O_ASYNC: a signal
// on the request pipe is a way to run code outside the launcher).
constexpr uint32_t kFcntlAllowed[] = {F_GETFD, F_SETFD, F_GETFL, F_DUPFD, F_DUPFD_CLOEXEC};

// ---- the filter, as classic BPF over struct seccomp_data

constexpr uint32_t kNrOffset = offsetof(struct seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(struct seccomp_data, arch);
constexpr uint32_t kIpOffset = offsetof(struct seccomp_data, instruction_pointer);
constexpr uint32_t arg_lo(int i) { return offsetof(struct seccomp_data, args) + 8u * i; }
constexpr uint32_t arg_hi(int i) { return arg_lo(i) + 4u; }

class Program {
 public:
  void load(uint32_t offset) { add(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void ret(uint32_t action) { add(BPF_STMT(BPF_RET | BPF_K, action)); }
  void jeq(uint32_t k, uint8_t jt, uint8_t jf) { add(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf)); }
  void jset(uint32_t k, uint8_t jt, uint8_t jf) { add(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, jt, jf)); }
  void jge(uint32_t k, uint8_t jt, uint8_t jf) { add(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, k, jt, jf)); }

  // nr -> allow (the accumulator holds nr and keeps it).
  void allow(long nr) {
    jeq(static_cast<uint32_t>(nr), 0, 1);
    ret(SECCOMP_RET_ALLOW);
  }
  // nr -> allow when (64-bit) argument `arg` == value, else `deny`.
  void allow_if_arg_equals(long nr, int arg, uint64_t value, uint32_t deny) {
    jeq(static_cast<uint32_t>(nr), 0, 6);
    load(arg_lo(arg));
    jeq(static_cast<uint32_t>(value), 0, 3);
    load(arg_hi(arg));
    jeq(static_cast<uint32_t>(value >> 32), 0, 1);
    ret(SECCOMP_RET_ALLOW);
    ret(deny);
  }
  // nr -> deny when argument `arg` has any of `bits` (low 32 bits), else allow.
  void allow_unless_arg_bits(long nr, int arg, uint32_t bits, uint32_t deny) {
    jeq(static_cast<uint32_t>(nr), 0, 4);
    load(arg_lo(arg));
    jset(bits, 1, 0);
    ret(SECCOMP_RET_ALLOW);
    ret(deny);
  }
  // nr -> allow when argument `arg` (low 32 bits, high 32 zero) is one of `values`, else deny.
  template <size_t N>
  void allow_if_arg_in(long nr, int arg, const uint32_t (&values)[N], uint32_t deny) {
    const uint8_t body = static_cast<uint8_t>(2 + 1 + N + 2);  // hi check, lo load, N tests, 2 rets
    jeq(static_cast<uint32_t>(nr), 0, body);
    load(arg_hi(arg));
    jeq(0, 0, static_cast<uint8_t>(1 + N));  // high half not 0: deny
    load(arg_lo(arg));
    for (size_t i = 0; i < N; ++i) jeq(values[i], static_cast<uint8_t>(N - i), 0);
    ret(deny);
    ret(SECCOMP_RET_ALLOW);
    // Layout: [hi-load][hi-test][lo-load][tests...][ret deny][ret allow]: a matching test
    // jumps N - i forward, past the remaining tests and the deny, onto the allow.
  }

  const std::vector<sock_filter>& code() const { return code_; }

 private:
  void add(sock_filter f) { code_.push_back(f); }
  std::vector<sock_filter> code_;
};

// ---- survey mode: carry out a refused call from the SIGSYS handler, through one syscall
// instruction whose address the filter lets through.
extern "C" long labkit_sandbox_trampoline(long nr, long a, long b, long c, long d, long e, long f);
extern "C" char labkit_sandbox_trampoline_after[];
asm(R"(
  .text
  .globl labkit_sandbox_trampoline
  .type labkit_sandbox_trampoline, @function
labkit_sandbox_trampoline:
  mov %rdi, %rax
  mov %rsi, %rdi
  mov %rdx, %rsi
  mov %rcx, %rdx
  mov %r8, %r10
  mov %r9, %r8
  mov 8(%rsp), %r9
  syscall
  .globl labkit_sandbox_trampoline_after
labkit_sandbox_trampoline_after:
  ret
  .size labkit_sandbox_trampoline, .-labkit_sandbox_trampoline
  .section .note.GNU-stack,"",@progbits
  .text
)");

// Async-signal-safe text building.
struct Line {
  char buf[200];
  size_t n = 0;
  void put(const char* s) {
    while (*s != '\0' && n < sizeof(buf) - 1) buf[n++] = *s++;
  }
  void put(long v) {
    char digits[24];
    int k = 0;
    bool neg = v < 0;
    unsigned long u = neg ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
    do {
      digits[k++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0 && k < 22);
    if (neg) digits[k++] = '-';
    while (k > 0 && n < sizeof(buf) - 1) buf[n++] = digits[--k];
  }
  void emit(int fd = 2) {
    buf[n++] = '\n';
    ssize_t ignored = ::write(fd, buf, n);
    (void)ignored;
  }
};

Mode g_mode = Mode::kEnforce;
int g_survey_fd = 2;  // survey mode: LABKIT_SANDBOX_LOG when set (opened before the filter)

void on_sigsys(int, siginfo_t* info, void* context) {
  const long nr = info->si_syscall;
  Line line;
  if (g_mode == Mode::kSurvey) {
    auto* uc = static_cast<ucontext_t*>(context);
    greg_t* r = uc->uc_mcontext.gregs;
    line.put("labkit-sandbox survey: system call ");
    line.put(nr);
    line.put(" (");
    line.put(syscall_name(nr));
    if (nr == SYS_clone || nr == SYS_clone3 || nr == SYS_fork || nr == SYS_vfork) {
      // A new thread or process cannot start from a signal handler's trampoline.
      line.put(") refused with EAGAIN");
      line.emit(g_survey_fd);
      r[REG_RAX] = -EAGAIN;
      return;
    }
    line.put(") carried out, arguments ");
    line.put(static_cast<long>(r[REG_RDI]));
    line.put(" ");
    line.put(static_cast<long>(r[REG_RSI]));
    line.put(" ");
    line.put(static_cast<long>(r[REG_RDX]));
    line.emit(g_survey_fd);
    r[REG_RAX] = labkit_sandbox_trampoline(nr, r[REG_RDI], r[REG_RSI], r[REG_RDX], r[REG_R10],
                                           r[REG_R8], r[REG_R9]);
    return;
  }
  line.put("labkit-sandbox: system call ");
  line.put(nr);
  line.put(" (");
  line.put(syscall_name(nr));
  line.put(") is not allowed in the worker: no files, processes, threads, sockets, signals to "
           "others or executable memory once your code runs");
  line.emit();
  ::syscall(SYS_exit_group, kSandboxExitCode);
  for (;;) {
  }
}

}  // namespace

const char* syscall_name(long nr) {
  for (const Named& n : kNames) {
    if (n.nr == nr) return n.name;
  }
  return "see the system call table";
}

std::string confine(Mode mode) {
  g_mode = mode;
  if (mode == Mode::kSurvey) {
    if (const char* log = std::getenv("LABKIT_SANDBOX_LOG")) {
      const int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
      if (fd >= 0) g_survey_fd = fd;
    }
  }
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0) return std::string("sigaction: ") + std::strerror(errno);
  sigset_t sys;
  sigemptyset(&sys);
  sigaddset(&sys, SIGSYS);
  ::sigprocmask(SIG_UNBLOCK, &sys, nullptr);

  const uint32_t deny = SECCOMP_RET_TRAP;
  Program p;
  p.load(kArchOffset);
  p.jeq(AUDIT_ARCH_X86_64, 1, 0);
  p.ret(SECCOMP_RET_KILL_PROCESS);
  if (mode == Mode::kSurvey) {
    const auto ip = reinterpret_cast<uint64_t>(labkit_sandbox_trampoline_after);
    p.load(kIpOffset);
    p.jeq(static_cast<uint32_t>(ip), 0, 3);
    p.load(kIpOffset + 4);
    p.jeq(static_cast<uint32_t>(ip >> 32), 0, 1);
    p.ret(SECCOMP_RET_ALLOW);
  }
  p.load(kNrOffset);
  p.jge(0x40000000u, 0, 1);  // the x32 ABI's numbers
  p.ret(SECCOMP_RET_KILL_PROCESS);
  for (long nr : kAllowed) {
    // The planner holds no device file: nothing for it to ioctl.
    if (mode == Mode::kPlanner && nr == SYS_ioctl) continue;
    p.allow(nr);
  }
  // The executor reaps the planner it started before its confinement, to say how the launcher's
  // process ended (a confined process starts none: its only children are from before).
  if (mode != Mode::kPlanner) p.allow(SYS_wait4);
  // Memory: never executable.
  // (A block loads arguments only once its number matched, and then returns: the accumulator
  // still holds nr for the next block.)
  p.allow_unless_arg_bits(SYS_mmap, 2, PROT_EXEC, deny);
  p.allow_unless_arg_bits(SYS_mprotect, 2, PROT_EXEC, deny);
  // Signals to itself only (abort, raise).
  const uint64_t self = static_cast<uint64_t>(::getpid());
  p.allow_if_arg_equals(SYS_tgkill, 0, self, deny);
  p.allow_if_arg_equals(SYS_kill, 0, self, deny);
  // Limits may be read, not set.
  p.allow_if_arg_equals(SYS_prlimit64, 2, 0, deny);
  p.allow_if_arg_in(SYS_fcntl, 1, kFcntlAllowed, deny);
  if (mode == Mode::kReplay) {
    for (long nr : {SYS_sendto, SYS_recvfrom, SYS_sendmsg, SYS_recvmsg, SYS_shutdown}) p.allow(nr);
    p.allow_unless_arg_bits(SYS_openat, 2, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND, deny);
  }
  p.ret(deny);

  const std::vector<sock_filter>& code = p.code();
  sock_fprog prog{static_cast<unsigned short>(code.size()), const_cast<sock_filter*>(code.data())};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
  }
  const long r = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (r != 0) {
    if (r > 0) return "seccomp: thread " + std::to_string(r) + " could not be synchronised";
    return std::string("seccomp: ") + std::strerror(errno);
  }
  return "";
}

#else  // not x86-64 Linux

const char* syscall_name(long) { return "?"; }

std::string confine(Mode) {
  return "the worker's seccomp filter is written for x86-64 Linux only; this machine is not one";
}

#endif

}  // namespace labkit::sandbox
