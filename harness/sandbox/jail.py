"""Hard limits for the process that imports and compiles a Triton or numba kernel.py.

That process is the one learner process allowed to fork and exec (a Triton compile runs ptxas), and
it writes the compilers' caches into a scratch folder. Landlock says where it may write, not how
much, and RLIMIT_NPROC is not enforced for a real uid of 0. So, before any learner code runs:

- the scratch folder is a tmpfs of its own, capped at SCRATCH_BYTES and SCRATCH_FILES by the
  kernel (a write past it fails with ENOSPC), mounted in a mount namespace only this process and its
  children see: it vanishes with them, so no file is left behind;
- the process is pid 1 of a pid namespace: when it ends (or its parent is killed), the kernel kills
  every process it started, so no process is left behind;
- it runs as a real uid other than 0 with RLIMIT_NPROC = TASKS, so a fork or thread loop is refused
  (EAGAIN) past TASKS processes and threads. Started as root it takes a uid no one else uses
  (UID_BASE + the parent's pid), so the count is its own, and keeps one capability,
  CAP_DAC_READ_SEARCH, so that it reads what root could (a workspace under a 0700 home, Python's
  packages) where Landlock lets it; started as another user, a user namespace maps it to itself.

`enter` does this in the kernel process: there it forks, the parent (in the new namespaces, still
the worker's child) waits, and the child returns to import kernel.py. What the machine does not
allow is skipped, never fatal, and named in `Jail.missing` (and in `probe()`, for the grade's notes):
then the worker's counted watch of the scratch folder is the quota, as before.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import os
import resource
import sys
import tempfile
from dataclasses import dataclass, field

from harness.sandbox.os_sandbox import FILE_BYTES, drop_capabilities

#: the scratch folder's quota: the compilers' caches of a grade's specialisations take a few dozen
#: small files and a few MiB
SCRATCH_BYTES, SCRATCH_FILES = 256 << 20, 1000
#: processes and threads of the kernel process together (Triton, numba and ptxas need a handful)
TASKS = 64
#: CPUs it may run on: libraries size their thread pools by them (OpenBLAS, LLVM's), and TASKS
#: must hold those pools on a machine of 128 cores too
CPUS = 8
#: root's sandbox takes uid UID_BASE + its parent's pid: unique among live ones, owned by no one
UID_BASE = 0x60000000
CAP_DAC_READ_SEARCH = 2

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 2, 4, 0x4000, 1 << 18
_PR_SET_KEEPCAPS, _PR_CAPBSET_DROP, _PR_SET_PDEATHSIG = 8, 24, 1
_LINUX = sys.platform.startswith("linux")
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class Jail:
    """What `enter` put in place for this process."""

    tmpfs: bool = False  # the scratch folder is a capped tmpfs
    pid_namespace: bool = False  # this process is pid 1 of its own pid namespace
    tasks: int | None = None  # RLIMIT_NPROC, where it is enforced
    uid: int | None = None  # the uid root's sandbox took
    keep_caps: tuple[int, ...] = ()  # capabilities confine must keep
    missing: list[str] = field(default_factory=list)


def enter(scratch: str) -> Jail:
    """Put this process (the kernel process, before it imports anything of the learner's) in its
    jail. Returns in a new child process; this one waits for it and exits with it."""
    jail = Jail()
    if not _LINUX:
        jail.missing.append(f"no namespaces on {sys.platform}")
        return jail
    root = os.geteuid() == 0
    uid, gid = os.getuid(), os.getgid()
    target = UID_BASE + os.getpid() if root else None
    flags = _CLONE_NEWNS | _CLONE_NEWPID | (0 if root else _CLONE_NEWUSER)
    if _unshare(flags) == 0:
        jail.pid_namespace = True
        if not root and not _map_self(uid, gid):
            jail.missing.append("kernel.py's user namespace could not map its user (its files are "
                                "nobody's)")
        owner = f",uid={target},gid={target}" if root else ""
        jail.tmpfs = _mount_tmpfs(scratch, owner) == 0
    elif root and _unshare(_CLONE_NEWNS) == 0:  # a pid namespace refused: still the quota
        jail.tmpfs = _mount_tmpfs(scratch, f",uid={target},gid={target}") == 0
    if not jail.tmpfs:
        jail.missing.append("no capped tmpfs for kernel.py's scratch folder (mount namespaces are not "
                            "allowed here): its quota is a watch every 0.1 s")
        if root:
            os.chown(scratch, target, target)
    if not jail.pid_namespace:
        jail.missing.append("no pid namespace: processes kernel.py starts may outlive it")
    cpus = sorted(os.sched_getaffinity(0))
    start = os.getpid() * CPUS % len(cpus)  # grades side by side compile on different CPUs
    os.sched_setaffinity(0, (cpus[start:] + cpus[:start])[:CPUS])
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[name] = str(min(len(cpus), CPUS))
    parent = os.getpid()
    _fork_and_wait(target if root and not jail.pid_namespace else None)
    if root:
        _become(target, jail)
    elif jail.pid_namespace:  # in its own user namespace: the count is its own
        resource.setrlimit(resource.RLIMIT_NPROC, (TASKS, TASKS))
        jail.tasks = TASKS
    else:
        jail.missing.append("kernel.py's processes are capped only by your own RLIMIT_NPROC (user "
                            "namespaces are not allowed here)")
    _libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)  # after the uid changed: a change clears it
    if not jail.pid_namespace and os.getppid() != parent:
        os._exit(0)  # the parent is gone already (in a pid namespace its death kills this one)
    return jail


def explain(exc: BaseException, jail: Jail | None) -> str | None:
    """The limit an error of kernel.py's (or the compiler's) ran into, in words; None if none."""
    seen = 0
    while exc is not None and seen < 8:
        code = getattr(exc, "errno", None)
        if code in (errno.ENOSPC, errno.EDQUOT):
            return (f"kernel.py's process filled its scratch folder: it may hold at most "
                    f"{SCRATCH_BYTES >> 20} MiB in {SCRATCH_FILES} files and folders (the compilers' caches "
                    "need a few MiB)")
        if code == errno.EFBIG:
            return (f"kernel.py's process wrote a file over {FILE_BYTES >> 20} MiB (the largest its scratch "
                    "folder takes)")
        if jail is not None and jail.tasks and (
                (code == errno.EAGAIN and getattr(exc, "filename", None) is None)
                or (isinstance(exc, RuntimeError) and "new thread" in str(exc))):
            return (f"kernel.py's process tried to start more than {jail.tasks} processes and threads "
                    "(the most the process that imports and compiles kernel.py may run): refused")
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


@functools.lru_cache(maxsize=1)
def probe() -> list[str]:
    """What the kernel process's jail cannot do on this machine (tried once, in a throwaway child)."""
    if not _LINUX:
        return [f"kernel.py's process has no scratch quota or process cap on {sys.platform} but a "
                "watch of its scratch folder"]
    import warnings

    scratch = tempfile.mkdtemp(prefix="kata-jail-probe-")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # a fork that only makes syscalls
            pid = os.fork()
        if pid == 0:
            os._exit(_try(scratch))
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
    except OSError:
        code = 7
    finally:
        os.rmdir(scratch)
    missing = []
    if code & 1:
        missing.append("kernel.py's scratch quota is a watch every 0.1 s, not a capped tmpfs (mount "
                       "namespaces are not allowed here)")
    if code & 2:
        missing.append("kernel.py's process is not in a pid namespace (processes it starts may outlive it)")
    if code & 4:
        missing.append("kernel.py's process count is not capped (as root it cannot take another uid, or "
                       "user namespaces are not allowed here)")
    return missing


