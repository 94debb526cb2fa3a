"""The operating system's sandbox around the launch plan's process (docs/sandbox.md says why these).

Three layers, each applied by the kernel, none by Python (which a plan could undo):
- Landlock (probed with landlock_create_ruleset(NULL, 0, VERSION)): files may be read only under
  the workspace and the Python installation, and written only in a scratch folder; from ABI 4 no TCP
  bind or connect, from ABI 6 no signal to a process outside the sandbox and no abstract socket.
- seccomp, through libseccomp (the maintained library that builds the filter for each CPU
  architecture; loaded with ctypes): no execve, no fork (clone without CLONE_THREAD), no new
  socket, no signal except to itself, no ptrace or reading another process's memory, no raising
  its own limits.
- rlimits: CPU seconds, address space, file size, no core files.
What this machine does not allow is named in `missing`; the grader warns (practice) or refuses
(interview submits) from probe() before any plan runs.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import sys
from pathlib import Path

_NR = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
_PR_SET_NO_NEW_PRIVS, _PR_SET_PDEATHSIG = 38, 1
_FS_READ = (1 << 2) | (1 << 3)  # READ_FILE | READ_DIR
_FS_ALL_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
MEMORY_BYTES = 4 << 30  # the plan's address space (numpy alone maps a few hundred MiB)
FILE_BYTES = 64 << 20  # the largest file the plan may write in its scratch folder

_libc = ctypes.CDLL(None, use_errno=True)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("a", ctypes.c_uint64), ("b", ctypes.c_uint64)]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when there is none (or it is disabled)."""
    nr = _NR.get(os.uname().machine)
    if nr is None or not sys.platform.startswith("linux"):
        return 0
    abi = _libc.syscall(nr[0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    return max(int(abi), 0)


def _libseccomp():
    for name in ("libseccomp.so.2", ctypes.util.find_library("seccomp")):
        try:
            lib = ctypes.CDLL(name, use_errno=True) if name else None
        except OSError:
            continue
        if lib is not None:
            break
    else:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def probe() -> dict:
    """What this machine can enforce: {"landlock": ABI, "seccomp": bool, "missing": [why, ...]}."""
    missing = []
    abi = landlock_abi()
    if abi < 1:
        missing.append("the kernel offers no Landlock (file access of launch.py is not restricted)")
    has_seccomp = _libseccomp() is not None and _libc.prctl(21, 0, 0, 0, 0) >= 0  # PR_GET_SECCOMP
    if not has_seccomp:
        missing.append("libseccomp is not installed (launch.py could start processes, open sockets, "
                       "send signals): install libseccomp2")
    return {"landlock": abi, "seccomp": has_seccomp, "missing": missing}


def start_child(proc) -> None:
    """Start a multiprocessing Process from a worker, which is itself a daemon process:
    multiprocessing forbids a daemon to have children (it could not join them at exit), so the
    flag is lifted for the start only; the child instead dies with its parent (die_with_parent)."""
    import multiprocessing

    config = multiprocessing.current_process()._config
    was = config.pop("daemon", None)
    try:
        proc.start()
    finally:
        if was is not None:
            config["daemon"] = was


def die_with_parent() -> None:
    """The plan process ends when the worker does (SIGKILL from the grader's timeout included)."""
    if sys.platform.startswith("linux"):
        _libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)


def close_inherited(keep: tuple[int, ...] = ()) -> None:
    """Close every descriptor above 2 but `keep`: spawn hands a child the grader's resource-tracker
    pipe (through which a plan once had a file outside its sandbox deleted)."""
    from multiprocessing import resource_tracker

    top = max(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 256)
    top = min(top, 1 << 16)
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, top)
    resource_tracker._resource_tracker._fd = None


def readable_roots(launch_path: str) -> list[str]:
    """Where the plan may read: its workspace, Python's standard library, and the two packages a
    plan runs on (numpy, kata's harness): not the installed packages at large nor the project tree
    around harness/ (the katas' references and hidden cases, the solutions, the grader)."""
    import sysconfig

    import harness
    import numpy

    paths = sysconfig.get_paths()
    roots = {str(Path(launch_path).resolve().parent), paths.get("stdlib", ""), paths.get("platstdlib", "")}
    for module in (harness, numpy):
        roots.add(str(Path(module.__file__).resolve().parent))
    return sorted(r for r in roots if r and os.path.isdir(r))


def apply(launch_path: str, scratch: str | None = None, cpu_s: int = 900) -> dict:
    """Sandbox the plan's process for good (there is no way back). Returns what was enforced."""
    if scratch and sys.platform.startswith("linux"):
        os.chdir(scratch)
    readable = readable_roots(launch_path) + ([scratch] if scratch else [])
    return confine(readable, cpu_s)


def confine(readable: list[str], cpu_s: int = 900, writable: tuple[str, ...] = (),
            executable: tuple[str, ...] = (), keep_caps: tuple[int, ...] = ()) -> dict:
    """Sandbox this process for good: read only under `readable` (its working directory must be
    one of them), write nothing (but under `writable`), no capability, no process, socket or signal
    outside, no change of any file's metadata, capped CPU, memory and file size. `executable`
    (files): the only programs it may run, and then new processes are allowed (seccomp lets
    execve and fork through; Landlock's EXECUTE right names the files). keep_caps: capabilities it
    keeps (the kernel process, run as another uid than root's, keeps CAP_DAC_READ_SEARCH: harness/
    sandbox/jail.py). Returns what was enforced."""
    enforced = {"landlock": 0, "seccomp": False, "rlimits": False, "missing": []}
    if not sys.platform.startswith("linux"):
        enforced["missing"].append(f"no OS sandbox on {sys.platform}")
        return enforced
    seccomp_lib = _libseccomp()  # loaded before Landlock hides the library folders' cache
    enforced["capabilities"] = drop_capabilities(keep_caps)
    _rlimits(cpu_s)
    enforced["rlimits"] = True
    _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    try:
        enforced["landlock"] = _landlock(readable, writable, executable)
    except OSError as exc:
        enforced["missing"].append(f"Landlock could not be applied: {exc}")
    if not enforced["landlock"] and not enforced["missing"]:
        enforced["missing"].append("the kernel offers no Landlock")
    try:
        enforced["seccomp"] = _seccomp(seccomp_lib, processes=bool(executable))
    except OSError as exc:
        enforced["missing"].append(f"seccomp could not be applied: {exc}")
    return enforced


