"""A Triton or numba kernel.py is imported and compiled in a sandboxed process of its own.

kernel.py is Python the learner wrote, and importing it runs it: in the worker (which holds every
buffer and case) its import-time code could wrap the backend's launch, write the expected outputs
or edit kata's store. So the worker never imports it. This process does, under
harness/sandbox/os_sandbox.confine: it reads the workspace, Python and the installed packages the
compilers need, writes only its scratch folder (the compilers' caches), may run only the
compiler's ptxas, and holds no data. Its jail (harness/sandbox/jail.py) caps the scratch folder
(a tmpfs) and its processes and threads, and takes every process it started with it. It answers
the worker in typed messages (msgspec): what kernels kernel.py defines and their parameters, then
one compiled specialisation (PTX, cubin, launch facts) per request; the worker loads the PTX as it
loads NVRTC's.
"""
from __future__ import annotations

import contextlib
import inspect
import multiprocessing
import os
import shutil
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Union

import msgspec

from harness.frontends.python_source import CompiledKernel, FrontendUnavailable, KernelCompileError
from harness.sandbox import jail as _jail

_READY_S = 120.0  # importing Triton or numba, and kernel.py, on a loaded 2-core machine
_COMPILE_S = 300.0
MAX_BYTES = 64 << 20  # a reply (PTX and cubin of one specialisation)
#: the scratch folder's quota: a capped tmpfs (harness/sandbox/jail.py), else counted by a watch
SCRATCH_BYTES, SCRATCH_FILES = _jail.SCRATCH_BYTES, _jail.SCRATCH_FILES
_WATCH_S = 0.1


class Param(msgspec.Struct, array_like=True):
    name: str
    is_constexpr: bool
    has_default: bool
    default: Any = None


class Kernel(msgspec.Struct):
    arg_names: list[str]
    params: list[Param]


class Described(msgspec.Struct, tag="described"):
    language: str
    kernels: dict[str, Kernel]
    unjailed: list[str] = []  # what of its jail this machine did not allow (jail.Jail.missing)


class Failed(msgspec.Struct, tag="failed"):
    kind: str  # compile-error | unavailable | internal
    message: str
    file: Union[str, None] = None
    line: Union[int, None] = None
    source: Union[str, None] = None


class Compiled(msgspec.Struct, tag="compiled"):
    entry: str
    ptx: str
    cubin: Union[bytes, None]
    threads: Union[int, None]
    shared: int
    scratch: list[int]


class CompileTriton(msgspec.Struct, tag="triton"):
    name: str
    types: dict[str, str]
    constexprs: dict[str, Any]
    divisible: list[int]
    num_warps: int
    num_stages: int


class CompileNumba(msgspec.Struct, tag="numba"):
    name: str
    described: list[tuple[str, str]]
    cubin: bool


_ENC = msgspec.msgpack.Encoder()
_FROM_CHILD = msgspec.msgpack.Decoder(Union[Described, Failed, Compiled])
_TO_CHILD = msgspec.msgpack.Decoder(Union[CompileTriton, CompileNumba])


class KernelInfo:
    """What the worker knows of one kernel: its parameters (Triton's JITFunction's shape)."""

    def __init__(self, wire: Kernel):
        self.arg_names = list(wire.arg_names)
        self.params = [_ParamInfo(p) for p in wire.params]


class _ParamInfo:
    def __init__(self, p: Param):
        self.name, self.is_constexpr = p.name, p.is_constexpr
        self.default = p.default if p.has_default else inspect.Parameter.empty


