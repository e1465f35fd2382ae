// The confinement of the processes a judge starts (docs/architecture.md, "Confinement";
// docs/threat-model.md, section 1): what each may do at all.
//
// confine() is called
//   - by the planner (the process of the student's host code, planner.cpp) from its
//     .preinit_array entry, with Mode::kPlanner: after the C library is up and before any
//     constructor of the executable, the student's included (the policy refuses any code of the
//     student's that would run earlier), so none of the student's host code ever runs
//     unconfined. A planner that cannot confine itself exits before main;
//   - by the runner of worker.cpp at hello, in the executor (labkit_executor) and in a
//     self-contained runner (the calibration worker, the harness's self-test workers): once
//     CUDA is initialised and, in the executor, the student's device code is loaded and the
//     planner (if it started one) has its snapshot, before the first call. Mode::kEnforce;
//     Mode::kReplay in a replay under compute-sanitizer (--replay); Mode::kSurvey when
//     LABKIT_SANDBOX=survey. A runner that cannot confine itself answers hello with the
//     reason, and the judge runs nothing in it.
// From then on, for every thread of the process and for good:
//   - no_new_privs: nothing it executes can gain privileges (and seccomp needs it unprivileged);
//   - a seccomp filter that allows only what CUDA and the protocols need after initialisation:
//     reads and writes on descriptors it already holds, ioctl (the GPU's device files; not in
//     the planner, which holds none; a confined process cannot open any new file, so the
//     descriptors it holds are the inherited ones and the driver's), memory mapping that never
//     makes memory executable, futexes, clocks, sleeping, signals to itself, reading (not
//     setting) its limits, the fcntl commands that only read or copy descriptors, and exit; and,
//     but in the planner, wait4 (the executor reaps the planner it started before).
//   Everything else stops the process: new processes or threads (clone, fork, clone3),
//   execve, open/openat/creat, sockets, signals to others, ptrace, setsid, mmap/mprotect with
//   PROT_EXEC, memfd_create, io_uring, prctl, bpf, userfaultfd, process_vm_*, ...
//   The process prints one line to stderr and exits with kSandboxExitCode:
//     labkit-sandbox: system call 56 (clone) is not allowed in the worker
//   (If the student's code blocks or replaces the SIGSYS handler, the kernel kills the process
//   with SIGSYS instead, or the call fails: either way it never happens.) A planner that ends
//   so ends its executor with the same status (executor.cpp, planner_died).
//
// Survey mode (LABKIT_SANDBOX=survey, for measuring the allow-list on a new driver): calls
// outside the list are logged to stderr and carried out, so one run lists everything CUDA
// needs. The runner's mode only: the planner is confined whatever its environment (which is
// empty). Never used for grading: the grader's judges get a scrubbed environment without the
// variable (a judge run by hand with it passes it on, and the worker's hello says survey).
#pragma once

#include <string>

namespace labkit::sandbox {

inline constexpr int kSandboxExitCode = 159;  // 128 + SIGSYS

// kReplay: the worker replays one saved call under compute-sanitizer, whose code inside the
// process talks to the tool over a socket it already holds and reads files: the same filter plus
// send/receive on held descriptors and openat for reading only (no write, create or truncate).
// kPlanner: the planner (the process of the student's launcher, planner.cpp), confined before
// any constructor runs: the same filter without ioctl (it holds no device file) and wait4.
enum class Mode { kEnforce, kReplay, kSurvey, kPlanner };

// Confines the calling process (all threads). Returns "" on success, else why it could not
// (an architecture without the filter, a kernel without seccomp): the caller must then not
// run student code.
std::string confine(Mode mode = Mode::kEnforce);

// The system call's name on this architecture ("clone"), or its number as text.
const char* syscall_name(long nr);

}  // namespace labkit::sandbox
