"""Learner code (launch.py and the kernels it launches) runs in a worker process, never in ours.

One worker serves every case of a grade (starting Python and loading numpy costs ~0.5 s). A run
that hangs past its timeout is killed; a worker that dies (segfault, the memory cap, a C-level
abort) is restarted for the next case. Whatever happens comes back as a RunResult whose `problem`
says what and where, so the grader never shows a traceback for the learner's mistake.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import multiprocessing
import os
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.plan import LaunchError, LaunchRecord, Plan

_STARTUP_S = 120.0  # importing numpy, the emulator (and numba) on a loaded 2-core machine
_OUTPUT_LIMIT = 4000  # characters of launch.py's prints kept for the report
_BACKEND_MODULES = ("harness/cpu.py", "harness/gpu.py", "harness/emulator")


@dataclass(frozen=True)
class Program:
    """What a worker loads once: the compiled kernels and the launch plan."""

    backend: str  # "cpu", "gpu", or "module:factory" (tests use a numpy fake)
    ptx: str | None
    cubin: bytes | None
    kernel_file: str  # the learner's file name, e.g. "kernel.cu"
    launch_path: str  # absolute path of launch.py


@dataclass(frozen=True)
class ArgValue:
    name: str
    role: str  # in | out | inout | scalar
    value: object  # ndarray (in, inout), int/float (scalar), None (out)
    dtype: str | None = None  # out only
    count: int = 0  # out only: elements


@dataclass(frozen=True)
class RunSpec:
    args: tuple[ArgValue, ...]  # in launch.py's order
    sanitize: bool = False  # CPU only: shared-memory race and uninitialised-read checks
    counters: bool = False  # CPU only: memory and issue counters


@dataclass(frozen=True)
class Problem:
    """Why a run produced no trustworthy outputs."""

    kind: str  # launch-error | launch-py | crash | timeout | memory | unsupported | environment | internal
    message: str  # one sentence for the learner
    file: str | None = None  # launch.py or kernel.cu
    line: int | None = None
    source: str | None = None  # the offending line's text
    detail: str = ""  # a traceback, for internal problems only


@dataclass(frozen=True)
class RunResult:
    outputs: dict  # name -> ndarray for out/inout args (empty when the run failed)
    changed_inputs: tuple[str, ...]  # `in` args whose bytes differ afterwards
    findings: tuple = ()  # harness.emulator Findings (CPU)
    counters: object = None  # harness.cpu.CounterSummary (CPU, counters on)
    launches: tuple[LaunchRecord, ...] = ()
    problem: Problem | None = None
    stdout: str = ""  # what launch.py printed (bounded)
    seconds: float = 0.0  # wall time inside the worker (never shown as a kernel time)
    stopped: bool = False  # the emulator cut a launch short (watchdog, deadlock)
    extra: dict = field(default_factory=dict)


class Worker:
    """A worker process for one program. Use as a context manager; `run` as often as needed."""

    def __init__(self, program: Program, timeout_s: float = 120.0, memory_bytes: int | None = None):
        self.program = program
        self.timeout_s = timeout_s
        # CUDA maps huge address ranges, so the cap applies to the CPU backend only.
        self.memory_bytes = memory_bytes if program.backend != "gpu" else None
        self._proc = None
        self._conn = None
        self.restarts = 0

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> Problem | None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_worker_main, args=(child, self.program, self.memory_bytes),
                                 daemon=True, name="kata-worker")
        with _main_module_hidden():
            self._proc.start()
        child.close()
        self._conn = parent
        if not parent.poll(_STARTUP_S):
            self._kill()
            return Problem("timeout", f"the worker did not start within {_STARTUP_S:.0f} s")
        try:
            kind, payload = parent.recv()
        except (EOFError, OSError):
            return self._died()
        if kind != "ready":
            self._kill()
            return payload
        return None

    def run(self, spec: RunSpec) -> RunResult:
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self.restarts += 1
            problem = self._start()
            if problem is not None:
                return RunResult({}, (), problem=problem)
        try:
            self._conn.send(("run", spec))
        except (BrokenPipeError, OSError):
            return RunResult({}, (), problem=self._died())
        if not self._conn.poll(self.timeout_s):
            self._kill()
            return RunResult({}, (), problem=Problem(
                "timeout", f"the run took longer than {self.timeout_s:.0f} s and was stopped "
                "(an endless loop, or a spin-wait nothing releases)"))
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            return RunResult({}, (), problem=self._died())

    def call(self, target: str, timeout_s: float, **kwargs):
        """Run `module:function`(launch_fn=..., launch_file=..., **kwargs) in the worker (the GPU
        performance stage runs the learner's plan this way); returns (value, Problem | None)."""
        if self._proc is None or not self._proc.is_alive():
            problem = self._start()
            if problem is not None:
                return None, problem
        try:
            self._conn.send(("call", (target, kwargs)))
        except (BrokenPipeError, OSError):
            return None, self._died()
        if not self._conn.poll(timeout_s):
            self._kill()
            return None, Problem("timeout", f"{target} took longer than {timeout_s:.0f} s and was stopped")
        try:
            return self._conn.recv()
        except (EOFError, OSError):
            return None, self._died()

    def _died(self) -> Problem:
        proc = self._proc
        if proc is not None:
            proc.join(5)
        code = proc.exitcode if proc is not None else None
        self._proc = None
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            if -code == signal.SIGKILL:
                return Problem("memory", f"the worker was killed ({name}): most likely it ran out of memory")
            return Problem("crash", f"the worker crashed with {name}")
        return Problem("crash", f"the worker exited unexpectedly (exit code {code})")

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        self._proc = None

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(("stop", None))
                self._proc.join(2)
            except (BrokenPipeError, OSError):
                pass
        self._kill()


@contextlib.contextmanager
def _main_module_hidden():
    """Spawn re-imports the parent's __main__ in the child; ours may be a console script, pytest,
    or stdin. The worker needs none of it, so the child is told there is none."""
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main is not None and k in main.__dict__}
    try:
        for k in saved:
            if k == "__spec__":
                main.__spec__ = None
            else:
                del main.__dict__[k]
        yield
    finally:
        if main is not None:
            main.__dict__.update(saved)


