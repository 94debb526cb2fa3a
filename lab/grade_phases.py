"""One grade with a phase breakdown: where a CPU grade's wall time goes.

    python lab/grade_phases.py FOLDER --kata ID [--backend cpu] [--seed 0]

Prints one JSON object: {"report": the grade's JSON report, "phases": {name: seconds}}. The phases
come from wrapping the pipeline's own steps (nothing in the grader changes): compile, worker start,
making case data (generate + the reference), the runs of public and drawn cases in the worker
(emulation, plus the transfer), the checks, the sanitizer run and the H200 model's bench-shape
observation; on a GPU grade also the timing call and the wait for it after the sanitizer (they run
at the same time as the sanitizer, so these phases overlap). lab/grade_times.py and
lab/first_gpu_grade.py run it in a subprocess per grade.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PHASES: dict[str, float] = defaultdict(float)


def _timed(name, fn, split=None):
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            PHASES[split(*args, **kwargs) if split else name] += time.perf_counter() - t0
    return wrapper


def _install() -> None:
    from grader.grading import cases, runs
    from grader.pipeline import compile as compile_stage, correctness, sanitizer
    from grader.performance.model import stage
    from harness.sandbox import isolation

    from grader.pipeline import performance, run

    cases.materialize = _timed("case data (generate + reference)", cases.materialize)
    # a GPU grade's performance stage runs beside the sanitizer: its own lines, which overlap
    run.sanitizer_and_screen = _timed("sanitizer stage whole (sanitizer, screen, order)", run.sanitizer_and_screen)
    sanitizer.screen_stage = _timed("screen (public cases, sanitizer on)", sanitizer.screen_stage)
    performance.timed_in_worker = _timed("GPU timing call (beside the sanitizer)", performance.timed_in_worker)
    performance.BesideSanitizer.finish = _timed("waiting for the GPU timing after the sanitizer",
                                                performance.BesideSanitizer.finish)
    compile_stage._compile = _timed("compile", compile_stage._compile)
    runs.compare = _timed("check", runs.compare)
    correctness.run_case = _timed("", correctness.run_case,
                               split=lambda kata, worker, data, **_: f"run {data.case.origin} cases (worker)")
    sanitizer.sanitizer_stage = _timed("sanitizer + counters run", sanitizer.sanitizer_stage)
    sanitizer.order_stage = _timed("order check (other schedules)", sanitizer.order_stage)
    stage.estimate_stage = _timed("H200 model observation (bench shape)", stage.estimate_stage)
    start = isolation.Worker.__enter__
    isolation.Worker.__enter__ = _timed("worker start", start)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--kata", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args(argv)
    _install()
    from grader.pipeline import grade

    t0 = time.perf_counter()
    report = grade(args.kata, args.folder, backend=args.backend, seed=args.seed)
    total = time.perf_counter() - t0
    phases = dict(PHASES)
    phases["grade total (in process)"] = total
    from grader.grading.report import to_dict

    print(json.dumps({"report": to_dict(report), "phases": phases}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