_CAP_LAST = 63
_CAPSET = {"x86_64": 126, "aarch64": 91}


def drop_capabilities(keep: tuple[int, ...] = ()) -> bool:
    """No capability left but `keep`, for good (bounding set, then effective, permitted,
    inheritable): started as root, the plan could otherwise chown the learner's files or make one
    immutable. Landlock and seccomp need none of them. Returns whether the sets hold `keep` only."""
    if not sys.platform.startswith("linux"):
        return False
    for cap in range(_CAP_LAST + 1):
        if cap not in keep:
            _libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP (EINVAL past the kernel's last one)
    _libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}: only `keep`
    for cap in keep:  # effective, permitted and inheritable: ambient, so that ptxas keeps it too
        for offset in range(3):
            data[(cap >> 5) * 3 + offset] |= 1 << (cap & 31)
    nr = _CAPSET.get(os.uname().machine)
    done = nr is not None and _libc.syscall(nr, ctypes.byref(header), ctypes.byref(data)) == 0
    for cap in keep:
        _libc.prctl(47, 2, cap, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE
    return done


def _rlimits(cpu_s: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))  # SIGXCPU first, SIGKILL 5 s on
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_BYTES, FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _landlock(readable: list[str], writable=(), executable=()) -> int:
    abi = landlock_abi()
    if abi < 1:
        return 0
    create, add_rule, restrict = _NR[os.uname().machine]
    fs_all = _FS_ALL_ABI[max(k for k in _FS_ALL_ABI if k <= abi)]
    attr = _RulesetAttr(fs_all, 0b11 if abi >= 4 else 0, 0b11 if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    fd = _libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        # Reads only; nothing may be written anywhere, so there is no scratch quota to enforce (0).
        for path in dict.fromkeys(readable):
            _add_path(add_rule, fd, path, _FS_READ)
        for path in writable:
            _add_path(add_rule, fd, path, fs_all)
        for path in executable:  # a file: EXECUTE and READ_FILE are the rights a file rule may hold
            _add_path(add_rule, fd, path, 1 | (1 << 2))
        if _libc.syscall(restrict, fd, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
    return abi


def _add_path(add_rule: int, ruleset: int, path: str, access: int) -> None:
    dir_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(access, dir_fd)
        if _libc.syscall(add_rule, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(dir_fd)


#: the learner's files keep their times, modes, owners and attributes (an interview once trusted mtimes)
_METADATA = ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime",
             "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
             "lremovexattr", "fremovexattr")
_FS_IOC_SETFLAGS, _FS_IOC_FSSETXATTR = 0x40086602, 0x401C5820
#: let through for a process that runs programs (a Triton compile runs ptxas): Landlock then names them
_PROCESS_CALLS = ("execve", "execveat", "fork", "vfork")
_DENY = _METADATA + ("execve", "execveat", "fork", "vfork", "socket", "socketpair", "ptrace", "process_vm_readv",
         "process_vm_writev", "tkill", "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "setrlimit",
         "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsmount", "move_mount",
         "open_tree", "mount_setattr", "open_by_handle_at", "bpf", "perf_event_open", "io_uring_setup", "kcmp",
         "personality")


def _seccomp(lib, processes: bool = False) -> bool:
    if lib is None:
        raise OSError(errno.ENOENT, "libseccomp is not installed")
    ctx = lib.seccomp_init(0x7FFF0000)  # SCMP_ACT_ALLOW: a deny list; Python needs many calls
    if not ctx:
        raise OSError(errno.EINVAL, "seccomp_init failed")
    eperm, enosys = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    me = os.getpid()
    try:
        def rule(action, name, *cmps):
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                return  # not on this architecture (fork, vfork on aarch64)
            array = (_ArgCmp * max(len(cmps), 1))(*[_ArgCmp(*c) for c in cmps])
            rc = lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), array)
            if rc < 0:
                raise OSError(-rc, f"seccomp_rule_add({name}): {os.strerror(-rc)}")

        for name in _DENY:
            if not (processes and name in _PROCESS_CALLS):
                rule(eperm, name)
        if not processes:
            rule(eperm, "clone", (0, 7, 0x10000, 0))  # A0 & CLONE_THREAD == 0: a new process, not a thread
            rule(enosys, "clone3")  # its flags sit behind a pointer; glibc falls back to clone
        for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
            rule(eperm, name, (0, 1, me, 0))  # A0 != own pid: pid 0 and -1 (groups, everyone) included
        rule(eperm, "prlimit64", (2, 1, 0, 0))  # setting a limit (reading one passes NULL)
        for request in (_FS_IOC_SETFLAGS, _FS_IOC_FSSETXATTR):  # chattr +i: undeletable, uneditable files
            rule(eperm, "ioctl", (1, 4, request, 0))  # SCMP_CMP_EQ on the request
        rc = lib.seccomp_load(ctx)
        if rc < 0:
            raise OSError(-rc, f"seccomp_load: {os.strerror(-rc)}")
    finally:
        lib.seccomp_release(ctx)
    return True
