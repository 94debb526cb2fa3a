"""The correctness stage: public, drawn and hidden cases run in the grade's worker under the
grade's deadline, the first failure shrunk, and a wrong answer rerun on the emulator with the
sanitizer on to name its cause."""

from __future__ import annotations

import dataclasses
import os

from grader.grading import cases as _cases
from grader.grading import grade_notes as _notes
from grader.grading import printed as _printed
from grader.grading import stage_progress as _progress
from grader.grading.python_kernels import python_compile_failure
from grader.grading.runs import CaseOutcome, diagnose, run_case, where as _where
from grader.grading.workspace import Submission
from grader.pipeline.draft import ReportDraft
from grader.pipeline.performance import launch_occupancy
from grader.results import CaseFailure, CorrectnessStage, ResourceStage, merge_findings
from harness.sandbox.protocol import Problem

#: failures on the GPU whose cause the emulator's sanitizer may name: an out-of-bounds access that
#: crashed the GPU, a shuffle naming exited lanes that hung it (the emulator's watchdog bounds a rerun)
_DIAGNOSED = ("wrong-answer", "crash", "timeout")


@dataclasses.dataclass
class CaseRuns:
    """What the correctness stage ran, for the stages after it."""

    runs: dict[str, tuple[_cases.CaseData, CaseOutcome]]
    passed: list[tuple[_cases.CaseData, CaseOutcome]]
    launches: tuple


def correctness_stage(
    draft: ReportDraft,
    grade,
    *,
    sub: Submission,
    kata_id: str | None,
    examples: int,
    case: dict | None,
    hidden: bool,
    hidden_cases: tuple[dict, ...] | None = None,
) -> CaseRuns:
    """Adds the correctness stage to `draft` (and ends it on a failure). `grade`: the Grade in progress
    (its workers, deadline and per-case timeout)."""
    kata, seed = sub.kata, draft.seed
    runs: dict[str, tuple[_cases.CaseData, CaseOutcome]] = {}
    printed: dict[str, str] = {}
    printf: dict[str, tuple] = {}
    worker, limit = grade.worker, grade.limit_s

    def late(c: _cases.Case) -> Problem:
        return Problem(
            "timeout",
            f"the grade's deadline of {limit:.0f} s passed after {_notes.count(len(runs), 'case')}, at "
            f"{c.label()}: the kernel is too slow for the emulator at these sizes (a serial loop, "
            "a launch per element?); --case runs one case, or grade on a GPU",
        )

    planned = 1 if case is not None else len(kata.public) + examples  # hidden and shrinking add more

    def attempt(c: _cases.Case) -> CaseOutcome:
        left = grade.left_s()
        if left < 1.0:
            return CaseOutcome(c, True, "timeout", None, late(c), (), (), 0)
        worker.timeout_s = min(grade.timeout_s, left)  # a case may not outlast the grade
        _progress.stage("cases", len(runs) + 1, planned)
        data = _cases.materialize(kata, c)
        outcome, result = run_case(kata, worker, data, schedule=grade.schedule)
        if outcome.reason == "timeout" and left < grade.timeout_s:  # stopped by the grade's deadline
            outcome = dataclasses.replace(outcome, problem=late(c))
        runs[c.label()] = (data, outcome)
        if result.stdout.strip():
            printed[c.label()] = result.stdout
        if result.extra.get("printf"):
            printf[c.label()] = result.extra["printf"]
        return outcome

    search = _cases.search(kata, attempt, seed=seed, examples=examples, hidden=hidden, only=case, hidden_cases=hidden_cases)
    draft.note(
        *_printed.plan_note(printed, search.failure),
        *_printed.printf_note(printf, search.failure),
        *_printed.accuracy_note(runs.values()),
    )
    passed = [(d, o) for d, o in runs.values() if not o.failed]
    draft.findings = merge_findings(f for _, o in runs.values() for f in o.findings)
    launches = next((o.launches for _, o in passed if o.launches), ())
    draft.resources = ResourceStage(draft.resources.kernels, launch_occupancy(grade.compiled, launches))
    correctness = _correctness(search, seed, examples, rerun_command(sub, kata_id, grade.choice.flag))
    draft.correctness = correctness
    if correctness.failure is not None:
        failure = correctness.failure
        if failure.problem is not None and failure.problem.kind == "compile-error":
            # a Python kernel compiles in the worker, at its first launch: still the compile stage
            stage = python_compile_failure(failure.problem)
            draft.compile, draft.resources, draft.correctness, draft.findings = stage, None, None, ()
            draft.end("fail", "compile", stage.headline(), ("compile-error",))
            return CaseRuns(runs, passed, launches)
        if failure.reason == "wrong-answer" or grade.choice.on_gpu and failure.reason in _DIAGNOSED:
            data = runs[search.failure.case.label()][0]
            _progress.stage("diagnosing the failing case")
            failure, draft.findings = diagnose(
                kata, grade.emulator, data, failure, draft.findings, grade.label, schedule=grade.schedule
            )
            draft.correctness = dataclasses.replace(correctness, failure=failure)
        draft.end("error" if failure.reason == "" else "fail", "correctness", failure.headline, failure.reasons)
    return CaseRuns(runs, passed, launches)


