"""A model of the grading GPU (NVIDIA H200) that turns what the emulator observes into an estimated
time per bench case, names the resource that bounds it, and scores the estimate as the GPU
measurement would be scored. Always an estimate for a named GPU, never a measurement.

observe.py runs in the learner's worker (the plan at the bench shape, dry, and a model run with
the Profile observer); summarise.py reduces the records there (cache.py, static.py); estimate.py
turns counts into seconds per resource; this module assembles the report.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from grader.performance.model import h200
from grader.performance.model.estimate import combine, launch_terms

LABEL = f"estimate for the {h200.NAME} (CPU performance model, not a measurement)"

_NAMES = {"issue": "instruction issue", "shared": "shared memory / L1", "dram": "DRAM", "l2": "L2",
          "atomic": "same-address atomics", "latency": "latency", "launch": "launch overhead"}


#: the bound classes the validation table reports its error for, by the bound's resource key
BOUND_CLASS = {"dram": "memory", "l2": "memory", "issue": "compute", "shared": "shared", "atomic": "atomic",
               "latency": "latency", "launch": "launch"}
#: how the counts were made (observation "method") -> what the detail says
METHODS = {"complete": "complete (every block of every launch emulated at the bench shape)",
           "sampled": "sampled blocks at the bench shape",
           "extrapolated": "extrapolated from two smaller shapes",
           "scaled": "scaled from a smaller shape by the cost model",
           "incomplete": "incomplete: the model run did not finish"}


@dataclass(frozen=True)
class CaseEstimate:
    case: dict
    seconds: float  # estimated time of the whole launch plan at this case (a lower bound when incomplete)
    how: str  # how the counts were obtained (sample of blocks at the bench shape, or scaled)
    bound: str  # "DRAM 78 % busy", "latency-bound: 1 load in flight per warp, 12 warps per SM"
    resource: str  # the key of the limiting term (dram, l2, issue, pipe:fp32, shared, atomic, latency, launch)
    utilisation: dict  # resource -> time it needs / estimated time (1.0: busy the whole time)
    score: float | None  # in the kata's metric; None when the case has no honest estimate
    library_s: float | None  # the library's H200 time at calibration
    lines: tuple  # ("kernel.cu:16", share of the bound resource, what it does), costliest first
    advice: str  # one sentence: what would move the bound
    launches: int
    dram_bytes: float
    compulsory_bytes: float
    occupancy: tuple  # (kernel, blocks per SM, warps per SM) of each bench-shape launch config
    method: str = "sampled"  # a METHODS key
    expected_error: str = ""  # the validation table's error for this bound class, or "not yet validated"
    floor_s: float = 0.0  # the roofline time for the case's bytes and FLOPs (plus an empty launch)
    defect: str = ""  # the model's own result fell below floor_s: said so, shown at the floor
    no_estimate: str = ""  # why there is no estimate at all (the run saw no bytes, was scaled by 0)

    @property
    def lower_bound(self) -> bool:
        return self.method == "incomplete"


@dataclass(frozen=True)
class Estimate:
    label: str
    gpu: str
    constants: str  # "fitted 2026-12-01 on NVIDIA H200" or the defaults' status
    metric: str
    value: float | None  # geometric mean of the cases' scores; None when a case has none
    library_value: float | None
    tier: str  # "" when there is no score
    cases: tuple  # CaseEstimate

    def headline(self) -> str:
        if self.value is None:
            return f"{self._unscored()} · {self.label}"
        fmt = _percent if self.metric == "roofline" else (lambda v: f"{v:.2f}")
        unit = {"roofline": "of roofline", "gteps": "GTEPS", "library": "x library"}[self.metric]
        lib = f" (library {fmt(self.library_value)})" if self.library_value is not None else ""
        why = " (no library time recorded for this kata: not scored)" if self.tier == "unscored" else ""
        return f"estimated {fmt(self.value)} {unit}{lib}{why} · {self.tier} · {self.label}"

    def _unscored(self) -> str:
        none = [c for c in self.cases if c.no_estimate]
        if none:
            return f"no estimate, because {none[0].no_estimate} (no score, no tier)"
        low = [c for c in self.cases if c.lower_bound]
        at_least = ", ".join(f"at least {_fmt_s(c.seconds)}" for c in low)
        return (f"estimated {at_least} (the model run did not finish within its budget of emulated work: "
                f"no score, no tier)")

    def lines(self) -> list[str]:
        out = [f"performance {self.headline()}", f"  model constants: {self.constants}"]
        for c in self.cases:
            label = ", ".join(f"{k} = {v}" for k, v in c.case.items())
            if c.no_estimate:
                out.append(f"  {label}: no estimate, because {c.no_estimate}")
                continue
            time = f"at least {_fmt_s(c.seconds)}" if c.lower_bound else f"~{_fmt_s(c.seconds)}"
            out.append(f"  {label}: {time} estimated; bound: {c.bound}")
            out.append(f"    made: {METHODS[c.method]}; expected error ({_bound_class(c.resource)}-bound): "
                       f"{c.expected_error}")
            if c.defect:
                out.append(f"    model defect: {c.defect}")
            out.append(f"    {c.how}; DRAM {c.dram_bytes / 1e6:,.0f} MB from the cache model, compulsory "
                       f"{c.compulsory_bytes / 1e6:,.0f} MB")
            for where, share, what in c.lines:
                out.append(f"    {where}: {share:.0%} of the {_resource_name(c.resource)} cost ({what})")
            out.append(f"    to move it: {c.advice}")
        return out


def _percent(v: float) -> str:
    """A share of the roofline: two digits where it rounds to 0 % (a naive kernel at 0.19 %)."""
    return f"{v:.0%}" if v >= 0.01 or v == 0 else f"{v * 100:.2g}%"


def _bound_class(resource: str) -> str:
    return "compute" if resource.startswith("pipe:") else BOUND_CLASS.get(resource, resource)


def expected_error(resource: str) -> str:
    """The validation table's error for this bound class (validation.json), or that there is none yet."""
    import json

    table = json.loads((h200.HERE / "validation.json").read_text())
    row = table.get("classes", {}).get(_bound_class(resource))
    if not row:
        return f"{table.get('status', 'not yet validated')}"
    return (f"H200/estimate median {row['median']:.2f}x, {row['within_1_5x']:.0%} of {row['n']} validation "
            f"kernels within 1.5x ({table.get('source', '')})")


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
        entry = next(e for e in lib["cases"] if e["case"] == obs.case)
        terms = [launch_terms(obs, i, L, k, resources) for i, L in enumerate(obs.launches)]
        syncs = sum(L.syncs for L in obs.launches)
        launch_s = k["launch_s"] * len(terms) + k.c.get("sync_s", 0.0) * syncs
        kernel_s = sum(combine(t.terms, k["overlap_p"]) for t in terms)
        floor = _floor(entry, obs.cost_bench)
        seconds, defect = kernel_s + launch_s, ""
        why = _no_estimate(obs, terms, kernel_s)
        if not why and obs.method != "incomplete" and seconds < floor:
            defect = (f"the model's own result, {_fmt_s(seconds)}, is below the roofline time for these bytes and "
                      f"FLOPs ({_fmt_s(floor)}): shown at the roofline; the estimate is unreliable here")
            seconds = floor
        if obs.method == "incomplete" and obs.model_case != obs.case:
            # counts of a cut run scaled up are no bound at all: only the roofline is known
            seconds = max(floor, min(seconds, floor))
        elif obs.method == "incomplete":
            seconds = max(seconds, floor)  # the blocks emulated so far, at the bench shape: a lower bound
        value = None if why or obs.method == "incomplete" else _metric(metric, seconds, entry, obs.cost_bench)
        case = explain.case_estimate(obs, entry, terms, seconds, launch_s, value, kata)
        cases.append(replace(case, method=obs.method, floor_s=floor, defect=defect, no_estimate=why,
                             expected_error=expected_error(case.resource)))
    values = [c.score for c in cases]
    scored = all(v is not None for v in values)
    value = _score.geomean(values) if scored else None
    lib_values = [_metric(metric, e["library_s"], e, None) for e in lib["cases"] if e.get("library_s")]
    fitted_text = f"{k.status.split(' (')[0]} ({k.date}, {k.gpu})"
    if not scored:
        tier = ""
    else:
        tier = "unscored" if metric != lib["metric"] else _score.tier(value, kata.bench.targets)
    return Estimate(label=LABEL, gpu=h200.NAME, constants=fitted_text, metric=metric, value=value,
                    library_value=_score.geomean(lib_values) if len(lib_values) == len(lib["cases"]) else None,
                    tier=tier, cases=tuple(cases))


