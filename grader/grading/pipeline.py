"""One grade: compile → static resources → correctness → sanitizer (and memory counters on the CPU)
→ performance (GPU) → GradeReport. Each stage returns one frozen result; the first failed stage
ends the grade. The GPU has no sanitizer, so a GPU grade runs that stage, a screen of its public
cases with the sanitizer on, and the rerun that names a failure's cause, on kata's CPU emulator
(grader/grading/runs.py).

It is longer than ~300 lines because the stages are written in the order a grade runs them, each
with its early return, so the whole flow of a grade reads top to bottom in one file.

`grade()` is the only entry point (the CLI, `kata dev check` and interview sessions all call it),
so hidden tests and practice grades can never drift apart.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
from pathlib import Path

from grader.grading import cases as _cases
from grader.grading import grade_notes as _notes
from grader.grading import printed as _printed
from grader import catalog
from grader.errors import EnvironmentProblem, UsageError
from grader.grading.runs import (EMULATOR_LABEL, PROBLEM_REASON, SCREEN_BUDGET_S, CaseOutcome, diagnose, run_case,
                         sanitizer_stage, screen_stage, where as _where)
from grader.grading.stages import CaseFailure, CompileStage, CorrectnessStage, GradeReport, ResourceStage, merge_findings
from grader.grading.workspace import Submission, locate
from grader.grading.python_kernels import python_compile_failure, python_compile_stage
from harness.frontends import interface as frontends
from harness.frontends.nvrtc import CompilerUnavailable
from harness.sandbox.isolation import Program, Worker
from harness.sandbox.protocol import Problem

CASE_TIMEOUT_S = 120.0
#: the correctness search, the sanitizer and the screen together (the GPU's timing has its own
#: PERF_TIMEOUT_S): a kernel slow on every case still gets its report, naming the deadline
GRADE_DEADLINE_S = float(os.environ.get("KATA_GRADE_DEADLINE_S", 600.0))
CPU_MEMORY_CAP = 8 << 30  # address space of a CPU worker: a runaway allocation ends the worker only
PERF_TIMEOUT_S = 540.0
#: failures on the GPU whose cause the emulator's sanitizer may name: an out-of-bounds access that
#: crashed the GPU, a shuffle naming exited lanes that hung it (the emulator's watchdog bounds a rerun)
_DIAGNOSED = ("wrong-answer", "crash", "timeout")
WINDOWS = ("kernel.cu compiles, but kata cannot run it on Windows: the launch plan runs in a sandboxed "
           "worker process (memory caps, signals, and the launch-plan sandbox) that needs Linux or macOS")


def choose_backend(requested: str) -> tuple[str, str]:
    """(backend, why) for --backend auto|gpu|cpu."""
    if requested == "cpu":
        return "cpu", "--backend cpu"
    try:
        from harness.backends import gpu as _gpu

        available = _gpu.available()
    except Exception:
        available = False
    if requested == "gpu":
        if not available:
            raise EnvironmentProblem("--backend gpu: CuPy sees no CUDA GPU on this machine",
                                     hint="install kata[gpu] on a machine with a GPU, or use --backend cpu")
        return "gpu", "--backend gpu"
    if requested != "auto" and ":" not in requested:
        raise UsageError(f"--backend {requested!r}: choose auto, gpu or cpu")
    if ":" in requested:  # tests: a Backend factory "module:function"
        return requested, "test backend"
    if available:
        return "gpu", "auto: CuPy sees a CUDA GPU"
    return "cpu", "auto: no CUDA GPU visible to CuPy, so kata's CPU emulator runs the PTX"


def grade(kata_id: str | None, folder, *, backend: str = "auto", seed: int | None = None,
          examples: int | None = None, case: dict | None = None, hidden: bool = False,
          launch_file: Path | None = None, timeout_s: float = CASE_TIMEOUT_S,
          require_sandbox: bool = False, deadline_s: float | None = None,
          with_estimate: bool = True) -> GradeReport:
    """Grade the submission in `folder` (kernel.cu + launch.py). kata_id None: read the folder's
    .kata marker. hidden: also the kata's hidden cases. case: run only this case (--case).
    require_sandbox: launch.py runs only under the full OS sandbox (interview submits).
    with_estimate=False: no H200 model estimate on a CPU pass (`kata dev check` audits verdicts only)."""
    sub = locate(folder, kata_id, launch_file=launch_file)
    kata = sub.kata
    seed = _cases.DEFAULT_SEED if seed is None else int(seed)
    examples = _cases.DEFAULT_EXAMPLES if examples is None else int(examples)
    chosen, why = choose_backend(backend)
    sandbox_notes = _notes.sandbox_notes()
    base = dict(kata=kata.id, title=kata.title, workspace=str(sub.folder), backend=chosen.split(":")[0],
                backend_reason=why, seed=seed, notes=(*sub.notes, *sandbox_notes), diagnostic=case is not None)

    # Read once: the bytes compiled and planned are the bytes whose hash the attempt records, whatever
    # happens to the files while the grade runs.
    raw, launch_text = sub.kernel.read_bytes(), _notes.read_text(sub.launch)
    base["sources"] = _notes.sources_hash(sub, raw, launch_text)
    compiled, stage = _compile(sub, raw, launch_text)
    if compiled is not None and compiled.notes:  # e.g. clang without ptxas: no resources
        base["notes"] = (*base["notes"], *compiled.notes)
    if not stage.ok:
        return GradeReport(**base, verdict="fail", stage="compile", headline=stage.headline(),
                           reasons=("compile-error",), compile=stage)
    if _on_windows():  # the compile stage above works there (NVRTC has Windows wheels)
        raise EnvironmentProblem(WINDOWS, hint="install WSL 2 (`wsl --install`), then `pip install kata` inside it")
    resources = ResourceStage(tuple(compiled.resources.values()), ())
    if _on_gpu(chosen) and compiled.cubin is None and sub.kernel.suffix != ".py":  # clang without ptxas: PTX only
        raise EnvironmentProblem(f"--backend gpu needs a cubin, and {compiled.frontend} made PTX only: "
                                 + " ".join(compiled.notes), hint="unset KATA_FRONTEND (NVRTC), or use --backend cpu")
    python_kernel = str(sub.kernel.resolve()) if sub.kernel.suffix == ".py" else ""
    program = Program(chosen, compiled.ptx, compiled.cubin, sub.kernel.name, str(sub.launch.resolve()),
                      launch_source=launch_text, kernel_source=raw.decode("utf-8", "replace"),
                      require_sandbox=require_sandbox, kernel_path=python_kernel)
    rerun_base = _rerun_command(sub, kata_id, backend)
    on_gpu = _on_gpu(chosen)
    with contextlib.ExitStack() as stack:
        worker = stack.enter_context(Worker(program, timeout_s=timeout_s, memory_bytes=CPU_MEMORY_CAP))
        # The sanitizer runs on kata's emulator; a GPU grade starts a CPU worker for it when needed.
        emulator = stack.enter_context(Worker(dataclasses.replace(program, backend="cpu"), timeout_s=timeout_s,
                                              memory_bytes=CPU_MEMORY_CAP)) if on_gpu else worker
        label = EMULATOR_LABEL if on_gpu else "the sanitizer"
        runs: dict[str, tuple[_cases.CaseData, CaseOutcome]] = {}

        printed: dict[str, str] = {}
        printf: dict[str, tuple] = {}

        limit = GRADE_DEADLINE_S if deadline_s is None else deadline_s
        deadline = time.monotonic() + limit

        def late(c: _cases.Case) -> Problem:
            return Problem("timeout", f"the grade's deadline of {limit:.0f} s passed after {len(runs)} cases, at "
                           f"{c.label()}: the kernel is too slow for the emulator at these sizes (a serial loop, "
                           "a launch per element?); --case runs one case, or grade on a GPU")

        def attempt(c: _cases.Case) -> CaseOutcome:
            left = deadline - time.monotonic()
            if left < 1.0:
                return CaseOutcome(c, True, "timeout", None, late(c), (), (), 0)
            worker.timeout_s = min(timeout_s, left)  # a case may not outlast the grade
            data = _cases.materialize(kata, c)
            outcome, result = run_case(kata, worker, data)
            if outcome.reason == "timeout" and left < timeout_s:  # stopped by the grade's deadline
                outcome = dataclasses.replace(outcome, problem=late(c))
            runs[c.label()] = (data, outcome)
            if result.stdout.strip():
                printed[c.label()] = result.stdout
            if result.extra.get("printf"):
                printf[c.label()] = result.extra["printf"]
            return outcome

        search = _cases.search(kata, attempt, seed=seed, examples=examples, hidden=hidden, only=case)
        base["notes"] = (*base["notes"], *_printed.plan_note(printed, search.failure),
                         *_printed.printf_note(printf, search.failure),
                         *_printed.accuracy_note(runs.values()))
        passed = [(d, o) for d, o in runs.values() if not o.failed]
        findings = merge_findings(f for _, o in runs.values() for f in o.findings)
        launches = next((o.launches for _, o in passed if o.launches), ())
        resources = ResourceStage(resources.kernels, _occupancy(compiled, launches, chosen))
        correctness = _correctness(search, seed, examples, rerun_base)
        if correctness.failure is not None:
            failure = correctness.failure
            if failure.problem is not None and failure.problem.kind == "compile-error":
                # a Python kernel compiles in the worker, at its first launch: still the compile stage
                stage = python_compile_failure(failure.problem)
                return GradeReport(**base, verdict="fail", stage="compile", headline=stage.headline(),
                                   reasons=("compile-error",), compile=stage)
            if failure.reason == "wrong-answer" or on_gpu and failure.reason in _DIAGNOSED:
                data = runs[search.failure.case.label()][0]
                failure, findings = diagnose(kata, emulator, data, failure, findings, label)
                correctness = dataclasses.replace(correctness, failure=failure)
            verdict = "error" if failure.reason == "" else "fail"
            return GradeReport(**base, verdict=verdict, stage="correctness", headline=failure.headline,
                               reasons=failure.reasons, compile=stage, resources=resources,
                               correctness=correctness, findings=findings)
        if on_gpu:  # the GPU worker readies the performance stage while the emulator screens
            _prefetch(worker, kata.id, seed)
        # Counters stay CPU-only: on a GPU grade the timings speak, not the emulator's cache model.
        emulator.timeout_s = min(timeout_s, max(10.0, deadline - time.monotonic()))  # near the deadline: short
        memory = sanitizer_stage(kata, emulator, passed, counters=not on_gpu, label=EMULATOR_LABEL if on_gpu else "")
        if not any(f.severity == "error" for f in memory.findings):
            # The sanitizer's findings show only on the cases whose data and code paths trigger them
            # (a one-warp tail, a ragged tile fill): the public edge cases run with it on too. On
            # the GPU they also meet the engine (deadlock, out-of-bounds) only here.
            memory = screen_stage(kata, emulator, [p for p in passed if p[0].case.origin == "public"], memory,
                                  budget_s=max(0.0, min(SCREEN_BUDGET_S, deadline - time.monotonic())))
        findings = merge_findings([*findings, *memory.findings])
        common = dict(compile=stage, resources=resources, correctness=correctness, findings=findings, memory=memory)
        errors = [f for f in findings if f.severity == "error"]
        if errors:
            first = errors[0]
            match = "outputs match on the GPU, but the sanitizer (CPU emulator) found" if on_gpu else "outputs match, but"
            # The emulator's case may be one the learner never saw fail: name it for --case.
            on_case = (f" for {_cases.Case(memory.case, '', seed).label()}"
                       if memory.case and (on_gpu or memory.screened) else "")
            return GradeReport(**base, verdict="fail", stage="sanitizer",
                               headline=f"{match} {first.kind} at {_where(first)}{on_case}: {first.message}",
                               reasons=tuple(dict.fromkeys(f.kind for f in errors)), **common)
        if not on_gpu:
            from grader.performance.model.stage import estimate_stage

            if not with_estimate:
                estimate, occupancy, note = None, (), ""
            elif python_kernel:  # compiled per launch in the worker: no one PTX module for the model to read
                estimate, occupancy, note = None, (), ("no performance estimate: the H200 model reads the PTX of a "
                                                      "CUDA C kernel; a Triton or numba kernel is compiled per "
                                                      "launch, which it does not follow yet (a GPU grade times it)")
            else:
                estimate, occupancy, note = estimate_stage(kata, worker, compiled, sub.kernel.name, seed)
            if occupancy:  # the bench-shape launches, not the small case's
                common["resources"] = ResourceStage(resources.kernels, occupancy)
            tail = f"; {estimate.headline()}" if estimate is not None else ""
            notes = dict(notes=(*base["notes"], note)) if note else {}
            return GradeReport(**{**base, **notes}, verdict="pass", stage="done",
                               headline=f"passed {correctness.cases_run} cases{tail}{_notes.diagnostic(case)}", reasons=(),
                               estimate=estimate, **common)
        from grader.performance.model.stage import beside_measurement

        # The H200 model's estimate, on the emulator's worker while the GPU worker times.
        with beside_measurement(kata, emulator, compiled, sub.kernel.name, seed, enabled=not python_kernel) as model:
            perf, problem = _performance(worker, kata.id, compiled, seed, python_kernel)
        if problem is not None:
            return GradeReport(**base, verdict="error" if problem.kind == "internal" else "fail",
                               stage="performance", headline=f"performance stage: {problem.message}",
                               reasons=(PROBLEM_REASON.get(problem.kind) or "error",), **common)
        if perf is not None and not getattr(perf, "ok", True):
            # e.g. correct on the small cases but wrong at the bench size (index overflow)
            return GradeReport(**base, verdict="fail", stage="performance",
                               headline=f"performance stage: {perf.error}", reasons=("wrong-answer",),
                               performance=perf, **common)
        summary = getattr(perf, "summary", None)
        tail = f"; {summary.headline()}" if summary is not None else ""
        return GradeReport(**base, verdict="pass", stage="done",
                           headline=f"passed {correctness.cases_run} cases{tail}{_notes.diagnostic(case)}", reasons=(),
                           performance=perf, estimate=model.result(), **common)


def _on_windows() -> bool:
    return sys.platform == "win32"


def _on_gpu(backend: str) -> bool:
    """Whether the grade takes the GPU path: timings, and the emulator borrowed for the sanitizer."""
    return backend == "gpu"


def _prefetch(worker: Worker, kata_id: str, seed: int) -> None:
    """Non-blocking: the GPU worker loads the backend, calibration, torch and bench inputs in the
    background (grader.performance.prefetching.prefetch) while the CPU emulator runs the sanitizer and the screen."""
    worker.prefetch("grader.performance.prefetching:prefetch", kata_id=kata_id, seed=seed)


def _performance(worker: Worker, kata_id: str, compiled, seed: int, kernel_path: str = ""):
    """The GPU performance stage: (PerformanceResult | None, Problem | None). The worker measures (output
    bytes, timing samples); this process checks and scores them (grader/performance/judge.py)."""
    from grader.performance.judge import judge
    from grader.performance.measured import RawPerformance

    raw, problem = worker.call("grader.grading.pipeline:_performance_in_worker", PERF_TIMEOUT_S,
                               kata_id=kata_id, compiled=compiled, seed=seed, kernel_path=kernel_path)
    if problem is not None:
        return None, problem
    if not isinstance(raw, RawPerformance):
        return None, Problem("internal", "the GPU worker's reply is not a measurement")
    try:
        return judge(catalog.load(kata_id), raw, seed=seed), None
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a reply with the wrong shapes inside
        return None, Problem("internal", f"the GPU worker's measurement could not be judged ({exc})")


# -- stages ------------------------------------------------------------------------------------

def _compile(sub: Submission, raw: bytes, launch_text: str | None):
    name = sub.kernel.name
    if not raw.strip():
        return None, CompileStage(False, (), "", f"{name} is empty: write your kernel in it "
                                  f"(or `kata start {sub.kata.id} --force` for a fresh stub)")
    if b"\0" in raw:
        return None, CompileStage(False, (), "", f"{name} is not a text file (it holds NUL bytes): "
                                  "is it a binary that was saved under this name?")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, CompileStage(False, (), "", f"{name} is not UTF-8 text (byte {exc.start} is "
                                  f"0x{raw[exc.start]:02x}); save it as UTF-8")
    launch_problem = _check_launch_syntax(sub.launch, launch_text)
    if launch_problem:
        return None, CompileStage(False, (), "", launch_problem)
    if sub.kernel.suffix == ".py":
        return python_compile_stage(source, sub.kernel)
    try:
        compiled = frontends.compile(source, name, cubin=True, include_dir=sub.folder)
    except CompilerUnavailable as exc:  # its hint: what to install, or `kata setup` for clang's CUDA folder
        raise EnvironmentProblem(str(exc), hint=exc.hint) from None
    stage = CompileStage(compiled.ok, compiled.diagnostics, compiled.log, "",
                         nvrtc_version=compiled.nvrtc_version)
    return compiled, stage


def _check_launch_syntax(path: Path, text: str | None) -> str:
    try:
        compile(text if text is not None else path.read_text(), str(path), "exec")
    except SyntaxError as exc:
        return f"{path.name}:{exc.lineno}: syntax error in the launch plan: {exc.msg}"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path.name}: cannot be read as text ({exc})"
    return ""


def _correctness(search: _cases.Search, seed: int, examples: int, rerun_base: str) -> CorrectnessStage:
    outcome = search.failure
    failure = None
    if outcome is not None:
        failure = _failure(outcome, seed, rerun_base)
    return CorrectnessStage(ok=failure is None, cases_run=search.cases_run, public=search.public,
                            drawn=search.drawn, hidden=search.hidden, seed=seed, examples=examples,
                            failure=failure)


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
        what = {"launch-error": "launch error", "launch-py": "launch.py raised", "timeout": "timed out",
                "crash": "crashed", "memory": "ran out of memory"}.get(p.kind, "grader error")
        headline = f"{what} for {case.label()}: {where}{p.message}"
    elif errors:
        f = errors[0]
        headline = f"{f.kind} for {case.label()} at {_where(f)}: {f.message}"
    else:
        headline = f"fails for {case.label()}: {outcome.check.headline()}"
    mismatches = outcome.check.mismatches if outcome.check is not None else ()
    count = outcome.check.mismatch_count if outcome.check is not None else 0
    return CaseFailure(params=dict(case.params), origin=case.origin, reason=outcome.reason,
                       reasons=tuple(dict.fromkeys(r for r in reasons if r)), headline=headline,
                       mismatches=mismatches, mismatch_count=count, problem=outcome.problem,
                       rerun=rerun)


def _occupancy(compiled, launches, backend: str) -> tuple:
    try:
        from grader.performance.occupancy import occupancy_table
        from harness.backends.base import H200
    except ImportError:
        return ()
    rows = [(r.kernel, r.threads, r.shared) for r in launches]
    return tuple(occupancy_table(compiled.resources, rows, H200))


def _performance_in_worker(launch_fn, launch_file, kata_id: str, compiled, seed: int, kernel_path: str = ""):
    """Runs inside the worker process: the GPU measurements with the learner's plan (no verdict, no score)."""
    from grader.performance.measured import measure_stage

    make_plan = None
    if kernel_path:  # Triton / numba: the same compiled artefact, specialised per launch
        from harness.backends.dialect import DialectBackend
        from harness.backends.plan import Plan

        make_plan = lambda b: Plan(DialectBackend(b, kernel_path), launch_file)  # noqa: E731
    return measure_stage(catalog.load(kata_id), compiled, launch_fn, launch_file=launch_file, seed=seed,
                         make_plan=make_plan)


def _rerun_command(sub: Submission, kata_id: str | None, backend: str) -> str:
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
    if backend != "auto" and ":" not in backend:
        parts.append(f"--backend {backend}")
    return " ".join(parts)
