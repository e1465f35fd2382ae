"""The build sandbox: runs one compiler command on a student's file so that it can read only
what a compile needs and write only its own outputs.

Why: the compiler reads files named in the student's source, and not only through what the
policy's source scans and `nvcc -M` see. nvcc's front end preprocesses gcc's output a second
time, so an `#include "/abs/path"` can exist in that second pass only; and the assembler's
`.incbin "/abs/path"` in an `asm` statement copies any file into the object. Without a sandbox a
build reads whatever the grader's user can read (hidden tests, solutions, other students'
submissions, a course secret) into the student's object, or echoes it in compiler errors.

    python3 grader/buildbox.py [--read PATH]... [--deny PATH]... [--mode auto|landlock|namespace]
                               [--keep-fatbin] -- COMPILER ARGS...
    python3 grader/buildbox.py --probe        # one line of JSON: which mechanism works here

CMake runs it as the compiler launcher of the `<lab>_student` targets (LABS_SANDBOX_BUILD,
cmake/CudaLab.cmake), and the policy's preprocessor runs on the student's file go through the
same command (grader/policy/compile_commands.py). Standard library only; no import of the
grader package (it runs as a plain script).

What the compiler (and all it starts: cudafe++, cicc, ptxas, fatbinary, gcc, as) may do:
  read and execute  /usr, /lib*, /bin, /sbin, /etc/alternatives, the CUDA toolkit and the
                    compiler's own installation (found from the command), a few /etc files the
                    loader and the toolchain read (ld.so.cache, ld.so.conf*, localtime), /dev/null,
                    /dev/zero, /dev/urandom
  read              every --read path (the staged student files, the lab's headers, the
                    harness's include folders)
  write             nothing but a private folder made for this one command (its TMPDIR, and
                    the outputs: -o and -MF are pointed into it, and copied to where the command
                    named them once the command succeeded)
With --keep-fatbin (the CUDA compiles), an nvcc compile (`-c ... -o OBJECT`) also keeps its
intermediate files in the private folder (`--keep --keep-dir`), and the one fatbin nvcc made
there is copied back beside the object as OBJECT.fatbin (KEPT_FATBIN_SUFFIX). The policy compares
it with the object's .nv_fatbin section: the same bytes on every honest build; an object whose
section was filled by the student's own assembler text (a fatbin of their own ahead of nvcc's,
or nvcc's skipped) differs. Only nvcc's tools write that folder; the student's source cannot.
Any path given with --deny (the repository, the build tree) is cut out of the allowed
hierarchies above if one of them holds it (say a repository under /usr/src): only its --read
parts stay readable. Network: none (Landlock ABI 4+).

Mechanisms, in the order `auto` tries them:
  landlock   the kernel's Landlock LSM (Linux 5.13+), any user, no namespaces: the rules above
             are made, no_new_privs is set and the ruleset is enforced in the child, then the
             compiler is executed; every process it starts inherits the rules.
  namespace  where Landlock is missing (gVisor): a user and mount namespace (`unshare`) whose
             root is a fresh tmpfs holding only the allowed paths, bind-mounted (read-only but
             for the private folder), then chroot into it.
When the grader runs as root the compiler also runs as uid/gid 65534 (nobody), with no
supplementary groups; the private folder is made its own. Where that user cannot read the
inputs (a repository under /root), the compiler keeps uid 0 with every capability dropped
(no DAC override: root's own files only), and Landlock stays the barrier.
When neither mechanism works the command is not run: exit status 125 and a line saying why.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import stat
import sys
import tempfile

NOBODY = 65534
EXIT_NO_SANDBOX = 125

# Read (and execute) everywhere below these, when they exist.
SYSTEM_TREES = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
                "/etc/alternatives")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
DEVICES_RW = ("/dev/null",)
DEVICES_R = ("/dev/zero", "/dev/urandom", "/dev/random")

# Options naming a file the command writes: pointed into the private folder, copied back.
_OUTPUT_OPTIONS = ("-o", "--output-file", "-MF", "--dependency-output")
# Beside an object compiled with --keep-fatbin: the fatbin nvcc made of it (grader/policy/device.py
# reads it by this name).
KEPT_FATBIN_SUFFIX = ".fatbin"
# Options after which nvcc does not compile to an object (no fatbin to keep).
_NOT_A_COMPILE = ("-E", "-M", "-MM", "--preprocess", "--generate-dependencies",
                  "--generate-nonsystem-dependencies", "-ptx", "-cubin", "-fatbin", "--ptx",
                  "--cubin", "--fatbin", "-dryrun", "--dryrun")

# ------------------------------------------------------------------------------------------
# Landlock (linux/landlock.h)
# ------------------------------------------------------------------------------------------
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13          # ABI 2
FS_TRUNCATE = 1 << 14       # ABI 3
FS_IOCTL_DEV = 1 << 15      # ABI 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1        # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1   # ABI 6

_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def _syscall(nr: int, *args) -> int:
    c = _c()
    c.syscall.restype = ctypes.c_long
    return c.syscall(ctypes.c_long(nr), *args)


def landlock_abi() -> int:
    """Landlock's ABI version here (0: none: not built, disabled, or the call refused)."""
    try:
        abi = _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                       ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(abi))


