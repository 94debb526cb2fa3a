"""One case run in a worker and checked, and the runs built on it: the sanitizer stage, the
emulator screen of a GPU grade's public cases, and the rerun that names a wrong answer's cause.

These runs need kata's CPU emulator. On the CPU backend they reuse the grade's worker; on the GPU
backend (which has no sanitizer) they borrow a CPU worker, so a missing __syncthreads or an
out-of-bounds read fails `kata grade --backend gpu` as it fails on the CPU, labelled as the
emulator's finding.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

from grader.grading import cases as _cases
from grader.grading.check import CheckResult, compare
from grader.grading.stages import CaseFailure, MemoryStage, merge_findings
from harness.sandbox.isolation import ArgValue, Problem, RunSpec, Worker

SANITIZE_ELEMENTS = 400_000  # the sanitizer run's case is the largest passing one up to this size
EMULATOR_LABEL = "sanitizer (CPU emulator)"  # how a GPU grade names what the borrowed emulator found
# The screen of a GPU grade's public cases stops starting runs after this long. Measured with the
# catalogue's solutions (observers off, 2-core machine): 0.4 s (histogram) to 8 s (matmul) for all
# public cases of a kata, so only a far slower learner kernel ever reaches it.
SCREEN_BUDGET_S = 60.0

# Problems of the run mapped to the reason `kata-expect` names; None: the grader's own fault.
PROBLEM_REASON = {"compile-error": "compile-error", "launch-error": "launch-error", "launch-py": "launch-error", "crash": "crash",
                  "memory": "crash", "timeout": "timeout", "unsupported": None, "internal": None,
                  "environment": None}


@dataclass(frozen=True)
class CaseOutcome:
    case: _cases.Case
    failed: bool
    reason: str  # "" when passed; else wrong-answer | a finding kind | launch-error | crash | timeout
    check: CheckResult | None  # None when the run produced no outputs
    problem: Problem | None
    findings: tuple  # this run's emulator findings
    launches: tuple  # LaunchRecords
    elements: int  # input elements (the case's size)


def run_case(kata, worker: Worker, data: _cases.CaseData, *, sanitize=False, counters=False, schedule=0):
    """(CaseOutcome, the worker's RunResult) of one case; schedule > 0: the emulator runs blocks
    and atomics in that other legal order (order_stage)."""
    args = []
    for arg in kata.args:
        if arg.role == "scalar":
            args.append(ArgValue(arg.name, "scalar", data.scalars[arg.name]))
        elif arg.role == "out":
            want = data.expected[arg.name]
            args.append(ArgValue(arg.name, "out", None, arg.dtype.str, int(want.size)))
        else:
            args.append(ArgValue(arg.name, arg.role, data.inputs[arg.name]))
    result = worker.run(RunSpec(tuple(args), sanitize=sanitize, counters=counters, schedule=int(schedule)))
    errors = [f for f in result.findings if f.severity == "error"]
    if result.problem is not None:
        reason = PROBLEM_REASON.get(result.problem.kind)
        return CaseOutcome(data.case, True, reason or "", None, result.problem, result.findings,
                           result.launches, data.elements), result
    params = {**data.case.params, **data.scalars}
    check = compare(kata, data.inputs, result.outputs, data.expected, params, result.changed_inputs)
    reason = errors[0].kind if errors else ("" if check.ok else "wrong-answer")
    return CaseOutcome(data.case, bool(reason), reason, check, None, result.findings, result.launches,
                       data.elements), result


def diagnose(kata, emulator: Worker, data: _cases.CaseData, failure: CaseFailure, findings,
             label: str = "the sanitizer", schedule: int = 0):
    """A wrong answer often has a cause the sanitizer can name (a race, an uninitialised read):
    run the failing case once more on the emulator with it on and add what it finds to the
    failure's reasons. Returns (failure, findings)."""
    outcome, _ = run_case(kata, emulator, data, sanitize=True, schedule=schedule)
    errors = [f for f in outcome.findings if f.severity == "error"]
    if not errors:
        return failure, findings
    first = errors[0]
    reasons = tuple(dict.fromkeys([*failure.reasons, *(f.kind for f in errors)]))
    headline = f"{failure.headline}; {label} found {first.kind} at {where(first)}"
    return (dataclasses.replace(failure, reasons=reasons, headline=headline),
            merge_findings([*findings, *outcome.findings]))


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
        from grader.performance.efficiency import memory_report

        params = {**data.case.params, **data.scalars}
        report = memory_report([result.counters], data.case.params, kata.reference.cost(**params))
    note = ""
    if outcome.problem is not None:
        note = f"the sanitizer run failed: {outcome.problem.message}"
    elif outcome.check is not None and not outcome.check.ok:
        note = f"with the sanitizer on, {data.case.label()} gave {outcome.check.headline()}"
    return MemoryStage(dict(data.case.params), tuple(outcome.findings), report, note, label)


def screen_stage(kata, emulator: Worker, public, memory: MemoryStage, *,
                 budget_s: float = SCREEN_BUDGET_S) -> MemoryStage:
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
            return MemoryStage(dict(data.case.params), tuple(outcome.findings), None, "", memory.label,
                               screened=screened)
        if outcome.problem is not None:
            # The emulator, not the kernel, is in question (the GPU ran this case): say so, grade on.
            note = f"the public-case screen stopped at {data.case.label()}: {outcome.problem.message}"
            return dataclasses.replace(memory, screened=screened, note=_join(memory.note, note))
    note = f"{len(left)} public cases not screened after {budget_s:.0f} s: {'; '.join(left)}" if left else ""
    return dataclasses.replace(memory, screened=screened, note=_join(memory.note, note))


def schedules_for(seed: int) -> tuple[int, int]:
    """The order check's two schedules, from the grade's seed: one shuffles blocks and atomics, one
    reverses them (harness/emulator/schedule.py)."""
    k = int(seed) % 1_000_000
    return 2 * k + 1, 2 * k + 2


def order_stage(kata, emulator: Worker, passed, memory: MemoryStage, seed: int, *, atomics: bool = True) -> MemoryStage:
    """The sanitizer's case once more under two other legal schedules (blocks and a block's warps
    started shuffled or reversed, part of the grid resident at a time, atomics arriving shuffled or
    reversed), with
    the observers off. On a GPU those orders happen; in the emulator's default lockstep they never
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
        return dataclasses.replace(memory, case={**dict(data.case.params), "schedule": s},
                                   findings=(_order_finding(data.case, outcome, s, lines),
                                             *(f for f in outcome.findings if f.severity == "error")))
    return memory


def _order_finding(case, outcome: CaseOutcome, schedule: int, lines: tuple):
    from harness.emulator.findings import Finding

    how = "shuffled" if schedule % 2 else "reversed"
    got = outcome.check.headline() if outcome.check is not None else outcome.reason
    if lines:
        at = ", ".join(f"{Path(f).name if f else '?'}:{ln}" for f, ln in lines[:4])
        which = f"the atomics at {at} return" if len(lines) > 1 else f"the atomic at {at} returns"
        cause = (f"the order of atomics: {which} values in arrival order, and no thread or block order fixes that "
                 "order (an atomicAdd's old value is not the thread's rank); compute positions from the data "
                 "instead (a count or scan of the earlier elements)")
    else:
        cause = ("the order of warps or blocks: a warp or block uses what others write or add in the same launch, "
                 "which nothing orders; put a __syncthreads() between the warps of a block, and finish work "
                 "across blocks in a second kernel")
    reproduce = " ".join(f"--case {k}={v}" for k, v in {**case.params, "schedule": schedule}.items())
    file, line = lines[0] if lines else (None, None)
    return Finding(kind="order-dependent", file=file, line=line,
                   message=f"with blocks and the warps of each block started in {how} order, part of the grid "
                           f"resident at a time and atomics "
                           f"arriving in {how} order (schedule {schedule}, as legal on a GPU as the default), "
                           f"{case.label()} gives {got}: the result depends on {cause}. Rerun that schedule "
                           f"with `{reproduce}`")


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def where(finding) -> str:
    return f"{Path(finding.file).name if finding.file else '?'}:{finding.line if finding.line is not None else '?'}"


def at(finding) -> str:
    """' at kernel.cu:12', or nothing for a finding with no place (an order dependence no atomic's
    line explains)."""
    return "" if finding.file is None and finding.line is None else f" at {where(finding)}"
