// Fake workers without CUDA, one misbehaviour each (FAKE_MODE), for the judge's host-only
// tests: whatever a worker sends or does, the judge must report it and never trust it.
// FAKE_MODE 10 (sandboxed) confines itself for real (labkit::sandbox::confine, as the real
// worker does once CUDA is up) and then does what the request's variant names: each forbidden
// call must stop it, and the allowed ones must not.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "labkit/fd_io.hpp"
#include "labkit/protocol.hpp"
#include "labkit/sandbox.hpp"

namespace p = labkit::protocol;

static void send(const p::Reply& r) {
  if (write(p::kReplyFd, &r, sizeof(r)) != static_cast<ssize_t>(sizeof(r))) std::exit(1);
}

#if FAKE_MODE == 10
static void* thread_main(void*) { return nullptr; }

// A child started before the confinement, as the executor starts the planner: it dies of a
// signal, and the confined process must still be able to reap it and say how it ended.
static pid_t g_child = -1;

// What a student's launcher might try once the process is confined. Returns normally only for
// what the sandbox allows.
static void attempt(const std::string& what) {
  if (what == "allowed") {
    std::printf("fake worker: allowed calls\n");
    std::fflush(stdout);
    timespec ts{0, 1000000};
    nanosleep(&ts, nullptr);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    void* m = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) std::exit(3);
    std::memset(m, 1, 1 << 20);
    munmap(m, 1 << 20);
    sched_yield();
    (void)getpid();
    (void)fcntl(p::kRequestFd, F_GETFL);
    int status = 0;
    if (g_child > 0 && waitpid(g_child, &status, 0) == g_child && WIFSIGNALED(status)) {
      std::printf("fake worker: reaped a child killed by signal %d\n", WTERMSIG(status));
      std::fflush(stdout);
      g_child = -1;
    }
    return;
  }
  if (what == "thread_found_at_run_time") {
    // No import of pthread_create in the attacker's object: looked up at run time.
    using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    auto create = reinterpret_cast<Create>(dlsym(RTLD_DEFAULT, "pthread_create"));
    pthread_t t;
    if (create != nullptr) create(&t, nullptr, thread_main, nullptr);
  } else if (what == "fork_raw_syscall") {
    long r;
    asm volatile("syscall" : "=a"(r) : "a"(SYS_fork) : "rcx", "r11", "memory");
    if (r == 0) _exit(0);
  } else if (what == "executable_memory") {
    mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  } else if (what == "mprotect_exec") {
    static char page[8192] __attribute__((aligned(4096)));
    mprotect(page, 4096, PROT_READ | PROT_EXEC);
  } else if (what == "open_file") {
    open("/etc/hostname", O_RDONLY);
  } else if (what == "socket") {
    socket(AF_INET, SOCK_STREAM, 0);
  } else if (what == "signal_parent") {
    kill(getppid(), SIGCONT);
  } else if (what == "setsid") {
    setsid();
  } else if (what == "ptrace") {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
  } else if (what == "execve") {
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    execve("/bin/true", argv, argv + 1);
  } else if (what == "sigio_on_request_pipe") {
    fcntl(p::kRequestFd, F_SETOWN, getpid());
  } else if (what == "memfd") {
    syscall(SYS_memfd_create, "x", 0);
  }
  std::printf("fake worker: '%s' was not stopped\n", what.c_str());
  std::fflush(stdout);
}
#endif

#if FAKE_MODE == 9
// Starts a daemon that outlives this process (double fork, new session) and, after `delay_s`,
// creates the file `path`: the judge must have killed it by then.
static void start_daemon(const std::string& path) {
  const pid_t child = fork();
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      sleep(2);
      FILE* f = std::fopen(path.c_str(), "w");
      if (f != nullptr) std::fclose(f);
      _exit(0);
    }
    _exit(0);
  }
  waitpid(child, nullptr, 0);
}
#endif

