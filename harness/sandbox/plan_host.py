"""The worker's side of the launch plan: start the plan process, answer its requests, guard the data.

The plan process (harness/sandbox/planner.py) sees buffers as numbers. Here each number maps to a
real Buffer of the backend, and every request is checked again, because a plan can send anything
down its pipe: a read-back names a buffer the plan allocated itself and lies inside it, a launch
names buffers that exist. `record` keeps what the plan did (in order, with real buffers and the
values its reads returned) so the GPU timing can replay it in this process without a message per
launch (Replay below); a read that returns another value than recorded runs the plan again.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import shutil
import signal
import tempfile
import time

import numpy as np

from harness.backends.base import Buffer
from harness.backends.plan import LaunchError
from harness.sandbox.protocol import Problem

_READY_S = 60.0  # start-up: a fresh interpreter importing numpy on a loaded machine
_GRACE_S = 10.0  # a plan stopped by its own alarm answers well within this


class HostFailure(Exception):
    """A backend call the plan asked for raised; `exc` is the original, `line` launch.py's line."""

    def __init__(self, exc: BaseException, at: Problem | None):
        super().__init__(str(exc))
        self.exc, self.at = exc, at


class PlanHost:
    """One plan process for one program; `run` as often as needed (it restarts after a death)."""

    def __init__(self, launch_path: str, facts=None, sandbox: dict | None = None, source: str | None = None,
                 kernel_source: str | None = None):
        self.launch_path, self.facts, self.sandbox = launch_path, facts, dict(sandbox or {})
        self.source = source  # launch.py as the grade read it: a restart never re-reads the file
        self.kernel_source = kernel_source
        self.proc = self.conn = None
        self.scratch: str | None = None
        self.enforced: dict = {}

    def start(self) -> Problem | None:
        if self.proc is not None and self.proc.is_alive():
            return None
        from harness.sandbox import planner

        self.close()
        self.scratch = tempfile.mkdtemp(prefix="kata-plan-")  # the only folder the plan may write
        sandbox = {"scratch": self.scratch, **self.sandbox}
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=planner.main,
                                args=(child, self.launch_path, self.facts, sandbox, self.source, self.kernel_source),
                                daemon=True, name="kata-plan")
        # The worker is a daemon process, which multiprocessing forbids to have children (it could
        # not join them at exit); the plan process instead dies with the worker (PR_SET_PDEATHSIG).
        config = multiprocessing.current_process()._config
        was = config.pop("daemon", None)
        try:
            self.proc.start()
        finally:
            if was is not None:
                config["daemon"] = was
        child.close()
        self.conn = parent
        if not parent.poll(_READY_S):
            self.close()
            return Problem("internal", f"the launch plan's process did not start within {_READY_S:.0f} s")
        try:
            kind, payload = parent.recv()
        except (EOFError, OSError):
            return self._died("loading launch.py")
        if kind != "ready":
            self.close()
            return payload
        self.enforced = payload
        return None

    def run(self, backend, values: list, kwargs: dict | None = None, timeout_s: float = 100.0,
            record: list | None = None):
        """Run launch(gpu, *values, **kwargs) in the plan process against `backend`:
        (launches, stdout, Problem | None). A backend failure comes back as Problem kind
        raises HostFailure with the original exception and the line of launch.py that asked."""
        problem = self.start()
        if problem is not None:
            return (), "", problem
        handles: dict[int, Buffer] = {}
        own: set[int] = set()

        def desc(v):
            if isinstance(v, Buffer):
                handles[len(handles) + 1] = v
                return ("buf", len(handles), np.dtype(v.dtype).str, int(v.size))
            return ("scalar", v.item() if isinstance(v, np.generic) else v)

        descs = [desc(v) for v in values]
        named = {k: desc(v) for k, v in (kwargs or {}).items()}
        dialect = getattr(backend, "prepare", None) is not None  # a Triton or numba kernel.py
        self.conn.send(("run", (descs, named, timeout_s, backend.facts, dialect)))
        failure: BaseException | None = None
        deadline = time.monotonic() + timeout_s + _GRACE_S
        while True:
            if not self.conn.poll(max(0.0, deadline - time.monotonic())):
                self.close()
                return (), "", Problem("timeout", f"the launch plan did not answer within {timeout_s:.0f} s",
                                       "launch.py")
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                return (), "", self._died("running the plan")
            if message[0] == "done":
                launches, out, problem = message[1]
                if failure is not None:
                    raise HostFailure(failure, problem)
                if problem is not None and problem.kind == "host-failed":  # refused, not failed
                    problem = Problem("launch-error", f"refused: {problem.message}", problem.file,
                                      problem.line, problem.source)
                return launches, out, problem
            try:
                reply = ("ok", self._answer(backend, message, handles, own, record))
            except _Refused as exc:
                reply = ("refused", str(exc))
            except Exception as exc:  # noqa: BLE001 - the backend's: the worker classifies it
                failure = failure or exc
                reply = ("refused", f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(OSError):
                self.conn.send(reply)

    def _answer(self, backend, message, handles, own, record):
        op = message[0]
        if op == "params":
            return backend.kernel_params(str(message[1]))
        if op == "names":
            return list(getattr(backend, "kernel_names", lambda: [])())
        if op == "alloc":
            count, dtype = int(message[1]), np.dtype(message[2])
            if count < 0 or count * dtype.itemsize > 1 << 40:
                raise _Refused(f"an allocation of {count} {dtype.name} elements is beyond any GPU's memory")
            buf = backend.alloc(count, dtype)
            handles[len(handles) + 1] = buf
            own.add(len(handles))
            if record is not None:
                record.append(("alloc", buf))
            return len(handles)
        if op == "memset":
            buf = _resolve(handles, message[1])
            backend.memset(buf, int(message[2]) & 0xFF)
            if record is not None:
                record.append(("memset", buf, int(message[2]) & 0xFF))
            return None
        if op == "read":
            if message[1][0] not in own:
                raise _Refused("a launch plan may read back only buffers it allocated itself")
            buf = _resolve(handles, message[1])
            value = backend.download(buf)
            if record is not None:
                record.append(("read", buf, value.copy()))
            return value
        if op == "launch":
            _, name, grid, block, shared, args = message
            real = [_resolve(handles, a) if isinstance(a, tuple) else a for a in args]
            backend.launch(str(name), tuple(grid), tuple(block), int(shared), real)
            if record is not None:
                record.append(("launch", str(name), tuple(grid), tuple(block), int(shared), real))
            return None
        if op == "sync":
            backend.synchronize()
            return None
        if op == "prepare":  # a Python kernel compiled for this launch, here where kernel.py lives
            _, name, grid, block, shared, args, options = message
            real = [_resolve(handles, a) if isinstance(a, tuple) else a for a in args]
            try:
                entry, block, shared, ready = backend.prepare(str(name), tuple(grid), block, shared, list(real),
                                                              dict(options))
            except LaunchError as exc:  # the plan's mistake: the plan process names its line
                raise _Refused(exc.message) from None
            out = []
            for value in ready:
                given = next((args[i] for i, r in enumerate(real) if r is value), None)
                if given is None and isinstance(value, Buffer):  # scratch the compiler asked for
                    handles[len(handles) + 1] = value
                    given = (len(handles), np.dtype(value.dtype).str, int(value.size), 0)
                out.append(value if given is None else given)
            return entry, block, shared, out
        raise _Refused(f"unknown request {op!r}")

    def _died(self, doing: str) -> Problem:
        proc = self.proc
        if proc is not None:
            proc.join(_GRACE_S)
        code = proc.exitcode if proc is not None else None
        self.close()
        how = (f"signal {signal.Signals(-code).name}" if code is not None and code < 0
               and -code in signal.Signals._value2member_map_ else f"exit code {code}")
        return Problem("launch-py", f"the launch plan's process ended ({how}) while {doing}: launch.py "
                       "exited, killed itself or hit a sandbox limit (CPU time, memory)", "launch.py")

    def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.send(("stop", None))
            with contextlib.suppress(OSError):
                self.conn.close()
        if self.proc is not None:
            self.proc.join(0.5)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(_GRACE_S)
        self.proc = self.conn = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


class _Refused(Exception):
    pass


def _resolve(handles: dict, desc) -> Buffer:
    try:
        handle, dtype, size, offset = desc
        real = handles[handle]
        dtype, size, offset = np.dtype(dtype), int(size), int(offset)
    except (TypeError, ValueError, KeyError):
        raise _Refused("not a device buffer of this run") from None
    if dtype != np.dtype(real.dtype) or offset < 0 or size < 0 or offset + size > real.size:
        raise _Refused("a view outside its buffer")
    return real.view(offset, size)


class Replay:
    """launch_fn for the GPU timing loop: the first call with a set of buffers runs the plan in its
    process and records it; later calls replay the record on the backend here (no message per
    launch). A host read that returns another value than recorded means the sequence may differ:
    that call runs the plan again (and records anew)."""

    def __init__(self, host: PlanHost, timeout_s: float = 100.0):
        self.host, self.timeout_s = host, timeout_s
        self._records: dict = {}
        self.replays = self.reruns = 0

    def __call__(self, plan, *values, **kwargs):
        backend = plan._backend
        key = tuple(_key(v) for v in values) + tuple((k, _key(v)) for k, v in sorted(kwargs.items()))
        record = self._records.get(key)
        if record is not None and self._replay(backend, record):
            self.replays += 1
            return
        record: list = []
        launches, _, problem = self.host.run(backend, list(values), kwargs, self.timeout_s, record=record)
        if problem is not None:
            raise PlanProblem(problem)
        plan.launches.extend(launches)
        self._records = {key: record}  # one case at a time: an older case's buffers are freed
        self.reruns += 1

    @staticmethod
    def _replay(backend, record) -> bool:
        for op in record:
            if op[0] == "memset":
                backend.memset(op[1], op[2])
            elif op[0] == "launch":
                backend.launch(*op[1:])
            elif op[0] == "read":
                if not np.array_equal(backend.download(op[1]), op[2]):
                    return False
        return True


class PlanProblem(Exception):
    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem


def _key(v):
    if isinstance(v, Buffer):
        return ("buf", id(v.handle), v.offset, v.size)
    return ("scalar", v)