def _correctness(search: _cases.Search, seed: int, examples: int, rerun_base: str) -> CorrectnessStage:
    outcome = search.failure
    failure = None
    if outcome is not None:
        failure = _failure(outcome, seed, rerun_base)
    return CorrectnessStage(
        ok=failure is None,
        cases_run=search.cases_run,
        public=search.public,
        drawn=search.drawn,
        hidden=search.hidden,
        seed=seed,
        examples=examples,
        failure=failure,
    )


def _failure(outcome: CaseOutcome, seed: int, rerun_base: str) -> CaseFailure:
    case = outcome.case
    rerun = f"{rerun_base} {case.cli()}" + (f" --seed {seed}" if seed != _cases.DEFAULT_SEED else "")
    errors = [f for f in outcome.findings if f.severity == "error"]
    reasons = [outcome.reason] if outcome.reason else []
    reasons += [f.kind for f in errors]
    if outcome.check is not None and not outcome.check.ok:
        reasons.append("wrong-answer")
    if outcome.problem is not None:
        p = outcome.problem
        where = f"{p.file}:{p.line}: " if p.file and p.line else ""
        what = {
            "launch-error": "launch error",
            "launch-py": "launch.py raised",
            "timeout": "timed out",
            "crash": "crashed",
            "memory": "ran out of memory",
        }.get(p.kind, "grader error")
        headline = f"{what} for {case.label()}: {where}{p.message}"
    elif errors:
        f = errors[0]
        headline = f"{f.kind} for {case.label()} at {_where(f)}: {f.message}"
    else:
        headline = f"fails for {case.label()}: {outcome.check.headline()}"
    mismatches = outcome.check.mismatches if outcome.check is not None else ()
    count = outcome.check.mismatch_count if outcome.check is not None else 0
    return CaseFailure(
        params=dict(case.params),
        origin=case.origin,
        reason=outcome.reason,
        reasons=tuple(dict.fromkeys(r for r in reasons if r)),
        headline=headline,
        mismatches=mismatches,
        mismatch_count=count,
        problem=outcome.problem,
        rerun=rerun,
    )


def rerun_command(sub: Submission, kata_id: str | None, flag: str) -> str:
    """`kata grade DIR [--kata ID] [--backend B]`: what reruns this grade from here."""
    parts = ["kata grade"]
    try:
        rel = os.path.relpath(sub.folder)
    except ValueError:
        rel = str(sub.folder)
    if rel.startswith(".."):  # a path that climbs out of here works from here only: say it whole
        rel = str(sub.folder)
    if rel != ".":
        parts.append(rel)
    if kata_id and not sub.marker:
        parts.append(f"--kata {kata_id}")
    if flag:
        parts.append(flag)
    return " ".join(parts)