class SandboxError(Exception):
    pass


def _err(what: str) -> SandboxError:
    e = ctypes.get_errno()
    return SandboxError(f"{what}: {os.strerror(e)}")


def landlock_enforce(rules: list, abi: int) -> None:
    """Restricts this process (and what it executes) to `rules`: (path, rights) pairs. A path
    that does not exist is skipped."""
    attr = _RulesetAttr(handled_access_fs=_fs_rights(abi))
    size = 8
    if abi >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP   # no rule: no TCP at all
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL   # no signal out of the sandbox
        size = 24
    ruleset = _syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size),
                       ctypes.c_uint32(0))
    if ruleset < 0:
        raise _err("landlock_create_ruleset")
    try:
        for path, rights in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    rights &= _FILE_RIGHTS
                rule = _PathBeneathAttr(allowed_access=rights & _fs_rights(abi), parent_fd=fd)
                if _syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                            ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise _err(f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        if _c().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _err("prctl(PR_SET_NO_NEW_PRIVS)")
        if _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise _err("landlock_restrict_self")
    finally:
        os.close(ruleset)


# ------------------------------------------------------------------------------------------
# What the sandbox allows
# ------------------------------------------------------------------------------------------
READ = FS_READ_FILE | FS_READ_DIR
READ_EXEC = READ | FS_EXECUTE
ALL = (1 << 16) - 1


def _real(path: str) -> str:
    return os.path.realpath(path)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def carve(root: str, denied: list) -> list:
    """`root`'s hierarchy as a list of hierarchies that hold none of `denied`: `root` itself
    when no denied path is inside it; else its entries but the branches toward a denied path,
    split the same way (a denied path itself, and whatever lies above one, are left out)."""
    real_root = _real(root)
    inside = [d for d in denied if _under(d, real_root)]
    if not inside:
        return [real_root]
    if any(d == real_root for d in inside) or not os.path.isdir(real_root):
        return []
    out = []
    try:
        names = sorted(os.listdir(real_root))
    except OSError:
        return []
    for name in names:
        child = os.path.join(real_root, name)
        if os.path.islink(child):
            continue   # its target is allowed or not on its own account
        out += carve(child, inside)
    return out


def toolchain_roots(argv0: str) -> list:
    """The installation the compiler runs from: for .../bin/nvcc, the toolkit's root (its
    include/, nvvm/, targets/), both as named and as the link resolves."""
    roots = []
    for exe in dict.fromkeys([argv0, _real(argv0)]):
        bindir = os.path.dirname(exe)
        if os.path.basename(bindir) == "bin":
            roots.append(_real(os.path.dirname(bindir)))
    return [r for r in dict.fromkeys(roots) if r != "/"]


def host_compiler_roots(args: list) -> list:
    """nvcc's -ccbin / --compiler-bindir: that compiler's installation too."""
    out = []
    for i, a in enumerate(args):
        for flag in ("-ccbin", "--compiler-bindir"):
            value = None
            if a == flag and i + 1 < len(args):
                value = args[i + 1]
            elif a.startswith(flag + "="):
                value = a.split("=", 1)[1]
            if value:
                path = value if os.path.isabs(value) else shutil.which(value)
                if path:
                    out += toolchain_roots(path if not os.path.isdir(path)
                                           else os.path.join(path, "g++"))
    return out


def plan(compiler: str, args: list, reads: list, denied: list, private: str) -> list:
    """(path, rights) for the command: see the module's docstring."""
    denied = [_real(d) for d in denied]
    rules = []
    for tree in SYSTEM_TREES + tuple(toolchain_roots(compiler)) + tuple(host_compiler_roots(args)):
        if os.path.exists(tree):
            rules += [(p, READ_EXEC) for p in carve(tree, denied)]
    rules += [(p, FS_READ_FILE | FS_READ_DIR) for p in SYSTEM_FILES if os.path.exists(p)]
    rules += [(p, READ) for p in DEVICES_R if os.path.exists(p)]
    rules += [(p, FS_READ_FILE | FS_WRITE_FILE) for p in DEVICES_RW if os.path.exists(p)]
    rules += [(_real(p), READ) for p in reads if os.path.exists(p)]
    rules.append((private, ALL))
    return rules


# ------------------------------------------------------------------------------------------
# The command's outputs: into the private folder, then back
# ------------------------------------------------------------------------------------------
def redirect_outputs(args: list, out_dir: str) -> tuple:
    """(args with every output option's file in out_dir, [(private path, original path)]).
    "-" (standard output) is left alone."""
    new, moves = [], []

    def private_for(original: str) -> str:
        p = os.path.join(out_dir, f"{len(moves)}-{os.path.basename(original) or 'out'}")
        moves.append((p, original))
        return p

    i = 0
    while i < len(args):
        a = args[i]
        if a in _OUTPUT_OPTIONS and i + 1 < len(args) and args[i + 1] != "-":
            new += [a, private_for(args[i + 1])]
            i += 2
            continue
        joined = next((o for o in _OUTPUT_OPTIONS if a.startswith(o + "=")), None)
        if joined and a[len(joined) + 1:] not in ("", "-"):
            new.append(f"{joined}={private_for(a[len(joined) + 1:])}")
        elif a.startswith("-o") and len(a) > 2 and not a.startswith("-od") and a[2] != "=" \
                and not a.startswith("--"):
            new.append("-o" + private_for(a[2:]))            # gcc's -oFILE
        elif a.startswith("-MF") and len(a) > 3 and a[3] != "=":
            new.append("-MF" + private_for(a[3:]))
        else:
            new.append(a)
        i += 1
    return new, moves


def keep_fatbin(args: list, moves: list, keep_dir: str) -> tuple:
    """(args, the object's original path) for an nvcc compile to an object that keeps its
    intermediate files in keep_dir; (args, None) for any other command, unchanged."""
    if "-c" not in args and "--compile" not in args:
        return args, None
    if any(a in _NOT_A_COMPILE for a in args):
        return args, None
    outputs = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output-file")]
    outputs += [a.split("=", 1)[1] for a in args if a.startswith(("-o=", "--output-file="))]
    if len(outputs) != 1:
        return args, None
    original = next((o for p, o in moves if p == outputs[0]), None)
    if original is None:
        return args, None
    return args + ["--keep", "--keep-dir", keep_dir], original


def kept_fatbin_move(keep_dir: str, obj: str) -> list:
    """[(the one *.fatbin nvcc left in keep_dir, OBJECT.fatbin)], or [] when there is not
    exactly one (the policy then finds none, and refuses to read the device code)."""
    try:
        found = [n for n in os.listdir(keep_dir) if n.endswith(".fatbin")]
    except OSError:
        return []
    return [(os.path.join(keep_dir, found[0]), obj + KEPT_FATBIN_SUFFIX)] if len(found) == 1 else []


def copy_back(moves: list, cwd: str) -> None:
    """Each private output to its original place (relative to the command's folder), replaced
    in one rename; never through a link left in the private folder."""
    for private, original in moves:
        try:
            fd = os.open(private, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            continue           # not written (a -MF the compiler did not need)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise SandboxError(f"the output {original} is not a regular file")
            dest = original if os.path.isabs(original) else os.path.join(cwd, original)
            dest_dir = os.path.dirname(dest) or "."
            tmp_fd, tmp = tempfile.mkstemp(prefix=".buildbox-", dir=dest_dir)
            try:
                with os.fdopen(tmp_fd, "wb") as out, os.fdopen(os.dup(fd), "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
                os.chmod(tmp, 0o644)
                os.replace(tmp, dest)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
        finally:
            os.close(fd)


# ------------------------------------------------------------------------------------------
# Dropping root
# ------------------------------------------------------------------------------------------
_PR_CAPBSET_DROP = 24


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Uid 0 keeps its uid but loses every capability, now and across execve (the bounding set
    emptied, then the process's own sets)."""
    c = _c()
    for cap in range(64):
        if c.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            raise _err(f"prctl(PR_CAPBSET_DROP, {cap})")
    header = _CapHeader(version=0x20080522, pid=0)   # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    if c.capset(ctypes.byref(header), data) != 0:
        raise _err("capset")


def become_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def nobody_can_read(paths: list, executables: list) -> list:
    """The paths uid 65534 cannot read (or execute), found in a child that becomes it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            become_nobody()
            bad = [p for p in paths if not os.access(p, os.R_OK)]
            bad += [p for p in executables if not os.access(p, os.X_OK)]
            os.write(w, json.dumps(bad).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return list(paths)


# ------------------------------------------------------------------------------------------
# The namespace fallback (no Landlock)
# ------------------------------------------------------------------------------------------
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = \
    1, 2, 4, 32, 4096, 16384, 1 << 18


def _mount(src, target, fstype, flags, data=None) -> None:
    c = _c()
    if c.mount(src.encode() if src else None, target.encode(),
               fstype.encode() if fstype else None, ctypes.c_ulong(flags),
               data.encode() if data else None) != 0:
        raise _err(f"mount {src} on {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def namespace_enter(rules: list, private: str, as_root: bool) -> None:
    """This process into a new mount namespace (and user namespace unless root) whose root
    holds only the paths of `rules`, at the same places; then chroot into it."""
    uid, gid = os.getuid(), os.getgid()
    flags = _CLONE_NEWNS | (0 if as_root else _CLONE_NEWUSER)
    if _c().unshare(flags) != 0:
        raise _err("unshare")
    if not as_root:
        try:
            _write("/proc/self/setgroups", "deny")
        except OSError:
            pass
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    new_root = os.path.join(private, ".root")
    os.mkdir(new_root, 0o755)
    _mount("buildbox", new_root, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755")
    _mount(new_root, new_root, None, _MS_BIND)   # a bind mount of itself: remountable read-only
    for path, rights in sorted(rules, key=lambda r: r[0].count("/")):
        real = _real(path)
        if not os.path.exists(real):
            continue
        target = new_root + real
        if os.path.isdir(real):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.exists(target):
                open(target, "w").close()
        _mount(real, target, None, _MS_BIND | _MS_REC)
        if not rights & (FS_WRITE_FILE | FS_MAKE_REG):
            try:
                _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID)
            except SandboxError:
                _mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID
                       | _MS_NODEV)
    # Links at the top (merged /usr: /lib -> usr/lib) as they are.
    for name in ("lib", "lib32", "lib64", "libx32", "bin", "sbin"):
        top = "/" + name
        if os.path.islink(top) and not os.path.lexists(new_root + top):
            os.symlink(os.readlink(top), new_root + top)
    # The command's folder, empty unless allowed, so that relative paths mean what they mean
    # outside; then the root itself read-only: only the private folder can be written.
    cwd = os.getcwd()
    os.makedirs(new_root + cwd, exist_ok=True)
    _mount(None, new_root, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    os.chroot(new_root)
    os.chdir(cwd)


# ------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------
def probe(mode: str = "auto") -> dict:
    """Which mechanism this machine gives (what `auto` would use), as a dict for JSON."""
    abi = landlock_abi()
    as_root = os.geteuid() == 0
    if mode in ("auto", "landlock") and abi > 0:
        return {"mechanism": "landlock", "abi": abi, "root": as_root}
    if mode in ("auto", "namespace"):
        why = _namespace_works(as_root)
        if why is None:
            return {"mechanism": "namespace", "root": as_root}
        return {"mechanism": None, "why": f"no Landlock in this kernel, and no namespace: {why}"}
    return {"mechanism": None, "why": "no Landlock in this kernel"}


def _namespace_works(as_root: bool) -> str | None:
    """None when the whole of namespace_enter works here (the namespaces, the private
    propagation of "/", which a chroot's "/" refuses, the tmpfs root and the chroot into it),
    tried in a child on an empty rule list; else why not."""
    private = tempfile.mkdtemp(prefix="buildbox-probe-")
    try:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                namespace_enter([], private, as_root)
                code = 0
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return None if os.waitstatus_to_exitcode(status) == 0 else \
        "a mount namespace could not be set up here (unshare, mount or chroot refused)"


def run(compiler_args: list, reads: list, denied: list, mode: str = "auto",
        keep: bool = False) -> int:
    how = probe(mode)
    if how["mechanism"] is None:
        print(f"buildbox: the compiler was not run: no build sandbox is possible here "
              f"({how['why']})", file=sys.stderr)
        return EXIT_NO_SANDBOX
    compiler = compiler_args[0]
    exe = compiler if "/" in compiler else shutil.which(compiler)
    if exe is None:
        print(f"buildbox: {compiler}: command not found", file=sys.stderr)
        return 127
    exe = os.path.abspath(exe)
    as_root = os.geteuid() == 0
    cwd = os.getcwd()
    private = tempfile.mkdtemp(prefix="labs-buildbox-")
    try:
        tmp, out = os.path.join(private, "tmp"), os.path.join(private, "out")
        keep_dir = os.path.join(private, "keep")
        for d in (tmp, out, keep_dir):
            os.mkdir(d, 0o700)
        args, moves = redirect_outputs(compiler_args[1:], out)
        kept_for = None
        if keep:
            args, kept_for = keep_fatbin(args, moves, keep_dir)
        if kept_for is not None:      # never an earlier build's beside this one's object
            try:
                os.unlink(os.path.join(cwd, kept_for + KEPT_FATBIN_SUFFIX))
            except FileNotFoundError:
                pass
        rules = plan(exe, args, reads, denied, _real(private))
        drop = as_root
        if as_root:
            unreadable = nobody_can_read([p for p in reads if os.path.exists(p)] + [cwd], [exe])
            if unreadable:
                drop = False
                print(f"buildbox: note: uid {NOBODY} cannot read {unreadable[0]}: the compiler "
                      f"runs as root with no capabilities instead", file=sys.stderr)
            else:
                for d in (private, tmp, out, keep_dir):
                    os.chown(d, NOBODY, NOBODY)
        env = dict(os.environ, TMPDIR=tmp, TMP=tmp, TEMP=tmp, HOME=tmp)
        pid = os.fork()
        if pid == 0:
            try:
                if how["mechanism"] == "landlock":
                    if as_root and not drop:
                        drop_capabilities()
                    elif drop:
                        become_nobody()
                    landlock_enforce(rules, how["abi"])
                else:
                    namespace_enter(rules, _real(private), as_root)
                    if drop:
                        become_nobody()
                    elif as_root:
                        drop_capabilities()
                    _c().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
                os.execve(exe, [compiler] + args, env)
            except BaseException as e:      # noqa: BLE001: nothing may run unconfined
                os.write(2, f"buildbox: the compiler was not run: {e}\n".encode())
            finally:
                os._exit(EXIT_NO_SANDBOX)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            if kept_for is not None:
                moves = moves + kept_fatbin_move(keep_dir, kept_for)
            copy_back(moves, cwd)
        return code if code >= 0 else 128 - code
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _parse(argv: list):
    reads, denied, mode, keep, i = [], [], "auto", False, 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return reads, denied, mode, keep, argv[i + 1:]
        if a == "--keep-fatbin":
            keep = True
            i += 1
            continue
        if a in ("--read", "--deny", "--mode") and i + 1 < len(argv):
            {"--read": reads, "--deny": denied}.get(a, []).append(argv[i + 1])
            if a == "--mode":
                mode = argv[i + 1]
            i += 2
            continue
        raise SystemExit(f"buildbox: unknown argument {a!r} (usage: see grader/buildbox.py)")
    raise SystemExit("buildbox: no command (after --)")


def main(argv: list) -> int:
    if argv[:1] == ["--probe"]:
        mode = argv[2] if argv[1:2] == ["--mode"] and len(argv) > 2 else "auto"
        print(json.dumps(probe(mode)))
        return 0
    reads, denied, mode, keep, command = _parse(argv)
    if mode not in ("auto", "landlock", "namespace"):
        raise SystemExit(f"buildbox: --mode {mode}: auto, landlock or namespace")
    if not command:
        raise SystemExit("buildbox: no command (after --)")
    try:
        return run(command, reads, denied, mode, keep)
    except SandboxError as e:
        print(f"buildbox: the compiler was not run: {e}", file=sys.stderr)
        return EXIT_NO_SANDBOX


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
