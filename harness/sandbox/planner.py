"""The launch plan's own process: launch.py runs here, and nothing of the kata's data is here.

The worker (harness/sandbox/worker.py) holds the backend and every buffer; this process holds only
opaque handles (numbers) and asks the worker, one message per call, to allocate, memset, launch or
read back. The worker refuses to read back any buffer the plan did not allocate itself, so no
attribute of `gpu` (not even `gpu._backend`) leads to the kata's inputs or outputs: the answer has
to come from kernels. The operating system's sandbox (harness/sandbox/os_sandbox.py) is applied
before launch.py's first line runs. See docs/sandbox.md.
"""
from __future__ import annotations

import contextlib
import io
import os
import signal

import numpy as np

from harness.backends.base import H200, Buffer, DeviceFacts, KernelParam
from harness.backends.plan import LaunchError, Plan
from harness.frontends.signatures import mismatch, pointer_types
from harness.sandbox import messages
from harness.sandbox.protocol import OUTPUT_LIMIT, Problem

#: seconds of CPU the plan process may use over a whole grade before the kernel stops it
LIFETIME_CPU_S = 900


SANDBOX_RULES = ("launch.py runs sandboxed: it may read its workspace and Python, write only a scratch "
                 "folder, and start no process, open no socket, signal no other process; it plans "
                 "launches, the answer comes from kernels")


class PlanTimeout(BaseException):
    """Raised in launch.py's frame by the plan's alarm (a BaseException: `except Exception` in
    launch.py cannot swallow it)."""


class _HostRefused(Exception):
    """The worker refused or failed a request; the reason is its message."""


class RemoteBackend:
    """What Plan wraps inside the plan process: every call is a typed message to the worker
    (harness/sandbox/messages.py), which answers or refuses."""

    name = "remote"

    def __init__(self, conn, facts: DeviceFacts):
        self._conn, self.facts = conn, facts
        self._params: dict = {}
        self.dialect = False  # the worker compiles a Python kernel (Triton, numba) per launch

    @property
    def prepare(self):
        """Plan's hook for Python kernels (None for CUDA C): the worker compiles the launch."""
        return self._prepare if self.dialect else None

    def _prepare(self, name, grid, block, shared, args, options):
        if isinstance(block, (tuple, list)):
            block = [int(b) for b in block]
        try:
            ready = self._ask(messages.Prepare(str(name), tuple(int(g) for g in grid), block, shared,
                                               [_arg(a) for a in args], dict(options)))
        except _HostRefused as exc:  # the compiled kernel disagrees with the launch: the plan's line
            raise LaunchError(str(exc)) from None
        except (TypeError, ValueError) as exc:  # options msgspec cannot carry (objects, arrays)
            raise LaunchError(f"launch options must be numbers, strings, lists and dicts of them: {exc}") from None
        entry, block, shared, out = ready
        return entry, tuple(block), shared, [_value(messages.msgspec.convert(a, messages.Arg)) for a in out]

    def _ask(self, *message):
        if len(message) != 1 or not isinstance(message[0], messages.msgspec.Struct):
            # the worker would refuse it too (and stop the run): say so at the plan's line
            raise _HostRefused("not a message of kata's plan protocol: a launch plan talks to kata only "
                               "through gpu's methods")
        message = message[0]
        messages.send(self._conn, message)
        reply = messages.receive_from_worker(self._conn)
        if isinstance(reply, messages.Refused):
            raise _HostRefused(reply.reason)
        return reply.value

    def kernel_params(self, name):
        if name not in self._params:
            found = self._ask(messages.Params(str(name)))
            self._params[name] = None if found is None else [KernelParam(str(n), str(t)) for n, t in found]
        return self._params[name]

    def kernel_names(self):
        return self._ask(messages.Names())

    def alloc(self, count, dtype):
        dtype = np.dtype(dtype)
        return Buffer(self._ask(messages.Alloc(int(count), dtype.str)), dtype, int(count))

    def memset(self, buf, byte):
        self._ask(messages.Memset(_desc(buf), int(byte)))

    def read(self, buf, index):
        return self._ask(messages.Read(_desc(buf), int(index)))

    def download(self, buf):
        if buf.size != 1:
            self.read(buf, buf.size - 1)  # the worker checks the view first (one outside its buffer)
            raise _HostRefused("a launch plan may read back one element at a time (gpu.read), never a "
                               "whole buffer")
        return np.array([self.read(buf, 0)], np.dtype(buf.dtype))

    def tensor_map(self, buf, fields):
        """Plan.tensor_map's backend call: the map is encoded by the worker at launch (_RemoteMap)."""
        return _RemoteMap(buf, fields)

    def launch(self, name, grid, block, shared, args):
        self._ask(messages.Launch(str(name), tuple(grid), tuple(block), int(shared), [_arg(a) for a in args]))

    def synchronize(self):
        self._ask(messages.Sync())