def _floor(entry: dict, cost: dict) -> float:
    """The roofline time of the case (its compulsory bytes at the streaming read rate or its FLOPs
    at the peak of the kata's precision: the FMA rate, or a tensor-core type's, whichever is
    longer) plus an empty launch: no estimate may be faster."""
    roof = max(float((cost or {}).get("bytes", 0) or 0) / h200.READ_BYTES_PER_S,
               float((cost or {}).get("flops", 0) or 0) / h200.peak_flops(entry.get("precision", "fp32")))
    return max(roof, entry.get("roofline_s") or 0.0) + h200.LAUNCH_FLOOR_S


def _no_estimate(obs, terms: list, kernel_s: float) -> str:
    """Why a case gets no estimate at all ("" when it gets one)."""
    if not obs.launches:
        return "the launch plan launched nothing the model could observe"
    if obs.runs == "one" and obs.model_case != obs.case and not obs.work_ratio:
        return "the model run's work could not be scaled to the bench shape (scaled by 0)"
    moved = sum(t.dram_bytes for t in terms) + sum(t.terms.get("l2", 0.0) for t in terms)
    if moved <= 0 and float(obs.cost_bench.get("bytes", 0) or 0) > 0:
        return "the model run saw no bytes move to or from memory (the kernel did no work on its inputs)"
    if kernel_s <= 0:
        return "the model run saw no work"
    return ""


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
