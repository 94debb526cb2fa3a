"""The time model: an observation (counts at the bench shape) -> seconds per resource -> time.

Per launch, each resource gives the time it would need alone:
- compute: warp instructions over the schedulers' issue rate, and each pipe over its own rate
  (FP32 at its sustained fraction), on the busiest SM (a grid of 133 blocks on 132 SMs runs two
  rounds on one of them);
- shared: shared-memory wavefronts (bank conflicts included) and global L1 wavefronts, one per
  cycle per SM;
- memory: DRAM bytes from the cache model over the HBM bandwidth; L2 traffic over L2's;
- atomics: the lanes that hit the most-hit address serialise at the L2's atomic unit;
- latency: one warp's chain of round trips (memory latency per batch of loads in flight,
  shared-memory round trips, barriers, dependent issue) times the waves of blocks an SM runs.
The launch takes the p-norm of these (the largest dominates; overlapping ones add a little) plus
the launch gap. The bound is the largest term, named with its utilisation.
"""
from __future__ import annotations

import math

from grader.performance.model import h200
from grader.performance.model.static import pipe


def _geometry(obs: dict, i: int, L: dict) -> tuple[tuple, tuple, int]:
    """(grid, block, dynamic shared) of the bench-shape launch matching model launch i."""
    dry = obs["dry"] if obs["mode"] != "full" else []
    names = [d[0] for d in dry]
    if len(dry) == len(obs["launches"]) and dry[i][0] == L["kernel"] or i < len(dry) and dry[i][0] == L["kernel"]:
        d = dry[i]
        return tuple(d[1]), tuple(d[2]), int(d[3])
    if L["kernel"] in names:
        d = dry[names.index(L["kernel"])]
        return tuple(d[1]), tuple(d[2]), int(d[3])
    grid = list(L["grid"])
    if obs["mode"] == "full":  # the plan reads results back, so no dry run: grow the grid with the work
        grid[0] = max(1, round(grid[0] * obs["work_ratio"]))
    return tuple(grid), tuple(L["block"]), int(L["shared"])


def _occupancy(resources: dict, kernel: str, threads: int, dyn: int, static_shared: int):
    """(blocks per SM, warps per SM, registers) from ptxas's report, else from threads and shared."""
    from grader.performance.occupancy import occupancy
    from harness.backends.base import H200

    res = resources.get(kernel) or next((r for k, r in resources.items() if k.endswith(kernel)), None)
    if res is not None:
        occ = occupancy(res, threads, dyn, H200)
        return max(1, occ.blocks_per_sm), occ, res.registers
    from grader.performance.model.summarise import _blocks_per_sm

    bps = _blocks_per_sm(threads, static_shared)
    return bps, None, 0