def _try(scratch: str) -> int:
    """In the probe's child: 0 if every part of `enter` works here, else bits of what failed."""
    if os.geteuid() == 0:
        ok_ns = _unshare(_CLONE_NEWNS | _CLONE_NEWPID) == 0
        ok_mount = _mount_tmpfs(scratch, "") == 0 if ok_ns else (_unshare(_CLONE_NEWNS) == 0
                                                                  and _mount_tmpfs(scratch, "") == 0)
        try:
            os.setresgid(UID_BASE, UID_BASE, UID_BASE)
            os.setresuid(UID_BASE, UID_BASE, UID_BASE)
            ok_uid = True
        except OSError:
            ok_uid = False
    else:
        ok_ns = _unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID) == 0
        ok_uid = ok_ns and _map_self(os.getuid(), os.getgid())
        ok_mount = ok_uid and _mount_tmpfs(scratch, "") == 0
    return (0 if ok_mount else 1) | (0 if ok_ns else 2) | (0 if ok_uid else 4)


def _unshare(flags: int) -> int:
    return _libc.unshare(ctypes.c_int(flags))


def _map_self(uid: int, gid: int) -> bool:
    """In a new user namespace: its root is this user, nothing else is mapped."""
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError:
        return False
    return True


def _mount_tmpfs(scratch: str, owner: str) -> int:
    if _libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return -1  # without it the tmpfs would show in the worker's namespace too
    data = f"size={SCRATCH_BYTES},nr_inodes={SCRATCH_FILES},mode=0700{owner}".encode()
    return _libc.mount(b"kata-scratch", scratch.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, data)


