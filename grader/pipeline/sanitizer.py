"""The sanitizer stage: the largest passing case rerun with the sanitizer (and, on the CPU, the
memory counters) on, then the public cases screened on the emulator; an error finding fails the
grade even when every output matched.

These runs need kata's CPU emulator. On the CPU backend they reuse the grade's worker; on the GPU
backend (which has no sanitizer) they borrow a CPU worker, so a missing __syncthreads or an
out-of-bounds read fails `kata grade --backend gpu` as it fails on the CPU, labelled as the
emulator's finding.
"""

from __future__ import annotations

import dataclasses
import time

from grader.grading import cases as _cases
from grader.grading.runs import EMULATOR_LABEL, SCREEN_BUDGET_S, run_case, where as _where
from grader.performance.efficiency import memory_report
from grader.pipeline.draft import ReportDraft
from grader.results import MemoryStage, merge_findings
from harness.sandbox.isolation import Worker

SANITIZE_ELEMENTS = 400_000  # the sanitizer run's case is the largest passing one up to this size


def sanitizer_and_screen(draft: ReportDraft, grade, passed) -> None:
    """Adds the sanitizer stage to `draft`; ends it on an error finding. `passed`: (CaseData,
    CaseOutcome) pairs of the correctness stage."""
    kata, on_gpu, emulator = grade.kata, grade.choice.on_gpu, grade.emulator
    # Counters stay CPU-only: on a GPU grade the timings speak, not the emulator's cache model.
    emulator.timeout_s = min(grade.timeout_s, max(10.0, grade.left_s()))  # near the deadline: short
    memory = sanitizer_stage(kata, emulator, passed, counters=not on_gpu, label=EMULATOR_LABEL if on_gpu else "")
    if not any(f.severity == "error" for f in memory.findings):
        # The sanitizer's findings show only on the cases whose data and code paths trigger them
        # (a one-warp tail, a ragged tile fill): the public edge cases run with it on too. On
        # the GPU they also meet the engine (deadlock, out-of-bounds) only here.
        memory = screen_stage(
            kata,
            emulator,
            [p for p in passed if p[0].case.origin == "public"],
            memory,
            budget_s=max(0.0, min(SCREEN_BUDGET_S, grade.left_s())),
        )
    draft.findings = merge_findings([*draft.findings, *memory.findings])
    draft.memory = memory
    errors = [f for f in draft.findings if f.severity == "error"]
    if errors:
        first = errors[0]
        match = "outputs match on the GPU, but the sanitizer (CPU emulator) found" if on_gpu else "outputs match, but"
        # The emulator's case may be one the learner never saw fail: name it for --case.
        on_case = (
            f" for {_cases.Case(memory.case, '', draft.seed).label()}"
            if memory.case and (on_gpu or memory.screened)
            else ""
        )
        draft.end(
            "fail",
            "sanitizer",
            f"{match} {first.kind} at {_where(first)}{on_case}: {first.message}",
            tuple(dict.fromkeys(f.kind for f in errors)),
        )


def sanitizer_stage(kata, emulator: Worker, passed, *, counters: bool = True, label: str = "") -> MemoryStage:
    """Sanitizer (and counters) on the largest passing case that is small enough to run them on.
    `passed`: (CaseData, CaseOutcome) pairs of the correctness stage."""
    if not passed:
        return MemoryStage(None, (), None, "", label)
    fits = [p for p in passed if p[1].elements <= SANITIZE_ELEMENTS] or [min(passed, key=lambda p: p[1].elements)]
    data, _ = max(fits, key=lambda p: p[1].elements)
    outcome, result = run_case(kata, emulator, data, sanitize=True, counters=counters)
    report = None
    if result is not None and result.counters is not None:
        params = {**data.case.params, **data.scalars}
        report = memory_report([result.counters], data.case.params, kata.reference.cost(**params))
    note = ""
    if outcome.problem is not None:
        note = f"the sanitizer run failed: {outcome.problem.message}"
    elif outcome.check is not None and not outcome.check.ok:
        note = f"with the sanitizer on, {data.case.label()} gave {outcome.check.headline()}"
    return MemoryStage(dict(data.case.params), tuple(outcome.findings), report, note, label)


def screen_stage(
    kata, emulator: Worker, public, memory: MemoryStage, *, budget_s: float = SCREEN_BUDGET_S
) -> MemoryStage:
    """A grade's public cases once more on the emulator, sanitizer on, after the sanitizer run
    (`memory`) found no error. The engine and memory model stop a deadlock, an out-of-bounds or
    misaligned access, a divergent barrier, a trap or a hang on every run; on the CPU every case
    meets them because every case runs on the emulator, on the GPU only the ones screened here do.
    The sanitizer is on too because one case is not every code path: the largest case may be a
    ragged shape that takes a kernel's fallback path (tc-gemm's element-wise tile fill) and never
    meets the cp.async ring whose missing wait an aligned public case shows.
    `public`: (CaseData, CaseOutcome) pairs of the public cases that passed on the GPU. Returns the
    stage of the first case with an error finding (the grade fails on it), else `memory` with the
    count screened and a note on what was left out."""
    started = time.monotonic()
    screened, left = 0, []
    for data, _ in public:
        if dict(data.case.params) == memory.case:
            continue  # the sanitizer run already met what the engine finds there
        if time.monotonic() - started > budget_s:
            left.append(data.case.label())
            continue
        outcome, _ = run_case(kata, emulator, data, sanitize=True)
        screened += 1
        if any(f.severity == "error" for f in outcome.findings):
            return MemoryStage(
                dict(data.case.params), tuple(outcome.findings), None, "", memory.label, screened=screened
            )
        if outcome.problem is not None:
            # The emulator, not the kernel, is in question (the GPU ran this case): say so, grade on.
            note = f"the public-case screen stopped at {data.case.label()}: {outcome.problem.message}"
            return dataclasses.replace(memory, screened=screened, note=_join(memory.note, note))
    note = f"{len(left)} public cases not screened after {budget_s:.0f} s: {'; '.join(left)}" if left else ""
    return dataclasses.replace(memory, screened=screened, note=_join(memory.note, note))


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
