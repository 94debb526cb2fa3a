"""The worker process's side of isolation: load launch.py once, then run cases on request.

Everything the learner's code can do wrong is caught here and sent back as a Problem; only a
crash, a kill or a hang ends the process, and harness.sandbox.isolation.Worker reports those.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import os
import sys
import threading
import time
import traceback

import numpy as np

from harness.sandbox.protocol import OUTPUT_LIMIT, Problem, Program, RunResult, RunSpec, poison_byte
from harness.backends.plan import LaunchError, Plan
from harness.sandbox.launch_py import _BACKEND_MODULES, _LaunchPyProblem, _launch_py_problem, _load_launch  # noqa: F401
from harness.sandbox import device_stdout, wire
from harness.sandbox.plan_host import HostFailure


def make_backend(spec: str, sanitize: bool, counters: bool, schedule: int = 0):
    if spec == "cpu":
        from harness.backends.cpu import CpuBackend

        return CpuBackend(sanitize=sanitize, counters=counters, schedule=schedule)
    if spec == "gpu":
        from harness.backends.gpu import GpuBackend

        return GpuBackend()
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)(sanitize=sanitize, counters=counters)


def reply(conn, obj) -> None:
    """To the grader: plain data (harness/sandbox/wire.py), never a pickle; large arrays as files of
    the spill folder the grader reads them from."""
    conn.send_bytes(wire.pack(obj, SPILL))


#: this worker's pipe to the grader (tests that break it on purpose find it here)
GRADER_CONN = None
#: where large arrays of a reply go (wire.py): spill_folder(scratch), None without a scratch folder
SPILL = None


def spill_folder(scratch: str) -> str:
    return os.path.join(scratch, "wire")


def main(conn, memory_bytes: int | None, scratch: str | None = None) -> None:
    global GRADER_CONN, SPILL
    GRADER_CONN = conn
    if scratch:  # the grader's folder for this worker: it removes it whatever happens here
        import tempfile

        tempfile.tempdir = scratch
        SPILL = spill_folder(scratch)
    # launch.py's prints must not reach the grader's stdout (it may be printing JSON).
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        _, program = conn.recv()  # ("program", Program): see Worker._start for why not an argument
    except (EOFError, OSError):
        return
    try:
        if program.backend == "cpu":
            import harness.emulator  # noqa: F401  (import before the cap: shared libraries map address space)
        elif program.backend not in ("gpu",):
            importlib.import_module(program.backend.partition(":")[0])
        if memory_bytes:
            import resource

            try:
                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, resource.RLIM_INFINITY))
            except (ValueError, OSError):
                if sys.platform.startswith("linux"):
                    raise
                # macOS neither enforces an address-space cap nor always accepts one: run uncapped
        from harness.sandbox.plan_host import PlanHost

        # launch.py runs in a process of its own that never sees the kata's data (plan_host.py).
        launch_fn = PlanHost(program.launch_path, source=program.launch_source, kernel_source=program.kernel_source,
                             sandbox={"required": program.require_sandbox})
        problem = launch_fn.start()
        if problem is not None:
            reply(conn, ("problem", problem))
            return
    except Exception as exc:
        reply(conn, ("problem", Problem("internal", f"the worker could not start: {exc}",
                                      detail=traceback.format_exc())))
        return
    reply(conn, ("ready", None))
    while True:
        try:
            kind, spec = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "stop":
            launch_fn.close()
            return
        if kind in ("prefetch", "beside"):  # no reply: the grader does not wait for it
            start_background(*spec, beside_runs=kind == "beside")
            continue
        if kind == "run":
            # nothing of ours runs beside the learner's plan (stdout capture, the GPU), except work
            # sent as "beside" (an import that neither prints nor touches the GPU)
            wait_background(beside_runs=False)
        result = _run(program, launch_fn, spec) if kind == "run" else _call(program, launch_fn, *spec)
        try:
            reply(conn, result)
        except (BrokenPipeError, ConnectionResetError):
            return  # the grader is gone (it killed us, or it died): nobody wants the result
        except Exception as exc:  # an unpicklable finding or counter is our bug, not the learner's
            reply(conn, RunResult({}, (), problem=Problem("internal", f"result not transferable: {exc}",
                                                        detail=traceback.format_exc())))


# -- background work (Worker.prefetch) --------------------------------------------------------------

#: background threads started by "prefetch" messages, oldest first; finished ones are dropped on wait
_BACKGROUND: list[threading.Thread] = []
#: those started by "beside" messages: a `run` does not wait for them, a wait_background() does
_BESIDE: list[threading.Thread] = []
#: tracebacks of background work that raised (swallowed: a prefetch never decides a verdict)
BACKGROUND_ERRORS: list[str] = []


def start_background(target: str, kwargs: dict, *, beside_runs: bool = False) -> threading.Thread:
    """Run `module:function`(**kwargs) in a daemon thread of this process; exceptions are swallowed
    (kept in BACKGROUND_ERRORS). Whoever needs its results calls wait_background() first.
    beside_runs: the learner's runs need not wait for it (see wait_background)."""

    def body() -> None:
        try:
            module, _, attr = target.partition(":")
            getattr(importlib.import_module(module), attr)(**kwargs)
        except BaseException:  # noqa: BLE001 - an optimisation that failed costs time, nothing else
            BACKGROUND_ERRORS.append(traceback.format_exc())

    thread = threading.Thread(target=body, daemon=True, name=f"kata-prefetch {target}")
    (_BESIDE if beside_runs else _BACKGROUND).append(thread)  # registered before it starts: a wait never misses it
    thread.start()
    return thread