# -- inside the worker -------------------------------------------------------------------------

def make_backend(spec: str, sanitize: bool, counters: bool):
    if spec == "cpu":
        from harness.cpu import CpuBackend

        return CpuBackend(sanitize=sanitize, counters=counters)
    if spec == "gpu":
        from harness.gpu import GpuBackend

        return GpuBackend()
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)(sanitize=sanitize, counters=counters)


def _worker_main(conn, program: Program, memory_bytes: int | None) -> None:
    # launch.py's prints must not reach the grader's stdout (it may be printing JSON).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        if program.backend == "cpu":
            import harness.emulator  # noqa: F401  (import before the cap: shared libraries map address space)
        elif program.backend not in ("gpu",):
            importlib.import_module(program.backend.partition(":")[0])
        if memory_bytes:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, resource.RLIM_INFINITY))
        launch_fn = _load_launch(program.launch_path)
    except _LaunchPyProblem as exc:
        conn.send(("problem", exc.problem))
        return
    except Exception as exc:
        conn.send(("problem", Problem("internal", f"the worker could not start: {exc}",
                                      detail=traceback.format_exc())))
        return
    conn.send(("ready", None))
    while True:
        try:
            kind, spec = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "stop":
            return
        result = _run(program, launch_fn, spec) if kind == "run" else _call(program, launch_fn, *spec)
        try:
            conn.send(result)
        except Exception as exc:  # an unpicklable finding or counter is our bug, not the learner's
            conn.send(RunResult({}, (), problem=Problem("internal", f"result not transferable: {exc}",
                                                        detail=traceback.format_exc())))