class KernelProcess:
    """The worker's handle on the sandboxed process that holds kernel.py."""

    def __init__(self, path: Path):
        from harness.sandbox import os_sandbox

        self.path = Path(path)
        self.scratch = tempfile.mkdtemp(prefix="kata-kernel-")
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=main, args=(child, str(self.path), self.scratch), daemon=True,
                                name="kata-kernel-py")
        os_sandbox.start_child(self.proc)  # a daemon worker may start it (the planner too)
        child.close()
        self.over_quota = ""
        threading.Thread(target=self._watch, daemon=True, name="kata-kernel-scratch").start()
        reply = self._receive(_READY_S, "importing it")
        self.language, self.kernels = reply.language, {k: KernelInfo(v) for k, v in reply.kernels.items()}
        self.unjailed = list(reply.unjailed)
        self.sandboxed = not os_sandbox.probe()["missing"]

    def compile(self, request) -> CompiledKernel:
        self.conn.send_bytes(_ENC.encode(request))
        c = self._receive(_COMPILE_S, f"compiling {request.name}")
        return CompiledKernel(c.entry, c.ptx, c.cubin, c.threads, c.shared, tuple(c.scratch))

    def _watch(self) -> None:
        """Stop the process once its scratch folder holds more than the quota: the quota where the
        machine allows no tmpfs (jail.probe); in the jail the worker sees the folder empty."""
        proc = self.proc
        while proc is not None and proc.is_alive():
            files, size = 0, 0
            for root, dirs, names in os.walk(self.scratch):
                files += len(names) + len(dirs)
                for n in names:
                    with contextlib.suppress(OSError):
                        size += os.lstat(os.path.join(root, n)).st_size
            if files > SCRATCH_FILES or size > SCRATCH_BYTES:
                self.over_quota = (f"kernel.py's process wrote {files} files, {size >> 20} MiB into its scratch "
                                   f"folder (at most {SCRATCH_FILES} files, {SCRATCH_BYTES >> 20} MiB): stopped")
                proc.kill()
                return
            time.sleep(_WATCH_S)

    def _receive(self, timeout_s: float, doing: str):
        name = self.path.name
        if not self.conn.poll(timeout_s):
            self.close()
            raise KernelCompileError(f"{doing} took longer than {timeout_s:.0f} s and was stopped", name)
        try:
            reply = _FROM_CHILD.decode(self.conn.recv_bytes(MAX_BYTES))
        except (EOFError, OSError):
            self.close()
            raise KernelCompileError(self.over_quota or f"the process {doing} ended (kernel.py exited, or hit "
                                     "a sandbox limit)", name) from None
        except msgspec.MsgspecError as exc:
            self.close()
            raise KernelCompileError(f"malformed message from the process {doing}: {exc}", name) from None
        if isinstance(reply, Failed):
            if reply.kind == "unavailable":
                raise FrontendUnavailable(reply.message)
            raise KernelCompileError(reply.message, reply.file, reply.line, reply.source)
        return reply

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
            self.proc.join(5)
            _jail.sweep(self.proc.pid)  # where no pid namespace took its processes with it
        self.proc = None
        shutil.rmtree(self.scratch, ignore_errors=True)


def _readable(path: Path) -> list[str]:
    import harness

    paths = sysconfig.get_paths()
    # sys.prefix: a virtual environment's pyvenv.cfg, read by the Python a library starts (_executables)
    roots = [str(path.resolve().parent), paths["stdlib"], paths["platstdlib"], paths["purelib"], paths["platlib"],
             str(Path(harness.__file__).resolve().parent), "/usr/lib", "/lib", "/usr/lib64", "/lib64",
             sys.prefix, sys.base_prefix]
    return [r for r in dict.fromkeys(roots) if r and os.path.isdir(r)]


def _executables() -> tuple[str, ...]:
    """ptxas of Triton's wheel (a Triton compile runs it), the dynamic loader it needs, and the running
    Python itself: cuda-pathfinder starts it as a canary when numba looks for CUDA's headers outside
    site-packages. The child inherits this process's Landlock rules, limits and namespaces."""
    found = [str(Path(sys.executable).resolve())] if sys.executable else []
    try:
        import triton.backends.nvidia as nv

        found += [str(p) for p in (Path(nv.__file__).parent / "bin").glob("ptxas*")]
    except ImportError:
        pass
    found += [str(Path(p).resolve()) for p in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")
              if os.path.exists(p)]
    return tuple(found)


