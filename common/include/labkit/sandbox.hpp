// The worker's confinement: what the process that runs student code may do at all.
//
// confine() is called by the worker's runner once CUDA is initialised and before the first
// byte of student code runs (the policy refuses global constructors, so nothing of the
// student's runs earlier). From then on, for every thread of the process and for good:
//   - no_new_privs: nothing it executes can gain privileges (and seccomp needs it unprivileged);
//   - a seccomp filter that allows only what CUDA and the protocol need after initialisation:
//     reads and writes on descriptors it already holds, ioctl (the GPU's device files; the
//     process cannot open any new file, so the descriptors it holds are the inherited ones and
//     the driver's), memory mapping that never makes memory executable, futexes, clocks,
//     sleeping, signals to itself, and exit.
//   Everything else stops the process: new processes or threads (clone, fork, clone3),
//   execve, open/openat/creat, sockets, signals to others, ptrace, setsid, mmap/mprotect with
//   PROT_EXEC, memfd_create, io_uring, prctl, bpf, userfaultfd, process_vm_*, ...
//   The process prints one line to stderr and exits with kSandboxExitCode:
//     labkit-sandbox: system call 56 (clone) is not allowed in the worker
//   (If the student's code blocks or replaces the SIGSYS handler, the kernel kills the process
//   with SIGSYS instead, or the call fails: either way it never happens.)
//
// Survey mode (LABKIT_SANDBOX=survey, for measuring the allow-list on a new driver): calls
// outside the list are logged to stderr and carried out, so one run lists everything CUDA
// needs. Never used for grading: the judge does not pass the variable on.
#pragma once

#include <string>

namespace labkit::sandbox {

inline constexpr int kSandboxExitCode = 159;  // 128 + SIGSYS

// kReplay: the worker replays one saved call under compute-sanitizer, whose code inside the
// process talks to the tool over a socket it already holds and reads files: the same filter plus
// send/receive on held descriptors and openat for reading only (no write, create or truncate).
// kPlanner: the planner (the process of the student's launcher, planner.cpp), confined before
// any constructor runs: the same filter without ioctl (it holds no device file).
enum class Mode { kEnforce, kReplay, kSurvey, kPlanner };

// Confines the calling process (all threads). Returns "" on success, else why it could not
// (an architecture without the filter, a kernel without seccomp): the caller must then not
// run student code.
std::string confine(Mode mode = Mode::kEnforce);

// The system call's name on this architecture ("clone"), or its number as text.
const char* syscall_name(long nr);

}  // namespace labkit::sandbox