def _fork_and_wait(sweep_uid: int | None) -> None:
    """Continue in a child (pid 1 of the new pid namespace, if there is one); this process only
    waits for it, then ends: it is the worker's child, so the worker's kill of it ends the child.
    sweep_uid (root's jail without a pid namespace): when the child has ended, every process of
    that uid is killed, as that uid (kill(-1) reaches exactly them)."""
    pid = os.fork()
    if pid == 0:
        return
    os.closerange(0, 1 << 16)  # the pipe's end is the child's alone: its exit is the worker's EOF
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            status = 0
            break
        except InterruptedError:
            continue
    if sweep_uid is not None:
        _kill_all_as(sweep_uid)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _kill_all_as(uid: int) -> None:
    """Become uid and kill every process of it (this one is spared by kill(-1))."""
    try:
        os.setresuid(uid, uid, uid)
        for _ in range(1000):  # a fork racing the sweep: until none is left (ESRCH)
            os.kill(-1, 9)
    except OSError:
        pass


def sweep(parent_pid: int) -> None:
    """The worker, having killed a kernel process (`parent_pid`) run as root where no pid namespace
    was allowed: kill what its jail left, every process of the uid the jail took."""
    if not _LINUX or os.geteuid() != 0 or not any("pid namespace" in m for m in probe()):
        return
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a fork that only makes syscalls
        pid = os.fork()
    if pid == 0:
        _kill_all_as(UID_BASE + parent_pid)
        os._exit(0)
    os.waitpid(pid, 0)


def _become(target: int, jail: Jail) -> None:
    """Root's child: take uid and gid `target`, keeping only CAP_DAC_READ_SEARCH, and cap its tasks."""
    for cap in range(64):  # the bounding set first, while root may (CAP_SETPCAP)
        if cap != CAP_DAC_READ_SEARCH:
            _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    try:
        os.setgroups([])
        os.setresgid(target, target, target)
        _libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0)
        os.setresuid(target, target, target)
        _libc.prctl(_PR_SET_KEEPCAPS, 0, 0, 0, 0)
    except OSError as exc:
        jail.missing.append(f"kernel.py's process runs as root, its process count uncapped "
                            f"(it could not take another uid: {exc.strerror})")
        return
    drop_capabilities((CAP_DAC_READ_SEARCH,))  # effective again: the imports read as root did
    resource.setrlimit(resource.RLIMIT_NPROC, (TASKS, TASKS))
    jail.uid, jail.tasks, jail.keep_caps = target, TASKS, (CAP_DAC_READ_SEARCH,)
