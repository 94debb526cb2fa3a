"""Scores from measured times: fraction of roofline, GTEPS, or × library; tiers; geometric means.

Pure arithmetic over numbers timing.py measured and ceilings calibrate.py measured, so every rule
here is unit-tested on the CPU. The roofline time of a case is T = max(bytes / B, flops / P)
(docs/roofline.md), B the calibrated copy bandwidth and P the peak of the precision the kata allows;
the score is T / measured median, so 1.0 means "at the hardware's ceiling".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.measure.calibrate import Ceilings

METRICS = ("roofline", "gteps", "library")
TIERS = ("below target", "pass", "good", "excellent")  # "below target", never "fail": a tier is not the verdict
#: a kernel this many times faster than the library at the same shape is flagged for review:
#: real wins that large are rare, measurement or correctness holes are not
SUSPICIOUS_SPEEDUP = 10.0


@dataclass(frozen=True)
class CaseScore:
    case: dict  # the bench case's parameters
    metric: str  # roofline | gteps | library
    value: float  # fraction of roofline, GTEPS, or kernel speed / library speed
    roofline_s: float  # T = max(bytes/B, flops/P) in seconds (0 when the cost model gives nothing)
    bound: str  # "memory" | "compute": which term of T is larger
    achieved_bandwidth: float  # compulsory bytes / median, bytes/s
    achieved_flops: float  # flops / median, FLOP/s
    baseline_value: float | None  # the same metric for the library timed in the same run
    speedup_vs_baseline: float | None  # baseline median / kernel median
    flags: tuple[str, ...]  # review flags (e.g. "over 10x the library")


@dataclass(frozen=True)
class ScoreSummary:
    metric: str
    value: float  # geometric mean over cases of CaseScore.value
    baseline_value: float | None  # geometric mean of the baseline's values
    tier: str  # below target | pass | good | excellent
    targets: dict[str, float]  # pass / good / excellent thresholds from kata.toml
    ceiling: str  # the algorithmic ceiling worth telling the learner ("" when none applies)
    next_target: str  # "0.62 of roofline; good needs 0.75" style line

    def headline(self) -> str:
        unit = {"roofline": "of roofline", "gteps": "GTEPS", "library": "x library"}[self.metric]
        value = f"{self.value:.0%}" if self.metric == "roofline" else f"{self.value:.2f}"
        base = ""
        if self.baseline_value is not None:
            b = f"{self.baseline_value:.0%}" if self.metric == "roofline" else f"{self.baseline_value:.2f}"
            base = f" (library {b})"
        return f"{value} {unit}{base} · {self.tier}"


def roofline_time(cost: dict, ceilings: Ceilings, precision: str = "fp32") -> tuple[float, str]:
    """(T seconds, "memory" | "compute") for a case's cost {"bytes": ..., "flops": ...}: the bound's
    time plus the calibrated empty launch, which no kernel beats (docs/roofline.md's start-up term: at
    4096x4096 qgemv's 8.7 MB take 2 us, about what the launch itself takes)."""
    mem = float(cost.get("bytes", 0) or 0) / ceilings.bandwidth
    flop = float(cost.get("flops", 0) or 0) / ceilings.peak(precision)
    return (mem + ceilings.launch_s, "memory") if mem >= flop else (flop + ceilings.launch_s, "compute")


def metric_value(metric: str, median_s: float, *, roofline_s: float, cost: dict,
                 baseline_s: float | None) -> float:
    """The score of one timing under `metric`; 0.0 when it cannot be computed."""
    if median_s <= 0:
        return 0.0
    if metric == "roofline":
        return roofline_s / median_s
    if metric == "gteps":
        return float(cost.get("edges", 0) or 0) / median_s / 1e9
    if metric == "library":
        return baseline_s / median_s if baseline_s else 0.0
    raise ValueError(f"unknown metric {metric!r}; expected one of {METRICS}")


def score_case(case: dict, metric: str, median_s: float, cost: dict, ceilings: Ceilings,
               baseline_s: float | None = None, precision: str = "fp32") -> CaseScore:
    t, bound = roofline_time(cost, ceilings, precision)
    value = metric_value(metric, median_s, roofline_s=t, cost=cost, baseline_s=baseline_s)
    base_value = None
    if baseline_s:
        base_value = (1.0 if metric == "library"
                      else metric_value(metric, baseline_s, roofline_s=t, cost=cost, baseline_s=baseline_s))
    speedup = baseline_s / median_s if baseline_s and median_s > 0 else None
    flags = []
    if speedup is not None and speedup > SUSPICIOUS_SPEEDUP:
        flags.append(f"{speedup:.0f}x faster than the library at this shape: flagged for review")
    if metric == "roofline" and value > 1.05:
        flags.append(f"{value:.0%} of the roofline is above the hardware's ceiling: the cost model or "
                     f"the timing is wrong (inputs cached in L2?)")
    return CaseScore(case=dict(case), metric=metric, value=value, roofline_s=t, bound=bound,
                     achieved_bandwidth=float(cost.get("bytes", 0) or 0) / median_s if median_s > 0 else 0.0,
                     achieved_flops=float(cost.get("flops", 0) or 0) / median_s if median_s > 0 else 0.0,
                     baseline_value=base_value, speedup_vs_baseline=speedup, flags=tuple(flags))


def geomean(values) -> float:
    """Geometric mean of positive values (docs/roofline.md: shapes combine geometrically); 0 if any is 0."""
    vals = [float(v) for v in values]
    if not vals or any(v <= 0 for v in vals):
        return 0.0
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def tier(value: float, targets: dict[str, float]) -> str:
    """The highest tier whose threshold `value` reaches."""
    reached = TIERS[0]
    for name in TIERS[1:]:
        if name in targets and value >= float(targets[name]):
            reached = name
    return reached


def summarize(cases: list[CaseScore], metric: str, targets: dict[str, float], ceiling: str = "") -> ScoreSummary:
    value = geomean(c.value for c in cases)
    bases = [c.baseline_value for c in cases]
    base = geomean(bases) if bases and all(b for b in bases) else None
    t = tier(value, targets)
    higher = [n for n in TIERS[1:] if n in targets and value < float(targets[n])]
    fmt = (lambda v: f"{v:.0%}") if metric == "roofline" else (lambda v: f"{v:.2f}")
    nxt = f"{higher[0]} needs {fmt(float(targets[higher[0]]))}" if higher else "the top tier"
    return ScoreSummary(metric=metric, value=value, baseline_value=base, tier=t, targets=dict(targets),
                        ceiling=ceiling, next_target=f"{fmt(value)}; {nxt}")
