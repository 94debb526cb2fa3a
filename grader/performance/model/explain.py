"""From per-launch resource times to what the learner reads: the bound with its utilisation, the
source lines that cost most of it, and one sentence on what would move it (terms.py: each term's
own bound text, advice and the per-instruction cost its lines are ranked by)."""
from __future__ import annotations

from pathlib import Path

from grader.performance.model.terms import Context, term

MAX_LINES = 3


def _bound_key(totals: dict) -> str:
    compute = {k: v for k, v in totals.items() if k == "issue" or k.startswith("pipe:")}
    best = max(totals, key=totals.get)
    if best in compute:
        top_pipe = max((k for k in compute if k.startswith("pipe:")), key=compute.get, default=None)
        if top_pipe and compute[top_pipe] >= 0.9 * compute.get("issue", 0.0):
            return top_pipe
        return "issue"
    return best


def case_estimate(obs, entry: dict, launches: list, seconds: float, launch_s: float, value, kata):
    from grader.performance.model import CaseEstimate

    totals: dict[str, float] = {"launch": launch_s}
    for t in launches:
        for k, v in t.terms.items():
            totals[k] = totals.get(k, 0.0) + v
    key = _bound_key(totals)
    util = {k: min(1.0, v / seconds) for k, v in totals.items() if seconds > 0 and v > 0}
    compulsory = float(obs.cost_bench.get("bytes", 0) or 0)
    dram = sum(t.dram_bytes for t in launches)
    bound = term(key)
    ctx = Context(launches=launches, utilisation=util.get(key, 0.0), compulsory_bytes=compulsory, dram_bytes=dram,
                  launch_s=launch_s)
    occ = tuple((t.kernel, t.bps, t.warps_per_sm) for t in launches)
    return CaseEstimate(case=dict(obs.case), seconds=seconds, how=_how(obs), bound=bound.bound(ctx), resource=key,
                        utilisation={k: round(v, 3) for k, v in util.items()}, score=value,
                        library_s=entry.get("library_s"), lines=_lines(bound, launches),  # None: not recorded
                        advice=bound.advice(ctx), launches=len(launches), dram_bytes=dram,
                        compulsory_bytes=compulsory, occupancy=occ)


def _how(obs) -> str:
    model = ", ".join(f"{k} = {v}" for k, v in obs.model_case.items())
    if obs.model_case2:
        model += " and " + ", ".join(f"{k} = {v}" for k, v in obs.model_case2.items())
    ran = sum(L.blocks_run for L in obs.launches)
    what = (f"{ran:,} block{'s' if ran != 1 else ''} per plan on generated inputs" if obs.mode != "full"
            else "the whole plan on generated inputs")
    at = "the bench shape" if obs.model_case == obs.case else model
    tail = ""
    if obs.model_case != obs.case:
        tail = (", each instruction's count extrapolated to the bench shape" if obs.runs == "two"
                else f", scaled x{obs.work_ratio:.0f} by the cost model")
    note = "; launch geometry scaled from the model run (the plan reads results back)" if obs.dry_error else ""
    if obs.out_of_budget:
        note += ("; the model run did not finish within its budget of emulated work even at smaller shapes: "
                 "the estimate is a lower bound")
    elif obs.stopped:
        note += ("; the model run was stopped before it finished (a block waited for blocks the sample left out, "
                 "or the kernel trapped): the estimate is a lower bound")
    return f"emulated {what} at {at}{tail}{note}"


def _lines(bound, launches: list) -> tuple:
    field = bound.attribute
    if field is None:
        return ()
    only_pipe = getattr(bound, "pipe", None)
    per_line: dict[tuple, list] = {}
    for t in launches:
        for c in t.per_pc.values():
            if c.line is None or not c.file:
                continue
            if only_pipe is not None and pipe(c.op) != only_pipe:
                continue
            cost = getattr(c, field)
            slot = per_line.setdefault((Path(c.file).name, c.line), [0.0, {}])
            slot[0] += cost
            op = c.op.split(".")[0]
            slot[1][op] = slot[1].get(op, 0.0) + cost
    total = sum(v[0] for v in per_line.values())
    if total <= 0:
        return ()
    ranked = sorted(per_line.items(), key=lambda kv: -kv[1][0])[:MAX_LINES]
    return tuple((f"{f}:{line}", v / total, ", ".join(op for op, _ in sorted(ops.items(), key=lambda o: -o[1])[:3]))
                 for (f, line), (v, ops) in ranked if v >= 0.01 * total)


def pipe(op: str) -> str:
    from grader.performance.model.static import pipe as _pipe

    return _pipe(op)
