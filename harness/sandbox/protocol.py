"""What the grader and its worker process say to each other: the program, a run's arguments and
its result. Both sides import this module; neither imports the other's."""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.backends.plan import LaunchRecord

OUTPUT_LIMIT = 4000  # characters of launch.py's prints kept for the report
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
    launch_source: str | None = None  # its text as read once at the start of the grade (None: read it)
    kernel_source: str | None = None  # kernel.cu's text, for the parameters' C types (signatures.py)
    require_sandbox: bool = False  # hidden tests: launch.py never runs without the full OS sandbox
    kernel_path: str = ""  # absolute path of a Python kernel (Triton, numba): compiled in the worker


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
    schedule: int = 0  # CPU only: 0 the emulator's default order, s > 0 another legal one (emulator schedule.py)
    plan_timeout_s: float = 100.0  # launch.py's own alarm; the Worker sets it below its timeout


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
    counters: object = None  # harness.backends.cpu.CounterSummary (CPU, counters on)
    launches: tuple[LaunchRecord, ...] = ()
    problem: Problem | None = None
    stdout: str = ""  # what launch.py printed (bounded)
    seconds: float = 0.0  # wall time inside the worker (never shown as a kernel time)
    stopped: bool = False  # the emulator cut a launch short (watchdog, deadlock)
    extra: dict = field(default_factory=dict)
