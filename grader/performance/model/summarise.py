"""The model run's records reduced, inside the worker, to what the estimate needs: per launch and
per instruction the counters, the cache model's hits and misses, and the loads in flight."""
from __future__ import annotations

import numpy as np

from grader.performance.model import cache, h200, static


def _blocks_per_sm(threads: int, shared: int, registers: int = 0) -> int:
    from grader.performance.occupancy import blocks_per_sm
    from harness.hardware import H200

    return blocks_per_sm(threads, shared, registers, H200)


def _launch(L: dict, mode: str, footprint: float, registers: dict, batches: dict) -> dict:
    threads = int(np.prod(L["block"]))
    grid = int(np.prod(L["grid"]))
    ran = max(1, int(L["blocks_run"].size))
    bps = _blocks_per_sm(threads, L["shared"], registers.get(L["kernel"], 0))
    if ran < grid:  # a sample: its share of L2 is the sample's share of the resident blocks
        concurrency = ran
        l2 = h200.L2_BYTES / 32 * min(1.0, ran / max(1, min(grid, bps * h200.SMS)))
    else:  # the whole grid at a smaller shape: the L2 shrinks with the footprint
        concurrency = max(1, min(grid, bps * h200.SMS))
        l2 = h200.L2_BYTES / 32 * min(1.0, footprint)
    l1 = max(32.0, (h200.L1_BYTES - bps * L["shared"]) / bps / 32)
    res = cache.simulate(L["records"], concurrency, l2, l1)
    per = 1.0 / ran  # every count below is per block run
    return {
        "kernel": L["kernel"], "grid": L["grid"], "block": L["block"], "shared": L["shared"],
        "blocks_run": ran, "blocks_total": grid,
        "rows": {int(pc): [float(v) * per for v in row] for pc, row in L["rows"].items()},
        "meta": {int(pc): (m[0], m[1], m[2]) for pc, m in L["meta"].items()},
        "cache": {pc: {k: v * per for k, v in c.items()} for pc, c in res.per_pc.items()},
        "cache_truncated": bool(L["truncated"]),
        "batches": {pc: batches[pc] for pc in L["rows"] if pc in batches},
        "atomic_lanes": L["atomic_lanes"] * per, "atomic_same_address_max": L["atomic_same_address_max"] * per,
        "shared_atomic_cost": {int(pc): v * per for pc, v in L["shared_atomic_cost"].items()},
        "lines": {int(pc): v * per for pc, v in L.get("lines", {}).items()},
        "barriers": L["barriers"] * per, "syncs": L.get("syncs", 0),
        # the busiest warp's instructions and the average warp's, of the warps that ran
        "warp_max": float(L["warp_issues"].max()) if L.get("warp_issues") is not None and L["warp_issues"].size else 0.0,
        "warp_mean": float(L["warp_issues"].mean()) if L.get("warp_issues") is not None and L["warp_issues"].size else 0.0}


def _extrapolate(a: dict, b: dict, e: float, anchor: dict) -> dict:
    """Per-block counts at the bench shape from two model runs: x_bench = x1 (x2 / x1) ** e, so a
    count that doubles with the work (the element loop) grows with it and one that stays (the
    per-block epilogue) stays; no instruction outgrows its anchor (static.anchors), whose count
    it keeps its larger-run share of."""
    def f(x1, x2):
        return x2 if x1 <= 0 or x2 <= 0 else x1 * (x2 / x1) ** e

    out = dict(b)
    grow: dict[int, float] = {}
    for pc, r in b["rows"].items():
        grow[pc] = f(a["rows"].get(pc, [0.0])[0], r[0]) / r[0] if r[0] else 1.0
    for pc in grow:  # cap by the anchor's growth (the anchor itself is never capped)
        top = anchor.get(pc, pc)
        if top != pc and top in grow:
            grow[pc] = min(grow[pc], grow[top])
    out["rows"] = {pc: [v * grow[pc] for v in r] for pc, r in b["rows"].items()}
    out["cache"] = {pc: {k: v * grow.get(pc, 1.0) for k, v in c.items()} for pc, c in b["cache"].items()}
    out["shared_atomic_cost"] = {pc: v * grow.get(pc, 1.0) for pc, v in b["shared_atomic_cost"].items()}
    out["lines"] = {pc: v * grow.get(pc, 1.0) for pc, v in b.get("lines", {}).items()}
    atoms = [pc for pc, r in b["rows"].items() if r[8]]
    g_atom = (sum(b["rows"][pc][8] * grow[pc] for pc in atoms) / sum(b["rows"][pc][8] for pc in atoms)) if atoms else 1.0
    out["atomic_lanes"] = b["atomic_lanes"] * g_atom
    out["atomic_same_address_max"] = b["atomic_same_address_max"] * g_atom
    out["barriers"] = f(a["barriers"], b["barriers"])
    out["warp_max"] = f(a["warp_max"], b["warp_max"])
    out["warp_mean"] = f(a["warp_mean"], b["warp_mean"])
    return out


def observation(kata, entry: dict, lib: dict, dry, dry_error: str, runs: list, stopped: bool,
                ptx: str, filename: str, registers: dict | None = None, out_of_budget: bool = False) -> dict:
    """runs: [(Profile launches, cost)] of one or two model runs (the second at a larger shape)."""
    import math

    from harness.emulator.ptx import load_ptx

    module = load_ptx(ptx, filename)
    batches = static.load_batches(module.code, list(module.functions.values()))
    bench = dict(entry["case"])
    cost_bench = kata.reference.cost(**{**bench, **entry.get("bench_scalars", {})})
    key = lib["scale_by"]
    work = [max(1.0, float(c.get(key, 0) or 0)) for _, c in runs]
    wb = max(1.0, float(cost_bench.get(key, 0) or 0))
    foot = float(cost_bench.get("bytes", 1) or 1)
    summaries = [[_launch(L, lib["mode"], float(c.get("bytes", 1) or 1) / foot, registers or {}, batches)
                  for L in launches] for launches, c in runs]
    last = summaries[-1]
    if len(runs) == 2 and [L["kernel"] for L in summaries[0]] == [L["kernel"] for L in last] and work[1] > work[0]:
        e = math.log(wb / work[0]) / math.log(work[1] / work[0])
        anchor = static.anchors(module.code, list(module.functions.values()))
        launches = [_extrapolate(a, b, e, anchor) for a, b in zip(summaries[0], last)]
        how = "two"
    else:
        launches = last
        how = "one"
    model_case = dict(entry["model_case"])
    if stopped or out_of_budget or not launches:
        method = "incomplete"
    elif model_case != bench:
        method = "extrapolated" if how == "two" else "scaled"
    elif all(L["blocks_run"] >= L["blocks_total"] for L in launches):
        method = "complete"
    else:
        method = "sampled"
    return {"case": bench, "model_case": model_case, "model_case2": entry.get("model_case2"), "method": method,
            "out_of_budget": out_of_budget,
            "mode": lib["mode"], "per_block": bool(lib.get("per_block")), "work_ratio": wb / work[-1], "runs": how,
            "dry": [list(d) for d in dry], "dry_error": dry_error,
            "launches": launches, "stopped": stopped, "cost_bench": cost_bench}
