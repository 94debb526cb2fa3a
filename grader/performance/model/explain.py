"""From per-launch resource times to what the learner reads: the bound with its utilisation, the
source lines that cost most of it, and one sentence on what would move it."""
from __future__ import annotations

from pathlib import Path

MAX_LINES = 3
#: which per-instruction cost each bound is attributed by
_ATTRIBUTE = {"dram": "dram", "l2": "dram", "issue": "instr", "shared": "shared", "atomic": "atomic",
              "latency": "stall"}


def _bound_key(totals: dict) -> str:
    compute = {k: v for k, v in totals.items() if k == "issue" or k.startswith("pipe:")}
    best = max(totals, key=totals.get)
    if best in compute:
        top_pipe = max((k for k in compute if k.startswith("pipe:")), key=compute.get, default=None)
        if top_pipe and compute[top_pipe] >= 0.9 * compute.get("issue", 0.0):
            return top_pipe
        return "issue"
    return best


def case_estimate(obs: dict, entry: dict, terms: list, seconds: float, launch_s: float, value: float, kata):
    from grader.performance.model import CaseEstimate

    totals: dict[str, float] = {"launch": launch_s}
    for t in terms:
        for k, v in t["terms"].items():
            totals[k] = totals.get(k, 0.0) + v
    key = _bound_key(totals)
    util = {k: min(1.0, v / seconds) for k, v in totals.items() if seconds > 0 and v > 0}
    compulsory = float(obs["cost_bench"].get("bytes", 0) or 0)
    dram = sum(t["dram_bytes"] for t in terms)
    bound = _bound_text(key, util, terms, compulsory, obs)
    lines = _lines(key, terms, kata)
    occ = tuple((t["kernel"], t["bps"], t["warps_per_sm"]) for t in terms)
    return CaseEstimate(case=dict(obs["case"]), seconds=seconds, how=_how(obs), bound=bound, resource=key,
                        utilisation={k: round(v, 3) for k, v in util.items()}, score=value,
                        library_s=entry.get("library_s"), lines=lines,  # None: not recorded
                        advice=_advice(key, terms, compulsory, dram, launch_s), launches=len(terms),
                        dram_bytes=dram, compulsory_bytes=compulsory, occupancy=occ)


def _how(obs: dict) -> str:
    model = ", ".join(f"{k} = {v}" for k, v in obs["model_case"].items())
    if obs.get("model_case2"):
        model += " and " + ", ".join(f"{k} = {v}" for k, v in obs["model_case2"].items())
    ran = sum(L["blocks_run"] for L in obs["launches"])
    what = (f"{ran:,} block{'s' if ran != 1 else ''} per plan on generated inputs" if obs["mode"] != "full"
            else "the whole plan on generated inputs")
    at = "the bench shape" if obs["model_case"] == obs["case"] else model
    tail = ""
    if obs["model_case"] != obs["case"]:
        tail = (", each instruction's count extrapolated to the bench shape" if obs["runs"] == "two"
                else f", scaled x{obs['work_ratio']:.0f} by the cost model")
    note = "; launch geometry scaled from the model run (the plan reads results back)" if obs["dry_error"] else ""
    if obs.get("out_of_budget"):
        note += ("; the model run did not finish within its budget of emulated work even at smaller shapes: "
                 "the estimate is a lower bound")
    elif obs.get("stopped"):
        note += ("; the model run was stopped before it finished (a block waited for blocks the sample left out, "
                 "or the kernel trapped): the estimate is a lower bound")
    return f"emulated {what} at {at}{tail}{note}"


