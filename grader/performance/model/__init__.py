"""A model of the grading GPU (NVIDIA H200) that turns what the emulator observes into an estimated
time per bench case, names the resource that bounds it, and scores the estimate as the GPU
measurement would be scored. Always an estimate for a named GPU, never a measurement.

observe.py runs in the learner's worker (the plan at the bench shape, dry, and a model run with
the Profile observer); summarise.py reduces the records there (cache.py, static.py); estimate.py
turns counts into seconds per resource; this module assembles the report.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from grader.performance.model import h200
from grader.performance.model.estimate import combine, launch_terms

LABEL = f"estimate for the {h200.NAME} (CPU performance model, not a measurement)"

_NAMES = {"issue": "instruction issue", "shared": "shared memory / L1", "dram": "DRAM", "l2": "L2",
          "atomic": "same-address atomics", "latency": "latency", "launch": "launch overhead"}


@dataclass(frozen=True)
class CaseEstimate:
    case: dict
    seconds: float  # estimated time of the whole launch plan at this case
    how: str  # how the counts were obtained (sample of blocks at the bench shape, or scaled)
    bound: str  # "DRAM 78 % busy", "latency-bound: 1 load in flight per warp, 12 warps per SM"
    resource: str  # the key of the limiting term (dram, l2, issue, pipe:fp32, shared, atomic, latency, launch)
    utilisation: dict  # resource -> time it needs / estimated time (1.0: busy the whole time)
    score: float  # in the kata's metric
    library_s: float | None  # the library's H200 time at calibration
    lines: tuple  # ("kernel.cu:16", share of the bound resource, what it does), costliest first
    advice: str  # one sentence: what would move the bound
    launches: int
    dram_bytes: float
    compulsory_bytes: float
    occupancy: tuple  # (kernel, blocks per SM, warps per SM) of each bench-shape launch config


@dataclass(frozen=True)
class Estimate:
    label: str
    gpu: str
    constants: str  # "fitted 2026-12-01 on NVIDIA H200" or the defaults' status
    metric: str
    value: float  # geometric mean of the cases' scores
    library_value: float | None
    tier: str
    cases: tuple  # CaseEstimate

    def headline(self) -> str:
        fmt = (lambda v: f"{v:.0%}") if self.metric == "roofline" else (lambda v: f"{v:.2f}")
        unit = {"roofline": "of roofline", "gteps": "GTEPS", "library": "x library"}[self.metric]
        lib = f" (library {fmt(self.library_value)})" if self.library_value is not None else ""
        why = " (no library time recorded for this kata: not scored)" if self.tier == "unscored" else ""
        return f"estimated {fmt(self.value)} {unit}{lib}{why} · {self.tier} · {self.label}"

    def lines(self) -> list[str]:
        out = [f"performance {self.headline()}", f"  model constants: {self.constants}"]
        for c in self.cases:
            label = ", ".join(f"{k} = {v}" for k, v in c.case.items())
            out.append(f"  {label}: ~{_fmt_s(c.seconds)} estimated; bound: {c.bound}")
            out.append(f"    {c.how}; DRAM {c.dram_bytes / 1e6:,.0f} MB from the cache model, compulsory "
                       f"{c.compulsory_bytes / 1e6:,.0f} MB")
            for where, share, what in c.lines:
                out.append(f"    {where}: {share:.0%} of the {_resource_name(c.resource)} cost ({what})")
            out.append(f"    to move it: {c.advice}")
        return out


def _fmt_s(s: float) -> str:
    return f"{s * 1e3:.3f} ms" if s >= 1e-4 else f"{s * 1e6:.1f} us"


def _resource_name(key: str) -> str:
    return key[5:].upper() + " pipe" if key.startswith("pipe:") else _NAMES.get(key, key)


def estimate(kata, observations: list, resources: dict, fitted: h200.Fitted | None = None) -> Estimate | None:
    from grader.performance import score as _score
    from grader.performance.model import explain

    if not observations:
        return None
    k = fitted or h200.fitted()
    lib = h200.entry(kata)
    # a library-metric kata without a library time recorded at calibration is shown against the roofline
    metric = lib["metric"]
    unscored = metric == "library" and any(not e.get("library_s") for e in lib["cases"])
    if unscored or (metric == "gteps" and lib.get("default")):
        metric = "roofline"
    cases = []
    for obs in observations:
        entry = next(e for e in lib["cases"] if e["case"] == obs["case"])
        terms = [launch_terms(obs, i, L, k, resources) for i, L in enumerate(obs["launches"])]
        syncs = sum(L.get("syncs", 0) for L in obs["launches"])
        launch_s = k["launch_s"] * len(terms) + k.c.get("sync_s", 0.0) * syncs
        kernel_s = sum(combine(t["terms"], k["overlap_p"]) for t in terms)
        seconds = kernel_s + launch_s
        value = _metric(metric, seconds, entry, obs["cost_bench"])
        cases.append(explain.case_estimate(obs, entry, terms, seconds, launch_s, value, kata))
    values = [c.score for c in cases]
    value = _score.geomean(values)
    lib_values = [_metric(metric, e["library_s"], e, None) for e in lib["cases"] if e.get("library_s")]
    fitted_text = f"{k.status.split(' (')[0]} ({k.date}, {k.gpu})"
    tier = "unscored" if metric != lib["metric"] else _score.tier(value, kata.bench.targets)
    return Estimate(label=LABEL, gpu=h200.NAME, constants=fitted_text, metric=metric, value=value,
                    library_value=_score.geomean(lib_values) if len(lib_values) == len(lib["cases"]) else None,
                    tier=tier, cases=tuple(cases))


def _metric(metric: str, seconds: float, entry: dict, cost: dict | None) -> float:
    if seconds <= 0:
        return 0.0
    if metric == "roofline":  # as grader.performance.score.roofline_time: the bound plus an empty launch
        return ((entry.get("roofline_s") or 0.0) + h200.LAUNCH_FLOOR_S) / seconds
    if metric == "library":
        return (entry.get("library_s") or 0.0) / seconds
    if metric == "gteps":
        edges = (cost or {}).get("edges") or entry.get("bench_scalars", {}).get("m", 0)
        return float(edges) / seconds / 1e9
    return math.nan
