"""The typed results of a grade's stages and the GradeReport that carries them, below the packages
that make them (grading, performance, the pipeline) and those that read them (the reports, the
practice store, `kata dev check`).

One frozen dataclass per stage, each field commented.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from harness.emulator.findings import cause_rank


@dataclass(frozen=True)
class CompileStage:
    ok: bool  # NVRTC produced PTX (and ptxas a cubin)
    diagnostics: tuple  # harness.frontends.nvrtc.Diagnostic: errors and warnings at the learner's file:line
    log: str  # NVRTC's whole log
    message: str = ""  # our own sentence when the file never reached NVRTC (empty, binary, launch.py syntax)
    nvrtc_version: tuple[int, int] = (0, 0)
    compiler: str = ""  # who compiled it, for the report's last line: "NVRTC 13.0", "clang (KATA_FRONTEND=clang)"

    def warnings_shown(self) -> tuple:
        """Compiler warnings worth a line in a passing or failing report (at most 3)."""
        return tuple(d for d in self.diagnostics if d.severity == "warning")[:3]

    def headline(self) -> str:
        if self.message:
            return f"does not compile: {self.message}"
        errors = [d for d in self.diagnostics if d.severity == "error"]
        if not errors:
            return "does not compile: " + (self.log.strip().splitlines() or ["NVRTC failed"])[0]
        d = errors[0]
        more = f" (and {len(errors) - 1} more errors)" if len(errors) > 1 else ""
        return f"does not compile: {d.file}:{d.line}: {d.message}{more}"


@dataclass(frozen=True)
class ResourceStage:
    kernels: tuple  # harness.frontends.nvrtc.Resources per kernel: registers, static shared, spills, stack
    occupancy: tuple  # grader.performance.occupancy.OccupancyResult per distinct launch configuration


@dataclass(frozen=True)
class CaseFailure:
    params: dict  # the (shrunk) failing case
    origin: str  # public | drawn | hidden | requested
    reason: str  # the first reason: wrong-answer, a finding kind, launch-error, crash, timeout
    reasons: tuple[str, ...]  # every reason this run showed (a wrong answer and the OOB that caused it)
    headline: str  # "fails for n = 257: out[0] = 256.0, expected 257.0"
    mismatches: tuple  # grader.grading.check.Mismatch: the first few
    mismatch_count: int  # in total
    problem: object  # harness.sandbox.isolation.Problem when the run itself failed
    rerun: str  # the command that runs exactly this case again


@dataclass(frozen=True)
class CorrectnessStage:
    ok: bool
    cases_run: int  # public + drawn (shrink attempts included) + hidden
    public: int
    drawn: int
    hidden: int
    seed: int  # hypothesis's seed and the root of every case's data rng
    examples: int  # the drawn-case budget
    failure: CaseFailure | None


@dataclass(frozen=True)
class MemoryStage:
    case: dict | None  # the case run with sanitizer and counters on (the largest passing one)
    findings: tuple  # what the sanitizer found on that run
    report: object  # grader.performance.efficiency.MemoryReport (None without counters)
    note: str  # why the stage is incomplete, if it is
    label: str = ""  # "" on the CPU; "sanitizer (CPU emulator)" when a GPU grade borrowed the emulator
    # GPU grades: public cases rerun on the emulator with the sanitizer on. When
    # one had an error finding, `case` and `findings` are that run's.
    screened: int = 0


@dataclass(frozen=True)
class GradeReport:
    kata: str  # kata id
    title: str
    workspace: str  # the graded folder
    backend: str  # cpu | gpu
    backend_reason: str  # why that backend ("auto: no CUDA GPU visible to CuPy ...")
    seed: int
    verdict: str  # pass | fail | error
    stage: str  # the stage that ended the grade: compile | correctness | sanitizer | performance | done
    headline: str  # one line: what happened
    reasons: tuple[str, ...]  # machine-readable causes (compile-error, wrong-answer, race-raw, ...)
    compile: CompileStage
    resources: ResourceStage | None = None
    correctness: CorrectnessStage | None = None
    findings: tuple = ()  # harness.emulator Findings, merged by (kind, file, line)
    memory: MemoryStage | None = None  # sanitizer and counters (CPU); the emulator's sanitizer only (GPU)
    performance: object = None  # grader.performance.measured.PerformanceResult (GPU only)
    estimate: object = None  # grader.performance.model.Estimate: the H200 model's estimate (CPU only)
    notes: tuple[str, ...] = field(default_factory=tuple)  # e.g. "launch.py missing: the kata's default plan was used"
    sources: str = ""  # sha256 (16 hex digits) of kernel.cu and launch.py as read once at the start
    diagnostic: bool = False  # a --case grade: shown, recorded as diagnostic, never a pass of the kata

    @property
    def score(self) -> float | None:
        summary = getattr(self.performance, "summary", None)
        value = getattr(summary, "value", None)
        return float(value) if value is not None else None


def merge_findings(findings) -> tuple:
    """One finding per (kind, file, line): the first description, counts summed."""
    merged: dict[tuple, object] = {}
    for f in findings:
        key = (f.kind, f.file, f.line)
        if key in merged:
            merged[key] = replace(merged[key], count=merged[key].count + f.count)
        else:
            merged[key] = f
    # errors first, causes before their symptoms (an uninitialised read before the out-of-bounds
    # access its garbage index makes), then by line
    return tuple(sorted(merged.values(), key=lambda f: (f.severity != "error", cause_rank(f.kind), f.line or 0)))