def main(conn, path: str, scratch: str) -> None:
    """The sandboxed process: import kernel.py, describe its kernels, compile on request."""
    from harness.frontends.languages import language_of
    from harness.frontends.python_source import load_module
    from harness.sandbox import os_sandbox

    os_sandbox.die_with_parent()
    os_sandbox.close_inherited(keep=(conn.fileno(),))
    path_ = Path(path)
    cuda_dirs = []  # numba's CUDA folders, found before the environment goes and the jail starts
    with contextlib.suppress(Exception):  # what fails here fails again below, where it is reported
        if language_of(path_) == "numba":
            from harness.frontends import numba as _numba

            cuda_dirs = _numba.resolve_cuda()
    for key in [k for k in os.environ if k not in ("PATH", "LANG", "LC_ALL")]:
        del os.environ[key]
    os.environ.update(HOME=scratch, TMPDIR=scratch, TRITON_CACHE_DIR=os.path.join(scratch, "triton"),
                      NUMBA_CACHE_DIR=os.path.join(scratch, "numba"))
    jailed = _jail.enter(scratch)  # from here on a child: capped scratch, tasks, its own pid namespace
    me = os.getpid()
    os.chdir(scratch)
    send = lambda m: conn.send_bytes(_ENC.encode(m))  # noqa: E731
    try:
        language = language_of(path_)
        if language == "triton":
            from harness.frontends import triton as fe

            fe._triton()
        else:
            from harness.frontends import numba as fe

            fe._cuda()
        os_sandbox.confine(_readable(path_) + cuda_dirs, cpu_s=900, writable=(scratch,), executable=_executables(),
                           keep_caps=jailed.keep_caps)
        module = load_module(path_)
        _only(me)
        kernels = fe.kernels(module)
        send(Described(language, {name: _describe(fn, language) for name, fn in kernels.items()}, jailed.missing))
    except BaseException as exc:  # noqa: BLE001 - everything kernel.py can do wrong, sent back
        _only(me)
        send(_failure(exc, jailed))
        return
    while True:
        try:
            request = _TO_CHILD.decode(conn.recv_bytes(1 << 20))
        except (EOFError, OSError, msgspec.MsgspecError):
            return
        try:
            fn = kernels[request.name]
            if isinstance(request, CompileTriton):
                defaults = {p.name: p.default for p in fn.params}
                constexprs = {k: defaults[k] if v == OPAQUE_DEFAULT else v for k, v in request.constexprs.items()}
                c = fe.compile_kernel(fn, path_, dict(request.types), constexprs,
                                      tuple(request.divisible), request.num_warps, request.num_stages)
            else:
                c = fe.compile_kernel(fn, path_, [fe.numba_type(k, d) for k, d in request.described],
                                      cubin=request.cubin)
            _only(me)
            send(Compiled(c.entry, c.ptx, c.cubin, c.threads, int(c.shared or 0), [int(s) for s in c.scratch]))
        except BaseException as exc:  # noqa: BLE001
            _only(me)
            send(_failure(exc, jailed))


def _describe(fn, language: str) -> Kernel:
    if language == "triton":
        params = [Param(p.name, bool(p.is_constexpr), p.default is not inspect.Parameter.empty,
                        _plain(p.default)) for p in fn.params]
        return Kernel(list(fn.arg_names), params)
    code = fn.__code__
    names = list(code.co_varnames[:code.co_argcount])
    return Kernel(names, [Param(n, False, False) for n in names])


#: a constexpr default that is no plain value (a tl.dtype): the child puts the real one back
OPAQUE_DEFAULT = "\0kata: the parameter's own default"


def _plain(value):
    """A default value that travels (numbers, strings, None), or the OPAQUE_DEFAULT mark."""
    return value if value is None or isinstance(value, (bool, int, float, str)) else OPAQUE_DEFAULT


def _only(me: int) -> None:
    """A process kernel.py forked ends here: only the kernel process itself speaks on the pipe."""
    if os.getpid() != me:
        os._exit(0)


def _failure(exc: BaseException, jailed=None) -> Failed:
    limit = _jail.explain(exc, jailed)
    if limit is not None:
        where = exc if isinstance(exc, KernelCompileError) else None
        return Failed("compile-error", limit, where and where.file, where and where.line, where and where.source)
    if isinstance(exc, KernelCompileError):
        return Failed("compile-error", exc.message, exc.file, exc.line, exc.source)
    if isinstance(exc, FrontendUnavailable):
        return Failed("unavailable", str(exc))
    return Failed("internal", f"{type(exc).__name__}: {exc}"[:4000])