def wait_background(timeout_s: float | None = None, *, beside_runs: bool = True) -> tuple[float, bool]:
    """Join the background threads started so far: (seconds waited, whether all of them finished).
    With timeout_s, threads still running after it are left running (and reported as unfinished).
    beside_runs=False: not those started beside the runs (a `run` waits only for the others)."""
    t0 = time.perf_counter()
    deadline = None if timeout_s is None else t0 + timeout_s
    lists = (_BACKGROUND, _BESIDE) if beside_runs else (_BACKGROUND,)
    for threads in lists:
        for thread in list(threads):
            thread.join(None if deadline is None else max(0.0, deadline - time.perf_counter()))
        threads[:] = [t for t in threads if t.is_alive()]
    return time.perf_counter() - t0, not any(lists)


class _Stop(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _poison(array_dtype: np.dtype, count: int) -> np.ndarray:
    # NaN for floats (fails any comparison); for integers a byte pattern no correct kernel writes
    # on purpose (see isolation.POISON_INT_BYTE): unwritten outputs fail.
    if array_dtype.kind in "fc":
        return np.full(count, np.nan, array_dtype)
    return np.full(count * array_dtype.itemsize, poison_byte(array_dtype), np.uint8).view(array_dtype)


def _run(program: Program, launch_fn, spec: RunSpec) -> RunResult:
    start = time.perf_counter()
    captured = io.StringIO()
    outputs: dict = {}
    changed: tuple[str, ...] = ()
    problem = None
    backend = None
    plan = None
    device_out = device_stdout.start() if program.backend == "gpu" else None  # the GPU's printf
    try:
        backend = make_backend(program.backend, spec.sanitize, spec.counters, spec.schedule)
        if program.kernel_path:  # kernel.py: imported and compiled here, in the worker (dialect.py)
            from harness.backends.dialect import DialectBackend

            backend = DialectBackend(backend, program.kernel_path)
        plan = Plan(backend, program.launch_path)
        backend.load(program.ptx, program.cubin, program.kernel_file)
        values, buffers = [], {}
        for arg in spec.args:
            if arg.role == "scalar":
                values.append(arg.value)
                continue
            data = arg.value if arg.role != "out" else _poison(np.dtype(arg.dtype), arg.count)
            buffers[arg.name] = backend.upload(np.ascontiguousarray(data).reshape(-1))
            if arg.role == "out" and hasattr(backend, "mark_unwritten"):  # the emulator's initcheck
                backend.mark_unwritten(buffers[arg.name])
            values.append(buffers[arg.name])
        try:
            launches, out, problem = launch_fn.run(backend, values, timeout_s=spec.plan_timeout_s)
        except HostFailure as exc:  # a backend call of the plan raised: the kernel's, or ours
            if isinstance(exc.exc, (MemoryError, LaunchError)):
                raise exc.exc from None
            problem = _classify(exc.exc, program)
            if exc.at is not None and exc.at.line and problem.kind != "internal" and not problem.line:
                problem = dataclasses.replace(problem, file=exc.at.file, line=exc.at.line, source=exc.at.source)
            launches, out = (), ""
        captured.write(out)
        plan.launches.extend(launches)
        if problem is not None:
            raise _Stop(problem)
        backend.synchronize()
        for arg in spec.args:
            if arg.role in ("out", "inout"):
                outputs[arg.name] = backend.download(buffers[arg.name])
        changed = tuple(a.name for a in spec.args if a.role == "in" and not np.array_equal(
            backend.download(buffers[a.name]).view(np.uint8),
            np.ascontiguousarray(a.value).reshape(-1).view(np.uint8)))
    except _Stop as exc:
        problem = exc.problem
    except LaunchError as exc:
        problem = Problem("launch-error", exc.message, exc.file, exc.line, exc.source)
    except MemoryError:
        problem = Problem("memory", "the run ran out of memory (the worker's cap); "
                          "is a buffer size computed from the wrong variable?")
    except Exception as exc:
        problem = _classify(exc, program)
    gpu_printed = device_stdout.stop(device_out)
    findings = tuple(getattr(backend, "findings", ()) or ())
    counters = None
    if backend is not None and spec.counters and hasattr(backend, "counters"):
        try:
            counters = backend.counters()
        except Exception as exc:
            problem = problem or Problem("internal", f"counters failed: {exc}", detail=traceback.format_exc())
    stopped = bool(getattr(backend, "stopped", False))
    printed = tuple(getattr(backend, "printed", ()) or ())
    atomic_order = tuple(getattr(backend, "atomic_order", ()) or ()) if spec.schedule else ()
    if backend is not None:
        with contextlib.suppress(Exception):
            backend.close()
    return RunResult(outputs if problem is None else {}, changed, findings, counters,
                     tuple(plan.launches) if plan else (), problem,
                     captured.getvalue()[-OUTPUT_LIMIT:], time.perf_counter() - start, stopped,
                     extra={**({"printf": gpu_printed or printed} if printed or gpu_printed else {}),
                            **({"atomic_order": atomic_order} if atomic_order else {})})


def _call(program: Program, host, target: str, kwargs: dict):
    from harness.sandbox.plan_host import PlanProblem, Replay

    module, _, attr = target.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
        return fn(launch_fn=Replay(host), launch_file=program.launch_path, **kwargs), None
    except PlanProblem as exc:
        return None, exc.problem
    except HostFailure as exc:
        return None, _classify(exc.exc, program)
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
    if isinstance(exc, UnsupportedPTX) and "recursion" in str(exc.opcode):
        # The learner's design, not a gap of ours to report: say what to change (exit 1).
        return Problem("launch-error", "the kernel calls a function recursively, which kata's emulator does "
                       "not run (and a GPU runs only with a small, fixed stack): rewrite the recursion as a "
                       "loop, with an explicit stack in local or shared memory if it needs one",
                       exc.file, exc.line)
    if isinstance(exc, UnsupportedPTX):
        return Problem("unsupported", str(exc), exc.file, exc.line)
    if isinstance(exc, EmulatorError):
        return Problem("internal", f"the emulator failed: {exc}", detail=traceback.format_exc())
    if type(exc).__name__ == "KernelCompileError":  # a Triton or numba kernel that did not compile
        return Problem("compile-error", exc.message, exc.file, exc.line, exc.source)
    if type(exc).__name__ in ("GpuUnavailable", "CompilerUnavailable", "FrontendUnavailable"):
        return Problem("environment", str(exc))
    if type(exc).__name__ in ("CUDARuntimeError", "CUDADriverError"):
        return _cuda_problem(exc, program)
    return _launch_py_problem(exc, program.launch_path)


def _cuda_problem(exc: Exception, program: Program) -> Problem:
    """A CUDA error while the learner's plan ran is the learner's kernel or plan, never ours: kernel
    errors are asynchronous, so it surfaces at the next copy, launch or synchronize, far below
    launch.py, where _launch_py_problem would take it for a bug of ours."""
    text = str(exc)
    squashed = text.upper().replace("_", "")
    at = _launch_py_problem(exc, program.launch_path)
    where = dict(file=at.file, line=at.line, source=at.source) if at.kind == "launch-py" else {}
    if "OUTOFRESOURCES" in squashed:
        return Problem("launch-error", f"CUDA refused the launch ({text}): registers per thread times "
                       "threads per block exceed the SM's register file; use fewer threads per block", **where)
    if "MEMORYALLOCATION" in squashed or "OUTOFMEMORY" in squashed:
        return Problem("memory", f"the GPU ran out of memory ({text}): is a buffer size computed from "
                       "the wrong variable?", **where)
    return Problem("crash", f"the kernel crashed on the GPU ({text}); the sanitizer names the cause "
                   "of an out-of-bounds or misaligned access", **where)
