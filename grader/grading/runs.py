"""One case run in a worker and checked, and the rerun with the sanitizer on that names a wrong
answer's cause (on the GPU, in a borrowed CPU worker: the GPU has no sanitizer). The pipeline's
sanitizer stage (grader/pipeline/sanitizer.py) builds on run_case too.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from grader.grading import cases as _cases
from grader.grading.check import CheckResult, compare
from grader.results import CaseFailure, merge_findings
from harness.sandbox.isolation import ArgValue, Problem, RunSpec, Worker

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


def where(finding) -> str:
    return f"{Path(finding.file).name if finding.file else '?'}:{finding.line if finding.line is not None else '?'}"


def at(finding) -> str:
    """' at kernel.cu:12', or nothing for a finding with no place (an order dependence no atomic's
    line explains)."""
    return "" if finding.file is None and finding.line is None else f" at {where(finding)}"