def _bound_text(key: str, util: dict, terms: list, compulsory: float, obs: dict) -> str:
    u = util.get(key, 0.0)
    if key == "dram":
        dram = sum(t["dram_bytes"] for t in terms)
        extra = f", {dram / compulsory:.1f}x the compulsory bytes" if compulsory and dram > 1.15 * compulsory else ""
        return f"DRAM {u:.0%} busy{extra}"
    if key == "l2":
        return f"L2 bandwidth {u:.0%} busy"
    if key.startswith("pipe:"):
        return f"{key[5:].upper()} pipe {u:.0%} busy"
    if key == "issue":
        instr = sum(t["instructions"] for t in terms) * 32
        per = f"{instr / compulsory:.1f} thread instructions per compulsory byte" if compulsory else ""
        return f"issue-bound: {per}, schedulers {u:.0%} busy"
    if key == "shared":
        req = sum(t["shared_requests"] for t in terms)
        wf = sum(t["shared_wavefronts"] for t in terms)
        conflict = f", {wf / req:.1f} wavefronts per shared request" if req else ""
        return f"shared memory / L1 wavefronts {u:.0%} busy{conflict}"
    if key == "atomic":
        same = max(t["same_address"] for t in terms)
        return f"same-address atomics: {same:,.0f} atomics serialised on one address"
    if key == "latency":
        t = max(terms, key=lambda t: t["terms"]["latency"])
        n, b = t["loads_in_flight"]
        what = f"{n:.0f} load{'s' if round(n) != 1 else ''} in flight per warp ({b:,.0f} B)" if n else "dependent chain"
        return f"latency-bound: {what}, {t['warps_per_sm']} warps per SM"
    if key == "launch":
        return f"launch overhead: {len(terms)} launch{'es' if len(terms) != 1 else ''}, {u:.0%} of the time"
    return key


def _lines(key: str, terms: list, kata) -> tuple:
    field = "instr" if key.startswith("pipe:") else _ATTRIBUTE.get(key)
    if field is None:
        return ()
    per_line: dict[tuple, list] = {}
    for t in terms:
        for pc, c in t["per_pc"].items():
            if c["line"] is None or not c["file"]:
                continue
            if key.startswith("pipe:") and not _same_pipe(c["op"], key[5:]):
                continue
            slot = per_line.setdefault((Path(c["file"]).name, c["line"]), [0.0, {}])
            slot[0] += c[field]
            slot[1][c["op"].split(".")[0]] = slot[1].get(c["op"].split(".")[0], 0.0) + c[field]
    total = sum(v[0] for v in per_line.values())
    if total <= 0:
        return ()
    ranked = sorted(per_line.items(), key=lambda kv: -kv[1][0])[:MAX_LINES]
    return tuple((f"{f}:{line}", v / total, ", ".join(op for op, _ in sorted(ops.items(), key=lambda o: -o[1])[:3]))
                 for (f, line), (v, ops) in ranked if v >= 0.01 * total)


def _same_pipe(op: str, p: str) -> bool:
    from grader.performance.model.static import pipe

    return pipe(op) == p


def _advice(key: str, terms: list, compulsory: float, dram: float, launch_s: float = 0.0) -> str:
    if key in ("dram", "l2"):
        if compulsory and dram > 1.3 * compulsory:
            return ("more bytes reach DRAM than the problem needs: coalesce the accesses (neighbouring threads, "
                    "neighbouring addresses) and reuse data through shared memory or registers")
        return "at the memory ceiling: only moving fewer bytes (fewer passes, fused stages) would help"
    if key == "latency":
        return ("more bytes in flight per SM: several independent loads per thread before the first use "
                "(unrolled loops, float4, more elements per thread) or more resident warps")
    if key == "issue" or key.startswith("pipe:int") or key.startswith("pipe:lsu"):
        return ("fewer instructions per element: wider loads (float4), less index arithmetic, more outputs "
                "per thread to amortise the loop overhead")
    if key.startswith("pipe:fp32"):
        return "at the FMA pipe's ceiling: only fewer FLOPs (or tensor cores, where the kata allows) would help"
    if key.startswith("pipe:"):
        return f"the {key[5:]} pipe is the busiest: use fewer of its instructions per element"
    if key == "shared":
        return ("fewer shared-memory wavefronts per FMA: register tiling (more outputs per thread) reuses each "
                "shared load, and padding or a swizzle removes bank conflicts")
    if key == "atomic":
        return "combine in registers and shared memory first: one atomic per block (or per warp), not per element"
    if key == "launch":
        each = launch_s / max(1, len(terms)) * 1e6
        if len(terms) <= 1:
            return (f"one launch already; launching it and filling the GPU cost ~{each:.1f} us of this estimate, "
                    f"most of the time at this size: only fusing this work with a neighbouring kernel removes it")
        return f"fewer, larger launches: {len(terms)} launches each pay ~{each:.1f} us"
    return ""
