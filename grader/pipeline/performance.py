"""The performance stage: on the CPU, the H200 model's estimate; on the GPU, the learner's plan
timed in the learner's worker (grader.performance.measured) while the model estimates beside it
on a CPU worker of its own, both started beside the sanitizer (BesideSanitizer), which still
decides the verdict first. Also the occupancy of the launches a grade saw."""

from __future__ import annotations

import threading
import time

from grader import catalog
from grader.grading import grade_notes as _notes
from grader.grading import stage_progress as _progress
from grader.grading.runs import PROBLEM_REASON
from grader.performance.model import stage as model_stage
from grader.performance.occupancy import occupancy_table
from grader.performance.prefetching import bench_seeds, import_torch_beside, prefetch
from grader.pipeline.draft import ReportDraft
from grader.results import ResourceStage
from harness.backends.base import H200
from harness.sandbox.isolation import Worker
from harness.sandbox.protocol import Problem

PERF_TIMEOUT_S = 540.0
NO_PYTHON_ESTIMATE = (
    "no performance estimate: the H200 model reads the PTX of a CUDA C kernel; a Triton or "
    "numba kernel is compiled per launch, which it does not follow yet (a GPU grade times it)"
)


def launch_occupancy(compiled, launches) -> tuple:
    """Occupancy of each distinct launch configuration the grade's plan made."""
    rows = [(r.kernel, r.threads, r.shared) for r in launches]
    return tuple(occupancy_table(compiled.resources, rows, H200))


def import_beside_cases(worker: Worker, kata, seed: int) -> bool:
    """Start the GPU worker now and have it import torch while the correctness cases run (the
    baseline needs it; it prints nothing and leaves the GPU alone). Returns whether it was asked:
    only for a kata with a baseline, where torch is installed and the machine's cache lacks the
    library's time at some bench case (grader/performance/baseline_cache.py)."""
    import importlib.util

    from grader.performance import baseline_cache
    from harness.measure.timing import TimingPolicy

    if getattr(kata.reference, "baseline", None) is None or importlib.util.find_spec("torch") is None:
        return False
    seeds = bench_seeds(len(kata.bench.cases), seed)
    if baseline_cache.enabled() and baseline_cache.all_cached(kata, seeds, TimingPolicy()):
        return False
    return worker.start() is None and worker.prefetch(import_torch_beside, beside_runs=True, kata_id=kata.id)


def start_prefetch(worker: Worker, kata_id: str, seed: int) -> None:
    """Non-blocking: the GPU worker loads the backend, calibration, torch and bench inputs in the
    background while the CPU emulator runs the sanitizer and the screen."""
    worker.prefetch(prefetch, kata_id=kata_id, seed=seed)


def estimate(draft: ReportDraft, grade, *, with_estimate: bool, case: dict | None) -> None:
    """A CPU grade that passed: the H200 model's estimate, and the verdict."""
    if not with_estimate:
        result, occupancy, note = None, (), ""
    elif grade.python_kernel:  # compiled per launch in the worker: no one PTX module for the model to read
        result, occupancy, note = None, (), NO_PYTHON_ESTIMATE
    else:
        _progress.stage("H200 model")
        result, occupancy, note = model_stage.estimate_stage(
            grade.kata, grade.worker, grade.compiled, grade.filename, draft.seed
        )
    if occupancy:  # the bench-shape launches, not the small case's
        draft.resources = ResourceStage(draft.resources.kernels, occupancy)
    if note:
        draft.note(note)
    draft.estimate = result
    tail = f"; {result.headline()}" if result is not None else ""
    draft.end("pass", "done", f"{_passed(draft)}{tail}{_notes.diagnostic(case)}", ())


def _passed(draft: ReportDraft) -> str:
    return f"passed {_notes.count(draft.correctness.cases_run, 'case')}"


