"""The grader's half of the GPU performance stage (issue 24): verdict and score from raw bytes and times.

The GPU worker (grader/performance/measured.py: measure_stage) sends back, per bench case, the output
bytes of the checked run and of both rotation sets after timing, the timing samples and the ceilings
calibrated on that GPU. Here, in the grader process, which holds the reference, every returned output
is compared with the reference outputs the grader makes itself (the same cached bench inputs), the
median is recomputed from the samples, a time below the physical floor (the case's bytes and FLOPs at
the calibrated ceilings) is rejected, and the case is scored. Nothing the worker could claim (a pass,
a statistic, a score) is read: its reply carries none.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from grader.grading.cases import reference_params
from grader.performance import score as _score
from grader.performance.bench_inputs import bench_data
from grader.performance.results import CaseTiming, PerformanceResult, RawPerformance
from grader.performance.prefetching import bench_seeds, rotation_seeds
from grader.performance.rotation import FLOOR_FRACTION
from harness.measure import timing


def _check(kata, inputs: dict, outputs, case: dict, expected: dict, scales: dict | None = None) -> list[str]:
    """Mismatches of outputs under the kata's tolerance: the same rule as the correctness stage."""
    from grader.grading.check import compare

    if not isinstance(outputs, dict) or set(outputs) != {a.name for a in kata.args if a.role in ("out", "inout")}:
        return ["the worker did not return the kata's outputs"]
    res = compare(kata, inputs, outputs, expected, reference_params(kata, case, inputs), scales=scales)
    return [] if res.ok else [res.headline()]


def _same_bytes(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes() for k in a)


def _retimed(result: timing.TimingResult) -> timing.TimingResult:
    """The timing with its statistics recomputed here from its samples (a claimed median is not read)."""
    samples = tuple(float(s) for s in result.samples)
    if not samples or not all(np.isfinite(samples)) or min(samples) <= 0:
        raise ValueError("timing samples that are not positive times")
    return dataclasses.replace(result, samples=samples, stats=timing.stats(samples))


def judge(kata, raw: RawPerformance, *, seed: int = 0, cases=None, data: dict | None = None) -> PerformanceResult:
    """PerformanceResult from what the worker measured. data: bench data already at hand, by case index
    and ("rotation", i) (in-process); otherwise made or loaded from the bench cache here."""
    t0 = time.perf_counter()
    data = data or {}
    phases = dict(raw.phases) if isinstance(raw.phases, dict) else {}
    cases = tuple(dict(c) for c in (cases if cases is not None else kata.bench.cases))
    flags = [raw.health] if raw.health else []
    flags.extend(raw.flags)
    base = dict(backend=raw.backend, gpu=raw.gpu, ceilings=raw.ceilings, health=raw.health)
    results: list[CaseTiming] = []

    def fail(error: str) -> PerformanceResult:
        return PerformanceResult(False, **base, cases=tuple(results), summary=None, occupancy=(), flags=tuple(flags),
                                 error=error, wall_s=raw.wall_s + time.perf_counter() - t0, data_s=raw.data_s,
                                 phases=phases)

    if len(raw.cases) != len(cases) or any(dict(rc.case) != c for rc, c in zip(raw.cases, cases)):
        return fail(f"the GPU worker measured other cases than the kata's bench cases {list(cases)}")
    seeds = bench_seeds(len(cases), seed)
    for i, (rc, case, case_seed, other_seed) in enumerate(zip(raw.cases, cases, seeds, rotation_seeds(seeds))):
        t = time.perf_counter()
        mine = data.get(i) or bench_data(kata, case, case_seed)
        fresh = data.get(("rotation", i)) or bench_data(kata, case, other_seed)
        wrong = _check(kata, mine.inputs, rc.checked, case, mine.expected, mine.scales)
        phases["check"] = phases.get("check", 0.0) + time.perf_counter() - t
        if wrong:
            return fail(f"wrong at bench size {case}: " + "; ".join(wrong[:3]))
        t = time.perf_counter()
        # Unchanged bytes need no second look; changed ones (float atomics reorder sums) are checked.
        recheck = () if _same_bytes(rc.after, rc.checked) else tuple(
            _check(kata, mine.inputs, rc.after, case, mine.expected, mine.scales))
        if not recheck:
            recheck = tuple(_check(kata, fresh.inputs, rc.after_other, case, fresh.expected, fresh.scales)
                            if rc.after_other is not None else ["the second input set was never run"])
        phases["recheck"] = phases.get("recheck", 0.0) + time.perf_counter() - t
        try:
            kt = _retimed(rc.kernel)
            bt = _retimed(rc.baseline) if rc.baseline is not None else None
        except (ValueError, TypeError) as exc:
            return fail(f"the GPU worker's timing of {case} is not usable ({exc})")
        flags.extend(f"{case}: {n}" for n in rc.notes)
        cost = kata.reference.cost(**reference_params(kata, case, mine.inputs))
        floor = _score.roofline_time(cost, raw.ceilings, kata.bench.precision)[0] * FLOOR_FRACTION
        if kt.stats.median < floor:  # faster than the GPU can move the bytes or do the FLOPs
            return fail(f"impossible time at {case}: {kt.stats.median * 1e6:.2f} us is below what this GPU needs "
                        f"to move the case's bytes and do its FLOPs ({floor / FLOOR_FRACTION * 1e6:.2f} us at the "
                        "calibrated ceilings): the timed launches did not do the work (a kernel that remembers an "
                        "answer?)")
        sc = _score.score_case(case, kata.bench.metric, kt.stats.median, cost, raw.ceilings,
                               baseline_s=bt.stats.median if bt else None, precision=kata.bench.precision)
        flags.extend(f"{case}: {f}" for f in (*kt.flags, *sc.flags))
        if recheck:
            flags.append(f"{case}: the output changed during timing: {recheck[0]}")
        results.append(CaseTiming(dict(case), kt, bt, sc, recheck, tuple(rc.libraries)))
    summary = _score.summarize([r.score for r in results], kata.bench.metric, kata.bench.targets, kata.bench.ceiling)
    ok = bool(results) and not any(r.recheck for r in results)
    return PerformanceResult(ok, **base, cases=tuple(results), summary=summary, occupancy=tuple(raw.occupancy),
                             flags=tuple(flags), wall_s=raw.wall_s + time.perf_counter() - t0, data_s=raw.data_s,
                             error=None if ok else _after_timing(results), phases=phases)


def _after_timing(results) -> str:
    """Why a pass before timing became a fail after it: the case, what was off, and the likely cause."""
    r = next(r for r in results if r.recheck)
    return (f"the output was wrong after timing at {r.case}: {r.recheck[0]}. The checked run before timing "
            "passed, so the result changes from run to run: a sum whose order depends on the schedule (many "
            "float atomicAdds into one value lose more than the tolerance on some orders; sum in a wider type "
            "or with fewer atomics), a race, or state kept between launches")
