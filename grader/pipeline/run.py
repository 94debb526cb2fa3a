"""One grade: compile → static resources → correctness → sanitizer (and memory counters on the CPU)
→ performance (the H200 model's estimate on the CPU, timing on the GPU). Each stage adds its
result to one ReportDraft; the first stage that decides the verdict ends the grade, and the draft
becomes the GradeReport once, at the end. The GPU has no sanitizer, so a GPU grade runs that
stage, a screen of its public cases with the sanitizer on, and the rerun that names a failure's
cause, on kata's CPU emulator; its performance stage runs meanwhile (the timing on the GPU
worker, the model on a CPU worker of its own), and the sanitizer's verdict comes first.

`grade()` is the only entry point (the CLI, `kata dev check` and interview sessions all call it),
so hidden tests and practice grades can never drift apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from pathlib import Path

from grader.grading import cases as _cases
from grader.errors import UsageError
from grader.grading import grade_notes as _notes
from grader.grading.runs import EMULATOR_LABEL
from grader.grading.workspace import Submission, locate
from grader.pipeline import performance
from grader.pipeline.backend import BackendChoice, choose_backend
from grader.pipeline.compile import compile_stage, python_kernel
from grader.pipeline.correctness import correctness_stage
from grader.pipeline.draft import ReportDraft
from grader.pipeline.sanitizer import sanitizer_and_screen
from grader.results import GradeReport
from harness.sandbox.isolation import Worker

CASE_TIMEOUT_S = 120.0
#: the correctness search, the sanitizer and the screen together (the GPU's timing has its own
#: PERF_TIMEOUT_S): a kernel slow on every case still gets its report, naming the deadline
GRADE_DEADLINE_S = float(os.environ.get("KATA_GRADE_DEADLINE_S", 600.0))
CPU_MEMORY_CAP = 8 << 30  # address space of a CPU worker: a runaway allocation ends the worker only


@dataclasses.dataclass
class Grade:
    """What the stages after the compile share: the kata, the compiled kernel, the workers and the deadline."""

    choice: BackendChoice
    sub: Submission
    compiled: object
    worker: Worker
    emulator: Worker  # the grade's worker on the CPU; a CPU worker borrowed for the sanitizer on the GPU
    timeout_s: float
    limit_s: float
    deadline: float
    schedule: int = 0  # `--case schedule=N`: the cases run under the emulator's schedule N

    @property
    def kata(self):
        return self.sub.kata

    @property
    def filename(self) -> str:
        return self.sub.kernel.name

    @property
    def python_kernel(self) -> str:
        return python_kernel(self.sub)

    @property
    def label(self) -> str:
        return EMULATOR_LABEL if self.choice.on_gpu else "the sanitizer"

    def left_s(self) -> float:
        return self.deadline - time.monotonic()


def grade(
    kata_id: str | None,
    folder,
    *,
    backend: str | BackendChoice = "auto",
    seed: int | None = None,
    examples: int | None = None,
    case: dict | None = None,
    hidden: bool = False,
    launch_file: Path | None = None,
    timeout_s: float = CASE_TIMEOUT_S,
    require_sandbox: bool = False,
    deadline_s: float | None = None,
    with_estimate: bool = True,
    hidden_cases: tuple[dict, ...] | None = None,
) -> GradeReport:
    """Grade the submission in `folder` (kernel.cu + launch.py; or a Submission already located).
    kata_id None: read the folder's .kata marker. hidden: also the kata's hidden cases. case: run
    only this case (--case). require_sandbox: launch.py runs only under the full OS sandbox
    (interview submits). with_estimate=False: no H200 model estimate on a CPU pass (`kata dev
    check` audits verdicts only). hidden_cases: the hidden cases to run instead of kata.toml's (a
    server's secret ones); implies hidden."""
    hidden = hidden or hidden_cases is not None
    sub = located(folder, kata_id, launch_file)
    seed = _cases.DEFAULT_SEED if seed is None else int(seed)
    # `--case schedule=N` reruns a case under the emulator's schedule N (the order check's report)
    schedule = 0
    if case is not None and "schedule" in case:
        case = dict(case)
        schedule = _schedule_of(case.pop("schedule"))
    examples = _cases.DEFAULT_EXAMPLES if examples is None else int(examples)
    choice = choose_backend(backend)
    draft = ReportDraft(
        kata=sub.kata.id,
        title=sub.kata.title,
        workspace=str(sub.folder),
        backend=choice.label,
        backend_reason=choice.why,
        seed=seed,
        diagnostic=case is not None,
        notes=[*sub.notes, *_notes.sandbox_notes(python_kernel=sub.kernel.suffix == ".py")],
    )
    compiled, program = compile_stage(draft, sub, choice.name, choice.on_gpu, require_sandbox)
    if not draft.ended:
        # a fresh machine's bench inputs: made while the cases run
        early_bench = choice.on_gpu and case is None
        with _workers(program, choice.on_gpu, timeout_s, sub.kata if early_bench else None, seed) as (worker, emulator):
            limit = GRADE_DEADLINE_S if deadline_s is None else deadline_s
            run = Grade(choice, sub, compiled, worker, emulator, timeout_s, limit, time.monotonic() + limit, schedule)
            _after_compile(
                draft,
                run,
                kata_id=kata_id,
                examples=examples,
                case=case,
                hidden=hidden,
                with_estimate=with_estimate,
                hidden_cases=hidden_cases,
            )
    return draft.build()


