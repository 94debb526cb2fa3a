"""The sanitizer stage: the largest passing case rerun with the sanitizer (and, on the CPU, the
memory counters) on, then the public cases screened on the emulator; an error finding fails the
grade even when every output matched.

These runs need kata's CPU emulator. On the CPU backend they reuse the grade's worker; on the GPU
backend (which has no sanitizer) they borrow a CPU worker, so a missing __syncthreads or an
out-of-bounds read fails `kata grade --backend gpu` as it fails on the CPU, labelled as the
emulator's finding. The order check then reruns the sanitizer's case under two other legal
schedules when the kernel has atomics (order_stage).
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

from grader.grading import cases as _cases
from grader.grading import stage_progress as _progress
from grader.grading.runs import EMULATOR_LABEL, SCREEN_BUDGET_S, CaseOutcome, at as _at, run_case
from grader.performance.efficiency import memory_report
from grader.pipeline.draft import ReportDraft
from grader.results import MemoryStage, merge_findings
from harness.sandbox.isolation import Worker

SANITIZE_ELEMENTS = 400_000  # the sanitizer run's case is the largest passing one up to this size
_ATOMIC = re.compile(r"^\s*(?:@!?%\w+\s+)?(?:atom|red)\.", re.M)  # an atomic instruction in PTX (not bar.red)


def sanitizer_and_screen(draft: ReportDraft, grade, passed) -> None:
    """Adds the sanitizer stage to `draft`; ends it on an error finding. `passed`: (CaseData,
    CaseOutcome) pairs of the correctness stage."""
    kata, on_gpu, emulator = grade.kata, grade.choice.on_gpu, grade.emulator
    # Counters stay CPU-only: on a GPU grade the timings speak, not the emulator's cache model.
    emulator.timeout_s = min(grade.timeout_s, max(10.0, grade.left_s()))  # near the deadline: short
    _progress.stage("sanitizer")
    memory = sanitizer_stage(kata, emulator, passed, counters=not on_gpu, label=EMULATOR_LABEL if on_gpu else "")
    if not any(f.severity == "error" for f in memory.findings):
        # The sanitizer's findings show only on the cases whose data and code paths trigger them
        # (a one-warp tail, a ragged tile fill): the public edge cases run with it on too. On
        # the GPU they also meet the engine (deadlock, out-of-bounds) only here.
        _progress.stage("sanitizer on the public cases")
        memory = screen_stage(
            kata,
            emulator,
            [p for p in passed if p[0].case.origin == "public"],
            memory,
            budget_s=max(0.0, min(SCREEN_BUDGET_S, grade.left_s())),
        )
    if not any(f.severity == "error" for f in memory.findings) and not grade.schedule:
        # the same case under two other legal orders of blocks and atomics (the emulator's default
        # hides an order dependence); only when the kernel has atomics, so most grades pay nothing
        ptx = grade.compiled.ptx
        memory = order_stage(kata, emulator, passed, memory, draft.seed, atomics=has_atomics(ptx))
    draft.findings = merge_findings([*draft.findings, *memory.findings])
    draft.memory = memory
    errors = [f for f in draft.findings if f.severity == "error"]
    if errors:
        first = errors[0]
        match = "outputs match on the GPU, but the sanitizer (CPU emulator) found" if on_gpu else "outputs match, but"
        if first.kind == "order-dependent":  # they matched in the emulator's default order only
            match = (
                "outputs match on the GPU and in the emulator's default order, but"
                if on_gpu
                else "outputs match in the emulator's default order, but"
            )
        # The emulator's case may be one the learner never saw fail: name it for --case.
        on_case = (
            f" for {_cases.Case(memory.case, '', draft.seed).label()}"
            if memory.case and (on_gpu or memory.screened)
            else ""
        )
        draft.end(
            "fail",
            "sanitizer",
            f"{match} {first.kind}{_at(first)}{on_case}: {first.message}",
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


def has_atomics(ptx) -> bool:
    """Whether the PTX has an atomic instruction (not bar.red); no PTX (a Python kernel): maybe."""
    return not ptx or _ATOMIC.search(ptx) is not None


def schedules_for(seed: int) -> tuple[int, int]:
    """The order check's two schedules, from the grade's seed: one shuffles blocks and atomics, one
    reverses them (harness/emulator/schedule.py)."""
    k = int(seed) % 1_000_000
    return 2 * k + 1, 2 * k + 2


def order_stage(kata, emulator: Worker, passed, memory: MemoryStage, seed: int, *, atomics: bool = True) -> MemoryStage:
    """The sanitizer's case once more under two other legal schedules (blocks and a block's warps
    started shuffled or reversed, part of the grid resident at a time, atomics arriving shuffled or
    reversed), with the observers off. On a GPU those orders happen; in the emulator's default lockstep they never
    do, so a result that depends on them (a slot from atomicAdd taken as the thread's rank, a block
    reading a total other blocks still add to) passes everything else. A schedule the kernel cannot
    finish under (a wait for a block that is not resident) says nothing and is skipped.
    `atomics`: False when the kernel's PTX has no atomic, so no order can matter that the
    sanitizer's race checks do not already see (the stage is skipped, costing nothing)."""
    if not atomics or memory.case is None:
        return memory
    data = next((d for d, _ in passed if dict(d.case.params) == memory.case), None)
    if data is None:
        return memory
    for s in schedules_for(seed):
        outcome, result = run_case(kata, emulator, data, schedule=s)
        if not outcome.failed or outcome.problem is not None or result.stopped:
            continue
        lines = tuple(result.extra.get("atomic_order", ()))
        return dataclasses.replace(
            memory,
            case={**dict(data.case.params), "schedule": s},
            findings=(
                _order_finding(data.case, outcome, s, lines),
                *(f for f in outcome.findings if f.severity == "error"),
            ),
        )
    return memory


def _order_finding(case, outcome: CaseOutcome, schedule: int, lines: tuple):
    from harness.emulator.findings import Finding

    how = "shuffled" if schedule % 2 else "reversed"
    got = outcome.check.headline() if outcome.check is not None else outcome.reason
    if lines:
        at = ", ".join(f"{Path(f).name if f else '?'}:{ln}" for f, ln in lines[:4])
        which = f"the atomics at {at} return" if len(lines) > 1 else f"the atomic at {at} returns"
        cause = (
            f"the order of atomics: {which} values in arrival order, and no thread or block order fixes that "
            "order (an atomicAdd's old value is not the thread's rank); compute positions from the data "
            "instead (a count or scan of the earlier elements)"
        )
    else:
        cause = (
            "the order of warps or blocks: a warp or block uses what others write or add in the same launch, "
            "which nothing orders; put a __syncthreads() between the warps of a block, and finish work "
            "across blocks in a second kernel"
        )
    reproduce = " ".join(f"--case {k}={v}" for k, v in {**case.params, "schedule": schedule}.items())
    file, line = lines[0] if lines else (None, None)
    return Finding(
        kind="order-dependent",
        file=file,
        line=line,
        message=f"with blocks and the warps of each block started in {how} order, part of the grid "
        f"resident at a time and atomics "
        f"arriving in {how} order (schedule {schedule}, as legal on a GPU as the default), "
        f"{case.label()} gives {got}: the result depends on {cause}. Rerun that schedule "
        f"with `{reproduce}`",
    )


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