def _desc(buf: Buffer) -> messages.Buf:
    return messages.Buf(int(buf.handle), np.dtype(buf.dtype).str, int(buf.size), int(buf.offset))


class _RemoteMap:
    """A tensor map in the plan process: what the worker needs to encode it."""

    def __init__(self, buf: Buffer, fields: dict):
        self.buf, self.fields = buf, fields


def _arg(value):
    """A launch argument on the wire: a buffer, a tensor map, or a number with its numpy type."""
    if isinstance(value, Buffer):
        return _desc(value)
    if isinstance(value, _RemoteMap):
        return messages.Map(_desc(value.buf), dict(value.fields))
    if isinstance(value, np.generic):
        return messages.Num(value.dtype.str, value.item())
    if isinstance(value, bool):
        return messages.Num("|b1", int(value))
    if isinstance(value, (int, float)):
        return messages.Num(messages.PLAIN, value)
    raise LaunchError(f"a launch argument must be a device buffer or a number, not {type(value).__name__}")


def _value(wire):
    if isinstance(wire, messages.Buf):
        return Buffer(wire.handle, np.dtype(wire.dtype), wire.size, wire.offset)
    if wire.dtype == messages.PLAIN:
        return wire.value
    return np.dtype(wire.dtype).type(wire.value)


_C_NAMES = {"float32": "float", "float64": "double", "float16": "__half"}


class RemotePlan(Plan):
    """Plan whose read() refuses, with launch.py's line, any buffer the plan did not allocate (the
    worker refuses it too: this is the message, the worker is the guard)."""

    def __init__(self, backend, launch_file, own: set, kata: set = frozenset()):
        super().__init__(backend, launch_file)
        self._own, self._kata = own, kata

    def launch(self, name, grid, block=None, args=(), shared: int = 0, **options) -> None:
        types = getattr(self._backend, "kernel_types", {}).get(name) if isinstance(name, str) else None
        if types and isinstance(args, (tuple, list)):
            for i, (value, (pointee, text, line)) in enumerate(zip(args, types), start=1):
                if not isinstance(value, Buffer) or value.handle not in self._kata:
                    continue
                want = mismatch(pointee, value.dtype)
                if want is not None:
                    have = np.dtype(value.dtype)
                    raise self._error(
                        f"argument {i} of {name}: kernel.cu:{line} declares `{text}`, which reads "
                        f"{np.dtype(want).itemsize}-byte {want} values, but this buffer holds {have.name} "
                        f"({have.itemsize} bytes each): the parameter's type does not match the kata's dtype",
                        f"declare it as a pointer to {_C_NAMES.get(have.name, have.name)} in kernel.cu")
        super().launch(name, grid, block, args, shared, **options)

    def empty(self, count, dtype="float32"):
        buf = super().empty(count, dtype)
        self._own.add(buf.handle)
        return buf

    def read(self, buf, index: int = 0):
        self._buffer(buf, "read")
        if buf.handle not in self._own:
            raise self._error("gpu.read of one of the kata's buffers: a launch plan may read back only "
                              "buffers it allocated itself (gpu.empty / gpu.zeros)",
                              "compute the answer in a kernel; read back a flag or a count the plan allocated")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= int(index) < buf.size:
            raise self._error(f"read index {index!r} is outside a buffer of {buf.size} elements")
        try:
            return self._backend.read(buf, int(index))
        except _HostRefused as exc:
            raise self._error(str(exc)) from None