def _after_compile(
    draft: ReportDraft, run: Grade, *, kata_id, examples, case, hidden, with_estimate, hidden_cases
) -> None:
    """The stages that run the kernel, in order, until one ends the grade."""
    beside = None
    if run.choice.on_gpu:
        # the emulator's worker (the sanitizer's) starts while the GPU runs the cases
        run.emulator.start_beside()
        if case is None:  # torch, for the baseline's timing, imports beside the cases
            performance.import_beside_cases(run.worker, run.kata, draft.seed)
        # the H200 model's run on a CPU worker of its own, beside the cases: kept only if they pass
        beside = performance.BesideSanitizer(run, draft.seed, _model_worker(run.emulator.program)).start_model()
    try:
        ran = correctness_stage(
            draft,
            run,
            sub=run.sub,
            kata_id=kata_id,
            examples=examples,
            case=case,
            hidden=hidden,
            hidden_cases=hidden_cases,
        )
    except BaseException:
        if beside is not None:
            beside.abandon()
        raise
    if draft.ended:
        if beside is not None:
            beside.abandon()
        return
    if beside is None:
        sanitizer_and_screen(draft, run, ran.passed)
        if not draft.ended:
            performance.estimate(draft, run, with_estimate=with_estimate, case=case)
        return
    # On the GPU the performance stage runs while the emulator screens: the GPU worker readies it
    # (backend, bench inputs, torch) and times, while the model estimates on its CPU worker.
    # The sanitizer still decides first: an error finding ends the grade and stops them unread.
    performance.start_prefetch(run.worker, run.kata.id, draft.seed)
    beside.start()
    try:
        sanitizer_and_screen(draft, run, ran.passed)
    except BaseException:
        beside.abandon()
        raise
    if draft.ended:
        beside.abandon()
        return
    beside.finish(draft, case)


def _model_worker(program):
    """A fresh CPU worker for the H200 model's observation beside a GPU grade's sanitizer."""
    return lambda: Worker(program, timeout_s=CASE_TIMEOUT_S, memory_bytes=CPU_MEMORY_CAP)


def _schedule_of(value) -> int:
    try:
        schedule = int(value)
    except (TypeError, ValueError):
        schedule = -1
    if schedule < 0:
        raise UsageError(f"--case schedule={value}: a schedule is a whole number (0: the emulator's default order)")
    return schedule


def located(folder, kata_id: str | None, launch_file: Path | None) -> Submission:
    """The Submission in `folder`, located here unless the caller located it already (`kata grade --case`)."""
    if isinstance(folder, Submission):
        return folder
    return locate(folder, kata_id, launch_file=launch_file)


@contextlib.contextmanager
def _workers(program, on_gpu: bool, timeout_s: float, early_bench_kata=None, seed: int = 0):
    """(the grade's worker, the emulator's): one worker on the CPU; on the GPU a CPU worker besides,
    borrowed for the sanitizer (the GPU has none). early_bench_kata: a kata whose bench inputs
    start being made now, in subprocesses, while the cases run (stopped when the grade ends)."""
    with contextlib.ExitStack() as stack:
        if early_bench_kata is not None:
            stack.callback(performance.early_bench_inputs(early_bench_kata, seed))
        worker = stack.enter_context(Worker(program, timeout_s=timeout_s, memory_bytes=CPU_MEMORY_CAP))
        emulator = (
            stack.enter_context(
                Worker(dataclasses.replace(program, backend="cpu"), timeout_s=timeout_s, memory_bytes=CPU_MEMORY_CAP)
            )
            if on_gpu
            else worker
        )
        yield worker, emulator