// Spends `seconds` of CPU time.
[[maybe_unused]] void burn_cpu(double seconds) {
  volatile double x = 0;
  timespec start{}, now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  do {
    for (int i = 0; i < 100000; ++i) x = x + 1.0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) + 1e-9 * (now.tv_nsec - start.tv_nsec) < seconds);
}

int main() {
#if FAKE_MODE == 10
  g_child = fork();
  if (g_child == 0) {
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(0);
  }
#endif
  p::Request req;
  while (labkit::read_full(p::kRequestFd, &req, sizeof(req))) {
    p::Reply r;
    r.nonce = req.nonce;
    if (req.op == static_cast<uint32_t>(p::Op::kHello)) {
      std::snprintf(r.device, sizeof(r.device), "fake device");
      r.n_variants = 1;
      std::snprintf(r.variants[0], p::kNameLen, "v");
#if FAKE_MODE == 10
      const std::string why = labkit::sandbox::confine();
      if (!why.empty()) {
        r.status = static_cast<uint32_t>(p::Status::kNoDevice);
        std::snprintf(r.message, sizeof(r.message), "%s", why.c_str());
      }
      r.confined = why.empty() ? 1 : 0;
#elif FAKE_MODE == 7  // claims no confinement
      r.confined = 0;
#else
      r.confined = 1;  // a fake: it only says so
#endif
      send(r);
      continue;
    }
    std::printf("fake worker: request %u\n", req.op);
    std::fflush(stdout);
#if FAKE_MODE == 1  // garbage: a reply with the wrong magic
    r.magic = 0xBADu;
    send(r);
#elif FAKE_MODE == 2  // silent: never answers
    for (;;) pause();
#elif FAKE_MODE == 3  // dies mid-request
    std::exit(9);
#elif FAKE_MODE == 4  // claims a failing call that does not exist
    r.status = static_cast<uint32_t>(p::Status::kLaunchError);
    r.failed_call = 99;
    send(r);
#elif FAKE_MODE == 5  // impossible times
    r.event_ms = -1.0;
    send(r);
#elif FAKE_MODE == 6  // half a reply, then closes
    if (write(p::kReplyFd, &r, sizeof(r) / 2) < 0) return 1;
    return 0;
#elif FAKE_MODE == 7  // never gets past its hello
    send(r);
#elif FAKE_MODE == 8  // an early, forged reply (it found the nonce in memory), then the real one
    p::Reply twice[2] = {r, r};
    if (write(p::kReplyFd, twice, sizeof(twice)) != static_cast<ssize_t>(sizeof(twice))) return 1;
#elif FAKE_MODE == 9  // leaves a daemon behind, then answers as if nothing happened
    start_daemon(std::string(req.variant, strnlen(req.variant, p::kNameLen)));
    send(r);
#elif FAKE_MODE == 10  // confined: tries what the variant names
    attempt(std::string(req.variant, strnlen(req.variant, p::kNameLen)));
    send(r);
#elif FAKE_MODE == 12  // computes on the CPU (1.5 s of it) and answers
    burn_cpu(1.5);
    send(r);
#elif FAKE_MODE == 14  // as busy, in the first worker its judge starts only (a busy machine)
    const std::string marker = "/tmp/labkit-fake-busy-once-" + std::to_string(getppid());
    const int fd = open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd >= 0) {
      close(fd);
      burn_cpu(1.5);
    }
    send(r);
#elif FAKE_MODE == 11  // a reply that answers some other request
    r.nonce = req.nonce ^ 0x10;
    send(r);
#elif FAKE_MODE == 13  // a kept call (kFlagKeepOnDevice) answered with forged IPC handles
    if ((req.flags & p::kFlagKeepOnDevice) != 0) {
      std::memset(r.ipc_handles, 0xAB, sizeof(r.ipc_handles));
    } else {
      r.status = static_cast<uint32_t>(p::Status::kBadRequest);
      std::snprintf(r.message, sizeof(r.message), "expected outputs kept on the device");
    }
    send(r);
#endif
  }
  return 0;
}