def main(conn, launch_path: str, facts: DeviceFacts | None, sandbox: dict, source: str | None = None,
         kernel_source: str | None = None) -> None:
    """The plan process: sandbox itself, load launch.py, then run the plan on request."""
    from harness.sandbox import os_sandbox
    from harness.sandbox.launch_py import _LaunchPyProblem, _launch_py_problem, _load_launch

    os_sandbox.die_with_parent()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    # Only its pipe: the grader's resource-tracker pipe (spawn hands it down) deleted files for a plan
    os_sandbox.close_inherited(keep=(conn.fileno(),))
    import traceback  # noqa: F401  (imported before the sandbox: formatting an error needs it)

    # Nothing of the grader's environment (tokens, credentials in variables) is the plan's business.
    for key in [k for k in os.environ if k not in ("PATH", "LANG", "LC_ALL", "HOME")]:
        del os.environ[key]
    required = sandbox.pop("required", False)
    enforced = os_sandbox.apply(launch_path, **sandbox)
    if required and enforced["missing"]:
        messages.send(conn, messages.Failed(messages.trouble(Problem(
            "environment", "launch.py was not run: the OS sandbox it needs for hidden tests could not be "
            "applied (" + "; ".join(enforced["missing"]) + ")"))))
        return
    signal.signal(signal.SIGALRM, _timeout)
    signal.signal(signal.SIGXCPU, _timeout)
    try:
        launch_fn = _load_launch(launch_path, source)
    except _LaunchPyProblem as exc:
        messages.send(conn, messages.Failed(messages.trouble(exc.problem)))
        return
    except PlanTimeout:
        messages.send(conn, messages.Failed(messages.trouble(
            Problem("timeout", "launch.py did not finish loading in time", "launch.py"))))
        return
    messages.send(conn, messages.Ready(enforced))
    backend = RemoteBackend(conn, facts or H200)
    backend.kernel_types = pointer_types(kernel_source or "")
    while True:
        try:
            request = messages.receive_from_worker(conn)
        except (EOFError, OSError, messages.MalformedMessage):
            return
        if not isinstance(request, messages.Run):
            return
        backend.facts, backend.dialect = messages.device_facts(request.facts), request.dialect
        problem, launches, out, fatal = _run(backend, launch_fn, launch_path, request.args, request.kwargs,
                                             request.timeout_s, _launch_py_problem)
        done = messages.Done([messages.Launched(r.kernel, r.grid, r.block, r.shared, r.line) for r in launches],
                             out, messages.trouble(problem))
        with contextlib.suppress(OSError):
            messages.send(conn, done)
        if fatal:  # a reply the worker still owes us would arrive out of turn: start afresh
            os._exit(0)


def _given(wire):
    """A kata argument as launch.py sees it: a buffer, or a plain Python number (as before)."""
    return _value(wire) if isinstance(wire, messages.Buf) else wire.value


def _timeout(signum, frame):
    raise PlanTimeout(signum)


def _run(backend, launch_fn, launch_path, descs, kwargs, timeout_s, launch_py_problem):
    own: set = set()
    kata = {d.handle for d in [*descs, *kwargs.values()] if isinstance(d, messages.Buf)}
    plan = RemotePlan(backend, launch_path, own, kata)
    values = [_given(d) for d in descs]
    named = {k: _given(d) for k, d in kwargs.items()}
    captured = io.StringIO()
    problem, fatal = None, False
    signal.setitimer(signal.ITIMER_REAL, max(timeout_s, 0.01))
    try:
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            launch_fn(plan, *values, **named)
            backend.synchronize()
    except PlanTimeout as exc:
        at = launch_py_problem(exc, launch_path)
        line = f" (it was at line {at.line}: {at.source})" if at.line else ""
        problem = Problem("timeout", f"the launch plan was stopped after {timeout_s:.0f} s{line}: an endless "
                          "loop in launch.py, or a host loop whose exit condition never comes true",
                          "launch.py", at.line, at.source)
        fatal = True
    except LaunchError as exc:
        problem = Problem("launch-error", exc.message, exc.file, exc.line, exc.source)
    except _HostRefused as exc:  # the worker knows what failed and says so; this is where
        at = launch_py_problem(exc, launch_path)
        problem = Problem("host-failed", str(exc), at.file, at.line, at.source)
    except MemoryError:
        problem = Problem("memory", "launch.py ran out of memory (the plan process's cap)", "launch.py")
    except PermissionError as exc:  # the sandbox said no: say what it allows
        at = launch_py_problem(exc, launch_path)
        problem = Problem(at.kind, f"{at.message}: {SANDBOX_RULES}", at.file, at.line, at.source)
    except Exception as exc:  # noqa: BLE001 - the learner's exception, at launch.py's line
        problem = launch_py_problem(exc, launch_path)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return problem, plan.launches, captured.getvalue()[-OUTPUT_LIMIT:], fatal