def launch_terms(obs: dict, i: int, L: dict, k, resources: dict) -> dict:
    grid, block, dyn = _geometry(obs, i, L)
    threads = max(1, block[0] * block[1] * block[2])
    blocks = max(1, grid[0] * grid[1] * grid[2])
    wpb = -(-threads // 32)
    bps, occ, _ = _occupancy(resources, L["kernel"], threads, dyn, L["shared"])
    # counts are per block run at the model shape: times the bench launch's blocks, and, with
    # one model run at a smaller shape, times the cost model's ratio
    same = obs["runs"] == "two" or obs["model_case"] == obs["case"] or obs.get("per_block") or obs["mode"] == "full"
    s = blocks * (1.0 if same else obs["work_ratio"])
    busiest = -(-blocks // h200.SMS)
    imbalance = busiest * h200.SMS / blocks
    resident = min(bps, busiest)
    clk, sms = h200.CLOCK_HZ, h200.SMS

    pipes: dict[str, float] = {}
    per_pc: dict[int, dict] = {}
    shared_wf = global_wf = dram = l2 = 0.0
    stall_per_warp = 0.0
    warps_total = blocks * wpb
    lanes = instr = 0.0
    for pc, row in L["rows"].items():
        op, file, line = L["meta"][pc]
        n = row[0] * s
        p = pipe(op)
        w = n * (k["ptx_to_sass_other"] if p == "int" else 0.25 if p == "other" else 1.0)
        pipes[p] = pipes.get(p, 0.0) + w
        instr += w
        lanes += row[1] * s
        g_req = (row[2] + row[5]) * s
        g_sec = (row[3] + row[6]) * s
        c = L["cache"].get(pc)
        d = l2s = 0.0
        lat = k["dram_latency_s"]
        if c and c["accesses"]:
            scale_rec = g_sec / (c["accesses"] * s) if L["cache_truncated"] else 1.0
            d = c["dram_sectors"] * s * scale_rec * 32
            l2s = (c["accesses"] - c["l1_hits"]) * s * scale_rec * 32
            fa = c["accesses"]
            lat = (c["l1_hits"] * k["l1_latency_s"] + c["l2_hits"] * k["l2_latency_s"]
                   + c["dram_sectors"] * k["dram_latency_s"]) / fa
        atom = row[8] * s
        l2s += atom * 32
        dram += d
        l2 += l2s
        swf = row[10] * s + L.get("shared_atomic_cost", {}).get(pc, 0.0) * s
        shared_wf += swf
        # one L1 wavefront per distinct 128-byte line a warp's request touches (recorded up to
        # the record cap; past it, a quarter of the sectors)
        lines = L.get("lines", {}).get(pc)
        gwf = max(g_req, lines * s if lines and not L["cache_truncated"] else g_sec / 4)
        global_wf += gwf
        stall = 0.0
        b = L["batches"].get(pc)
        if b and warps_total:
            space, _, count, dist = b
            trips = n / max(1, count) / warps_total
            # independent instructions between the load and its first use hide that much latency
            hidden = dist * k["cycles_per_dependent_instruction"] / clk
            stall = trips * max(0.0, (lat if space == "global" else k["shared_latency_s"]) - hidden)
            stall_per_warp += stall
        per_pc[pc] = {"line": line, "file": file, "instr": w, "dram": d, "shared": swf + gwf,
                      "stall": stall * warps_total, "atomic": atom, "op": op}
    barriers_per_block = L["barriers"] * s / blocks if blocks else 0.0
    instr_per_warp = instr / max(1, warps_total)
    t_warp = stall_per_warp + barriers_per_block * k["barrier_s"] + instr_per_warp * k[
        "cycles_per_dependent_instruction"] / clk
    waves = math.ceil(busiest / max(1, bps))
    # the busiest warp's chain: a grid with uneven work (one thread per tensor, a power-law row)
    # lasts as long as its longest warp, however idle the other SMs are
    heavy = L["warp_max"] / L["warp_mean"] if L.get("warp_mean") else 1.0
    t = {
        "issue": instr / (h200.SUB_PARTITIONS * sms * clk) * imbalance,
        "shared": (shared_wf + global_wf) / (sms * clk) * imbalance,
        "dram": dram / k["dram_bytes_per_s"],
        "l2": l2 / k["l2_bytes_per_s"],
        "atomic": L["atomic_same_address_max"] * s / k["same_address_atomics_per_s"]
                  + L["atomic_lanes"] * s / k["atomics_per_s"],
        "latency": max(waves * t_warp, heavy * t_warp),
    }
    for p, count in pipes.items():
        if p in ("other",):
            continue
        rate = h200.PIPE_RATE[p] * (k["fp32_efficiency"] if p == "fp32" else 1.0)
        t["pipe:" + p] = count / (rate * sms * clk) * imbalance
    loads_in_flight = _in_flight(L)
    return {"kernel": L["kernel"], "grid": grid, "block": block, "blocks": blocks, "bps": bps,
            "warps_per_sm": resident * wpb, "occupancy": occ, "terms": t, "per_pc": per_pc,
            "dram_bytes": dram, "instructions": instr, "lanes": lanes, "waves": waves,
            "loads_in_flight": loads_in_flight, "same_address": L["atomic_same_address_max"] * s,
            "atomic_lanes": L["atomic_lanes"] * s, "shared_wavefronts": shared_wf,
            "shared_requests": sum(r[9] + r[12] for r in L["rows"].values()) * s}


def _in_flight(L: dict) -> tuple[float, float]:
    """(global loads in flight per warp, bytes in flight per warp), weighted by executions."""
    n = loads = bytes_ = 0.0
    for pc, (space, depth, count, _) in L["batches"].items():
        if space != "global" or pc not in L["rows"]:
            continue
        row = L["rows"][pc]
        if not row[2]:
            continue
        n += row[2]
        loads += row[2] * count
        bytes_ += row[2] * count * 32 * row[3] / row[2]
    return (loads / n, bytes_ / n) if n else (0.0, 0.0)


def combine(terms: dict, p: float) -> float:
    groups = {
        "compute": max([v for k, v in terms.items() if k == "issue" or k.startswith("pipe:")], default=0.0),
        "memory": max(terms.get("dram", 0.0), terms.get("l2", 0.0)),
        "shared": terms.get("shared", 0.0), "atomic": terms.get("atomic", 0.0),
        "latency": terms.get("latency", 0.0)}
    return sum(v ** p for v in groups.values()) ** (1.0 / p)