class _LaunchPyProblem(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _load_launch(path: str):
    name = Path(path).name
    try:
        source = Path(path).read_text()
        code = compile(source, path, "exec")
        namespace: dict = {"__name__": "kata_launch_plan", "__file__": path}
        exec(code, namespace)
    except SyntaxError as exc:
        raise _LaunchPyProblem(Problem("launch-py", f"syntax error: {exc.msg}", name, exc.lineno,
                                       (exc.text or "").strip() or None)) from None
    except Exception as exc:
        raise _LaunchPyProblem(_launch_py_problem(exc, path)) from None
    fn = namespace.get("launch")
    if not callable(fn):
        raise _LaunchPyProblem(Problem("launch-py", "launch.py defines no launch(gpu, ...) function", name))
    return fn


def _launch_py_problem(exc: BaseException, path: str) -> Problem:
    """An exception raised in (or by a call from) launch.py: the learner's, at launch.py's line.
    Raised below the backends' own code instead, it is ours."""
    frames = traceback.extract_tb(exc.__traceback__)
    resolved = str(Path(path).resolve())
    mine = [i for i, f in enumerate(frames) if str(Path(f.filename).resolve()) == resolved]
    deeper = frames[mine[-1] + 1:] if mine else frames
    if not mine or any(m in f.filename.replace(os.sep, "/") for f in deeper for m in _BACKEND_MODULES):
        return Problem("internal", f"{type(exc).__name__}: {exc}", detail="".join(traceback.format_exception(exc)))
    frame = frames[mine[-1]]
    return Problem("launch-py", f"{type(exc).__name__}: {exc}", Path(path).name, frame.lineno,
                   (frame.line or "").strip() or None)


def _poison(array_dtype: np.dtype, count: int) -> np.ndarray:
    # NaN for floats (fails any comparison), all-ones bytes for integers: unwritten outputs fail.
    if array_dtype.kind in "fc":
        return np.full(count, np.nan, array_dtype)
    return np.full(count * array_dtype.itemsize, 0xFF, np.uint8).view(array_dtype)


def _run(program: Program, launch_fn, spec: RunSpec) -> RunResult:
    start = time.perf_counter()
    captured = io.StringIO()
    outputs: dict = {}
    changed: tuple[str, ...] = ()
    problem = None
    backend = None
    plan = None
    try:
        backend = make_backend(program.backend, spec.sanitize, spec.counters)
        plan = Plan(backend, program.launch_path)
        backend.load(program.ptx, program.cubin, program.kernel_file)
        values, buffers = [], {}
        for arg in spec.args:
            if arg.role == "scalar":
                values.append(arg.value)
                continue
            data = arg.value if arg.role != "out" else _poison(np.dtype(arg.dtype), arg.count)
            buffers[arg.name] = backend.upload(np.ascontiguousarray(data).reshape(-1))
            values.append(buffers[arg.name])
        with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
            launch_fn(plan, *values)
        backend.synchronize()
        for arg in spec.args:
            if arg.role in ("out", "inout"):
                outputs[arg.name] = backend.download(buffers[arg.name])
        changed = tuple(a.name for a in spec.args if a.role == "in" and not np.array_equal(
            backend.download(buffers[a.name]).view(np.uint8),
            np.ascontiguousarray(a.value).reshape(-1).view(np.uint8)))
    except LaunchError as exc:
        problem = Problem("launch-error", exc.message, exc.file, exc.line, exc.source)
    except MemoryError:
        problem = Problem("memory", "the run ran out of memory (the worker's cap); "
                          "is a buffer size computed from the wrong variable?")
    except Exception as exc:
        problem = _classify(exc, program)
    findings = tuple(getattr(backend, "findings", ()) or ())
    counters = None
    if backend is not None and spec.counters and hasattr(backend, "counters"):
        try:
            counters = backend.counters()
        except Exception as exc:
            problem = problem or Problem("internal", f"counters failed: {exc}", detail=traceback.format_exc())
    stopped = bool(getattr(backend, "stopped", False))
    if backend is not None:
        with contextlib.suppress(Exception):
            backend.close()
    return RunResult(outputs if problem is None else {}, changed, findings, counters,
                     tuple(plan.launches) if plan else (), problem,
                     captured.getvalue()[-_OUTPUT_LIMIT:], time.perf_counter() - start, stopped)


def _call(program: Program, launch_fn, target: str, kwargs: dict):
    module, _, attr = target.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
        return fn(launch_fn=launch_fn, launch_file=program.launch_path, **kwargs), None
    except LaunchError as exc:
        return None, Problem("launch-error", exc.message, exc.file, exc.line, exc.source)
    except MemoryError:
        return None, Problem("memory", "the run ran out of memory")
    except Exception as exc:
        return None, _classify(exc, program)


def _classify(exc: Exception, program: Program) -> Problem:
    try:
        from harness.emulator.findings import EmulatorError, UnsupportedPTX
    except ImportError:  # pragma: no cover - findings.py ships with the package
        EmulatorError = UnsupportedPTX = ()
    if isinstance(exc, UnsupportedPTX):
        return Problem("unsupported", str(exc), exc.file, exc.line)
    if isinstance(exc, EmulatorError):
        return Problem("internal", f"the emulator failed: {exc}", detail=traceback.format_exc())
    if type(exc).__name__ in ("GpuUnavailable", "CompilerUnavailable"):
        return Problem("environment", str(exc))
    return _launch_py_problem(exc, program.launch_path)
