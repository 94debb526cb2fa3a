"""Learner code (launch.py and the kernels it launches) runs in a worker process, never in ours.

One worker serves every case of a grade (starting Python and loading numpy costs ~0.5 s). A run
that hangs past its timeout is killed; a worker that dies (segfault, the memory cap, a C-level
abort) is restarted for the next case. Whatever happens comes back as a RunResult whose `problem`
says what and where, so the grader never shows a traceback for the learner's mistake.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import signal
import sys
from dataclasses import dataclass, field

from harness.plan import LaunchRecord

_STARTUP_S = 120.0  # importing numpy, the emulator (and numba) on a loaded 2-core machine
_OUTPUT_LIMIT = 4000  # characters of launch.py's prints kept for the report
# Outputs are filled with this before every run so an element the kernel never writes fails the
# check. 0xFF bytes are NaN for floats but -1 for signed integers, a value correct kernels write
# on purpose (BFS's "unreachable", "not found"), so integers get 0xA5 bytes (-1515870811 as int32).
POISON_INT_BYTE = 0xA5
POISON_FLOAT_BYTE = 0xFF


def poison_byte(dtype) -> int:
    """The byte an output buffer of `dtype` is filled with before a run (cudaMemset-style)."""
    import numpy as np

    return POISON_FLOAT_BYTE if np.dtype(dtype).kind in "fc" else POISON_INT_BYTE


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
        from harness import worker as _worker

        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_worker.main, args=(child, self.program, self.memory_bytes),
                                 daemon=True, name="kata-worker")
        with _main_module_hidden():
            self._proc.start()
        child.close()
        self._conn = parent
        # Before "ready" only our code and launch.py's import run (whose errors come back as a
        # Problem), so a worker that dies or stalls here is the grader's problem, not the learner's.
        if not parent.poll(_STARTUP_S):
            self._kill()
            return Problem("internal", f"the worker process did not start within {_STARTUP_S:.0f} s")
        try:
            kind, payload = parent.recv()
        except (EOFError, OSError):
            died = self._died()
            return Problem("internal", f"the worker process failed to start: {died.message}")
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
            result = self._conn.recv()
        except (EOFError, OSError):
            return RunResult({}, (), problem=self._died())
        if self.program.backend == "gpu" and result.problem is not None and result.problem.kind == "crash":
            self._kill()  # a crashed kernel leaves the CUDA context unusable: the next run starts afresh
        return result

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
