"""What the GPU performance stage produces: the worker's raw measurement (RawPerformance, sent to the
grader through harness/sandbox/wire.py) and the grader's judged result (PerformanceResult)."""
from __future__ import annotations

from dataclasses import dataclass, field

from grader.performance import score as _score
from grader.performance.occupancy import OccupancyResult
from harness.measure import timing


@dataclass(frozen=True)
class CaseTiming:
    case: dict  # the bench case's parameters
    kernel: timing.TimingResult  # the learner's launch plan
    baseline: timing.TimingResult | None  # the library at the same shape (None: no torch / none declared)
    score: _score.CaseScore
    recheck: tuple[str, ...]  # mismatches of the output after timing (empty: still correct)
    # every library timed at this shape, (label, median s), fastest first: `baseline` is the first
    # (a kata's reference may offer several, e.g. a dequantise-then-GEMV and a fused int4 kernel)
    libraries: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class PerformanceResult:
    ok: bool  # every case ran, was correct before and after timing, and was scored
    backend: str  # "gpu"; the CPU backend returns a MemoryReport instead
    gpu: str  # device name
    ceilings: _score.Ceilings | None  # what the roofline used (calibrated on this GPU)
    health: str | None  # a warning when the GPU runs > 5 % below its calibration
    cases: tuple[CaseTiming, ...]
    summary: _score.ScoreSummary | None  # geometric mean over cases, tier, next target
    occupancy: tuple[OccupancyResult, ...]  # static report: registers, shared, spills, limiter
    flags: tuple[str, ...] = field(default_factory=tuple)  # everything that makes a number doubtful
    error: str | None = None  # why the stage could not finish (wrong at bench size, launch failure)
    wall_s: float = 0.0  # the stage's own duration, for the latency measurements
    data_s: float = 0.0  # of which making or loading bench inputs and reference outputs
    # Seconds per phase of the stage (PHASES; absent: not reached), and "background_*": what the
    # prefetch spent while the emulator ran the sanitizer (overlapped, not part of wall_s).
    phases: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RawCase:
    """One bench case as the GPU worker measured it: times and output bytes, no verdict, no score."""
    case: dict
    kernel: timing.TimingResult  # the samples; the grader recomputes their statistics
    baseline: timing.TimingResult | None
    libraries: tuple[tuple[str, float], ...]
    notes: tuple[str, ...]  # libraries not timed, and why
    checked: dict  # outputs of the checked run (before timing), name -> array
    after: dict  # the same buffers' outputs after timing
    after_other: dict | None  # the rotation's second set's outputs after timing (None: it never ran)


@dataclass(frozen=True)
class RawPerformance:
    """What the GPU worker sends the grader (harness/sandbox/wire.py): the grader checks and scores it."""
    backend: str
    gpu: str
    ceilings: _score.Ceilings  # calibrated on this GPU: the roofline and the physical floor
    health: str | None
    cases: tuple[RawCase, ...]
    occupancy: tuple[OccupancyResult, ...]
    flags: tuple[str, ...]
    wall_s: float
    data_s: float
    phases: dict
