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
import dataclasses
import multiprocessing
import shutil
import signal
import tempfile
import time

import numpy as np

from harness.backends.base import Buffer
from harness.backends.plan import LaunchError, LaunchRecord
from harness.sandbox import messages
from harness.sandbox.protocol import Problem
from harness.sandbox.replay import PlanProblem, Replay  # noqa: F401  (where the worker finds them)

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
        from harness.sandbox import os_sandbox, planner

        self.close()
        self.scratch = tempfile.mkdtemp(prefix="kata-plan-")  # the only folder the plan may write
        sandbox = {"scratch": self.scratch, **self.sandbox}
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=planner.main,
                                args=(child, self.launch_path, self.facts, sandbox, self.source, self.kernel_source),
                                daemon=True, name="kata-plan")
        # The worker is a daemon process: the plan process dies with it instead (PR_SET_PDEATHSIG).
        os_sandbox.start_child(self.proc)
        child.close()
        self.conn = parent
        if not parent.poll(_READY_S):
            self.close()
            return Problem("internal", f"the launch plan's process did not start within {_READY_S:.0f} s")
        try:
            message = messages.receive_from_plan(parent)
        except messages.MalformedMessage as exc:
            self.close()
            return malformed(exc)
        except (EOFError, OSError):
            return self._died("loading launch.py")
        if isinstance(message, messages.Failed):
            self.close()
            return messages.problem_of(message.problem)
        if not isinstance(message, messages.Ready):
            self.close()
            return malformed(f"{type(message).__name__.lower()} before the plan was ready")
        self.enforced = message.enforced
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
        state = _RunState()

        def desc(v):
            if isinstance(v, Buffer):
                handles[len(handles) + 1] = v
                return messages.Buf(len(handles), np.dtype(v.dtype).str, int(v.size), 0)
            if isinstance(v, np.generic):
                return messages.Num(v.dtype.str, v.item())
            return messages.Num("<f8" if isinstance(v, float) else "<i8", v)

        run = messages.Run([desc(v) for v in values], {k: desc(v) for k, v in (kwargs or {}).items()},
                           float(timeout_s), messages.facts(backend.facts),
                           getattr(backend, "prepare", None) is not None)  # a Triton or numba kernel.py
        messages.send(self.conn, run)
        failure: BaseException | None = None
        deadline = time.monotonic() + timeout_s + _GRACE_S
        while True:
            if not self.conn.poll(max(0.0, deadline - time.monotonic())):
                self.close()
                return (), "", Problem("timeout", f"the launch plan did not answer within {timeout_s:.0f} s",
                                       "launch.py")
            try:
                message = messages.receive_from_plan(self.conn)
            except messages.MalformedMessage as exc:
                if exc.readable:  # refused and remembered: the run fails, at the plan's line if it says
                    state.malformed = state.malformed or str(exc)
                    with contextlib.suppress(OSError):
                        messages.send(self.conn, messages.Refused(f"malformed message: {exc}"))
                    continue
                self.close()  # too long to read: the stream is no longer in step, the plan process ends
                return (), "", malformed(exc)
            except (EOFError, OSError):
                return (), "", self._died("running the plan")
            if isinstance(message, messages.Done):
                launches = tuple(LaunchRecord(r.kernel, r.grid, r.block, r.shared, r.line) for r in message.launches)
                problem = messages.problem_of(message.problem)
                if state.malformed:
                    at = problem or Problem("", "")
                    return launches, message.out, dataclasses.replace(malformed(state.malformed), file="launch.py",
                                                                      line=at.line, source=at.source)
                if failure is not None:
                    raise HostFailure(failure, problem)
                if problem is not None and problem.kind == "host-failed":  # refused, not failed
                    problem = Problem("launch-error", f"refused: {problem.message}", problem.file,
                                      problem.line, problem.source)
                return launches, message.out, problem
            if isinstance(message, (messages.Ready, messages.Failed)):
                self.close()
                return (), "", malformed(f"a {type(message).__name__.lower()} message in the middle of a run")
            try:
                reply = self._answer(backend, message, handles, state, record)
            except _Refused as exc:
                reply = messages.Refused(str(exc))
            except Exception as exc:  # noqa: BLE001 - the backend's: the worker classifies it
                failure = failure or exc
                reply = messages.Refused(f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(OSError):
                messages.send(self.conn, reply)

    def _answer(self, backend, message, handles, state, record):
        if isinstance(message, messages.Params):
            params = backend.kernel_params(message.name)
            return messages.Ok(None if params is None else [[p.name, p.type] for p in params])
        if isinstance(message, messages.Names):
            return messages.Ok(list(getattr(backend, "kernel_names", lambda: [])()))
        if isinstance(message, messages.Alloc):
            count, dtype = message.count, _dtype(message.dtype)
            if count < 0 or count * dtype.itemsize > 1 << 40:
                raise _Refused(f"an allocation of {count} {dtype.name} elements is beyond any GPU's memory")
            buf = backend.alloc(count, dtype)
            handles[len(handles) + 1] = buf
            state.own.add(len(handles))
            if record is not None:
                record.append(("alloc", buf))
            return messages.Ok(len(handles))
        if isinstance(message, messages.Memset):
            buf = _resolve(handles, message.buf)
            backend.memset(buf, message.byte & 0xFF)
            if record is not None:
                record.append(("memset", buf, message.byte & 0xFF))
            return messages.Ok()
        if isinstance(message, messages.Read):
            if message.buf.handle not in state.own:
                raise _Refused("a launch plan may read back only buffers it allocated itself")
            buf = _resolve(handles, message.buf)
            if not 0 <= message.index < buf.size:
                raise _Refused(f"read index {message.index} is outside a buffer of {buf.size} elements")
            state.spend_read()
            one = buf.view(message.index, 1)
            value = backend.download(one)
            if record is not None:
                record.append(("read", one, value.copy()))
            return messages.Ok(value[0].item())
        if isinstance(message, messages.Launch):
            real = [_real(handles, a, backend) for a in message.args]
            backend.launch(message.name, message.grid, message.block, message.shared, real)
            state.launches += 1
            if record is not None:
                record.append(("launch", message.name, message.grid, message.block, message.shared, real))
            return messages.Ok()
        if isinstance(message, messages.Sync):
            backend.synchronize()
            return messages.Ok()
        if isinstance(message, messages.Prepare):  # a Python kernel compiled for this launch
            real = [_real(handles, a, backend) for a in message.args]
            block = tuple(message.block) if isinstance(message.block, list) else message.block
            try:
                entry, block, shared, ready = backend.prepare(message.name, message.grid, block, message.shared,
                                                              list(real), dict(message.options))
            except LaunchError as exc:  # the plan's mistake: the plan process names its line
                raise _Refused(exc.message) from None
            out = []
            for value in ready:
                given = next((message.args[i] for i, r in enumerate(real) if r is value), None)
                if given is None and isinstance(value, Buffer):  # scratch the compiler asked for
                    handles[len(handles) + 1] = value
                    given = messages.Buf(len(handles), np.dtype(value.dtype).str, int(value.size), 0)
                if given is None:
                    given = (messages.Num(value.dtype.str, value.item()) if isinstance(value, np.generic)
                             else messages.Num("<f8" if isinstance(value, float) else "<i8", int(value)
                                               if not isinstance(value, float) else value))
                out.append(given)
            block = list(block) if isinstance(block, (tuple, list)) else [int(block)]
            return messages.Ok([entry, block, int(shared or 0), [messages.msgspec.to_builtins(o) for o in out]])
        raise _Refused(f"unknown request {type(message).__name__}")

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
                messages.send(self.conn, messages.Stop())
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


#: what a plan may read back: one element (at most 8 bytes) per kernel launch it has made, plus this
#: many. A host loop's flag or count fits (BFS reads one int per level); a copy of an input does not:
#: computing on n elements on the host costs n launches, which the timing and the emulator both see.
READS_FREE = 4


class _RunState:
    """One run's buffers the plan allocated and its read-back budget."""

    def __init__(self):
        self.own: set[int] = set()
        self.launches = self.reads = 0
        self.malformed = ""  # why a message was refused as malformed (the run then fails)

    def spend_read(self) -> None:
        if self.reads >= self.launches + READS_FREE:
            raise _Refused(f"a launch plan may read back one element per kernel launch (plus {READS_FREE}); "
                           f"this is read {self.reads + 1} after {self.launches} launches: a flag or a count "
                           "steers a host loop, the answer itself comes from kernels")
        self.reads += 1


def malformed(reason) -> Problem:
    return Problem("launch-error", f"malformed message from launch.py's process: {reason}. A launch plan talks "
                   "to kata only through gpu's methods; the run was stopped", "launch.py")


def _dtype(text: str) -> np.dtype:
    try:
        dtype = np.dtype(text)
    except (TypeError, ValueError):
        raise _Refused(f"{text!r} is not a numpy dtype") from None
    if dtype.kind not in "biuf" or dtype.itemsize > 8:  # numbers only: no object or structured arrays
        raise _Refused(f"a device buffer holds numbers, not {dtype}")
    return dtype


def _resolve(handles: dict, desc: messages.Buf) -> Buffer:
    real = handles.get(desc.handle)
    if real is None:
        raise _Refused("not a device buffer of this run")
    if _dtype(desc.dtype) != np.dtype(real.dtype) or desc.offset < 0 or desc.size < 0 \
            or desc.offset + desc.size > real.size:
        raise _Refused("a view outside its buffer")
    return real.view(desc.offset, desc.size)


def _real(handles: dict, arg, backend=None):
    """A launch argument as the backend takes it: a real buffer, a tensor map encoded for it, or a
    number of its numpy type."""
    if isinstance(arg, messages.Buf):
        return _resolve(handles, arg)
    if isinstance(arg, messages.Map):
        from harness.backends.plan import map_problem

        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in arg.fields.items()}
        buf = _resolve(handles, arg.buf)
        problem = map_problem(buf.nbytes, fields)
        if problem is not None:
            raise _Refused(f"tensor_map: {problem[0]}")
        make = getattr(backend, "tensor_map", None)
        if make is None:
            raise _Refused("this backend has no tensor maps")
        return make(buf, fields)
    if arg.dtype == messages.PLAIN:
        return arg.value  # msgspec gave an int or a float, nothing else
    return _dtype(arg.dtype).type(arg.value)