class BesideSanitizer:
    """A GPU grade's performance stage, started as soon as correctness passed and run while the
    emulator's worker runs the sanitizer and the screen: the timing on the GPU worker, and the H200
    model's estimate on a CPU worker of its own (the emulator's is busy), each in a thread here.
    The sanitizer still decides first: the pipeline calls `finish` only when it found no error,
    and `abandon` when an error finding ended the grade (both workers are stopped at once, and
    nothing they measured reaches the report)."""

    #: how long `abandon` keeps stopping a worker that a thread here is still waiting on
    ABANDON_S = 60.0

    def __init__(self, grade, seed: int, model_worker):
        """model_worker(): a fresh CPU Worker for the model (None: no estimate)."""
        self._grade, self._seed = grade, seed
        self._timed = (None, Problem("internal", "the GPU timing did not run"))
        self._estimate = None
        self._abandoned = threading.Event()
        self._model_worker = None
        self._timing = threading.Thread(target=self._time, daemon=True, name="kata-gpu-timing")
        self._model = (
            threading.Thread(target=self._observe, args=(model_worker,), daemon=True, name="kata-h200-model")
            if model_worker is not None and not grade.python_kernel
            else None
        )

    def start_model(self) -> "BesideSanitizer":
        """Start the model's run now, before correctness has passed: it needs only the compiled
        kernel, and on a 16-core GPU host it runs beside the cases instead of after them (it was
        the last thing a fresh machine's GPU grade waited for). `abandon` stops it if the grade ends."""
        if self._model is not None and self._model.ident is None:
            self._model.start()
        return self

    def start(self) -> "BesideSanitizer":
        self._timing.start()
        return self.start_model()

    def _time(self) -> None:
        g = self._grade
        try:
            self._timed = timed_in_worker(g.worker, g.kata.id, g.compiled, self._seed, g.python_kernel)
        except Exception as exc:  # noqa: BLE001 - reported as the stage's problem, never a traceback
            self._timed = (None, Problem("internal", f"the GPU timing failed: {type(exc).__name__}: {exc}"))

    def _observe(self, model_worker) -> None:
        g = self._grade
        try:
            with model_worker() as worker:
                self._model_worker = worker
                if not self._abandoned.is_set():
                    self._estimate = model_stage.estimate_stage(g.kata, worker, g.compiled, g.filename, self._seed)[0]
        except Exception:  # noqa: BLE001 - the estimate is an explanation, never a reason for a GPU grade to fail
            self._estimate = None

    def abandon(self) -> None:
        """The sanitizer ended the grade: stop the timing and the model now, and wait for their threads."""
        self._abandoned.set()
        deadline = time.monotonic() + self.ABANDON_S
        for thread, worker in ((self._timing, lambda: self._grade.worker), (self._model, lambda: self._model_worker)):
            while thread is not None and thread.is_alive() and time.monotonic() < deadline:
                w = worker()
                if w is not None:
                    w.interrupt()
                thread.join(0.2)

    def finish(self, draft: ReportDraft, case: dict | None) -> None:
        """The sanitizer found no error: the timing against the roofline, and the verdict."""
        if self._timing.is_alive():
            _progress.stage("timing on the GPU")
        self._timing.join()
        if self._model is not None:
            self._model.join(model_stage.OBSERVE_TIMEOUT_S)
        perf, problem = self._timed
        if problem is not None:
            draft.end(
                "error" if problem.kind == "internal" else "fail",
                "performance",
                f"performance stage: {problem.message}",
                (PROBLEM_REASON.get(problem.kind) or "error",),
            )
            return
        draft.performance = perf
        if perf is not None and not getattr(perf, "ok", True):
            # e.g. correct on the small cases but wrong at the bench size (index overflow)
            draft.end("fail", "performance", f"performance stage: {perf.error}", ("wrong-answer",))
            return
        draft.estimate = self._estimate
        summary = getattr(perf, "summary", None)
        tail = f"; {summary.headline()}" if summary is not None else ""
        draft.end("pass", "done", f"{_passed(draft)}{tail}{_notes.diagnostic(case)}", ())


def early_bench_inputs(kata, seed: int):
    """Start making the bench cases (and their rotation sets) this grade's performance stage will
    need; returns the callback
    that stops what is still running when the grade ends without that stage."""
    from grader.performance import bench_pool
    from grader.performance.prefetching import bench_seeds, rotation_seeds

    seeds = bench_seeds(len(kata.bench.cases), seed)
    started = bench_pool.start_early(kata, seeds, rotation=rotation_seeds(seeds))
    return lambda: bench_pool.stop(started)


def timed_in_worker(worker: Worker, kata_id: str, compiled, seed: int, kernel_path: str = ""):
    """The GPU performance stage: (PerformanceResult | None, Problem | None). The worker measures
    (output bytes, timing samples); this process checks and scores them (grader/performance/judge.py)."""
    from grader.performance.judge import judge
    from grader.performance.measured import RawPerformance

    raw, problem = worker.call(
        performance_in_worker, PERF_TIMEOUT_S, kata_id=kata_id, compiled=compiled, seed=seed, kernel_path=kernel_path
    )
    if problem is not None:
        return None, problem
    if not isinstance(raw, RawPerformance):
        return None, Problem("internal", "the GPU worker's reply is not a measurement")
    try:
        return judge(catalog.load(kata_id), raw, seed=seed), None
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a reply with the wrong shapes inside
        return None, Problem("internal", f"the GPU worker's measurement could not be judged ({exc})")


def performance_in_worker(launch_fn, launch_file, kata_id: str, compiled, seed: int, kernel_path: str = ""):
    """Runs inside the worker process: the GPU measurements with the learner's plan (no verdict, no score)."""
    from grader.performance.measured import measure_stage  # the GPU's timing: loaded in the worker only

    make_plan = None
    if kernel_path:  # Triton / numba: the same compiled artefact, specialised per launch
        from harness.backends.dialect import DialectBackend
        from harness.backends.plan import Plan

        make_plan = lambda b: Plan(DialectBackend(b, kernel_path), launch_file)  # noqa: E731
    return measure_stage(
        catalog.load(kata_id),
        compiled,
        launch_fn,
        launch_file=launch_file,
        seed=seed,
        make_plan=make_plan,
        cached_baseline=True,
    )
