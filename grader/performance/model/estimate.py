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
from grader.performance.model.terms import LaunchCost, PcCost


def _geometry(obs, i: int, L) -> tuple[tuple, tuple, int]:
    """(grid, block, dynamic shared) of the bench-shape launch matching model launch i."""
    dry = obs.dry if obs.mode != "full" else []
    names = [d[0] for d in dry]
    if len(dry) == len(obs.launches) and dry[i][0] == L.kernel or i < len(dry) and dry[i][0] == L.kernel:
        d = dry[i]
        return tuple(d[1]), tuple(d[2]), int(d[3])
    if L.kernel in names:
        d = dry[names.index(L.kernel)]
        return tuple(d[1]), tuple(d[2]), int(d[3])
    grid = list(L.grid)
    if obs.mode == "full":  # the plan reads results back, so no dry run: grow the grid with the work
        grid[0] = max(1, round(grid[0] * obs.work_ratio))
    return tuple(grid), tuple(L.block), int(L.shared)


def _occupancy(resources: dict, kernel: str, threads: int, dyn: int, static_shared: int):
    """(blocks per SM, OccupancyResult or None) from ptxas's report, else from threads and shared."""
    from grader.performance.occupancy import occupancy
    from harness.hardware import H200

    res = resources.get(kernel) or next((r for k, r in resources.items() if k.endswith(kernel)), None)
    if res is not None:
        occ = occupancy(res, threads, dyn, H200)
        return max(1, occ.blocks_per_sm), occ
    from grader.performance.model.summarise import _blocks_per_sm

    return _blocks_per_sm(threads, static_shared), None


def launch_terms(obs, i: int, L, k, resources: dict) -> LaunchCost:
    grid, block, dyn = _geometry(obs, i, L)
    threads = max(1, block[0] * block[1] * block[2])
    blocks = max(1, grid[0] * grid[1] * grid[2])
    wpb = -(-threads // 32)
    bps, occ = _occupancy(resources, L.kernel, threads, dyn, L.shared)
    # counts are per block run at the model shape: times the bench launch's blocks, and, with
    # one model run at a smaller shape, times the cost model's ratio
    same = obs.runs == "two" or obs.model_case == obs.case or obs.per_block or obs.mode == "full"
    s = blocks * (1.0 if same else obs.work_ratio)
    busiest = -(-blocks // h200.SMS)
    imbalance = busiest * h200.SMS / blocks
    resident = min(bps, busiest)
    clk, sms = h200.CLOCK_HZ, h200.SMS

    pipes: dict[str, float] = {}
    per_pc: dict[int, PcCost] = {}
    shared_wf = global_wf = dram = l2 = 0.0
    stall_per_warp = 0.0
    warps_total = blocks * wpb
    instr = 0.0
    for pc, r in L.pcs.items():
        n = r.instructions * s
        p = pipe(r.op)
        w = n * (k["ptx_to_sass_other"] if p == "int" else 0.25 if p == "other" else 1.0)
        pipes[p] = pipes.get(p, 0.0) + w
        instr += w
        g_req, g_sec = r.global_requests * s, r.global_sectors * s
        d = l2s = 0.0
        lat = _load_latency(r, k)
        if r.cache_accesses:
            scale_rec = g_sec / (r.cache_accesses * s) if L.cache_truncated else 1.0
            d = r.dram_sectors * s * scale_rec * h200.SECTOR
            l2s = (r.cache_accesses - r.l1_hits) * s * scale_rec * h200.SECTOR
        atom = r.global_atomic_requests * s
        l2s += atom * h200.SECTOR
        dram += d
        l2 += l2s
        swf = r.shared_wavefronts * s + r.shared_atomic_steps * s
        shared_wf += swf
        # one L1 wavefront per distinct 128-byte line a warp's request touches (recorded up to
        # the record cap; past it, a quarter of the sectors)
        gwf = max(g_req, r.l1_lines * s if r.l1_lines and not L.cache_truncated else g_sec / 4)
        global_wf += gwf
        stall = _stall(r, n, warps_total, lat, k)
        stall_per_warp += stall
        per_pc[pc] = PcCost(file=r.file, line=r.line, op=r.op, instr=w, dram=d, shared=swf + gwf,
                            stall=stall * warps_total, atomic=atom)
    barriers_per_block = L.barriers * s / blocks if blocks else 0.0
    instr_per_warp = instr / max(1, warps_total)
    t_warp = stall_per_warp + barriers_per_block * k["barrier_s"] + instr_per_warp * k[
        "cycles_per_dependent_instruction"] / clk
    waves = math.ceil(busiest / max(1, bps))
    # the busiest warp's chain: a grid with uneven work (one thread per tensor, a power-law row)
    # lasts as long as its longest warp, however idle the other SMs are
    heavy = L.warp_max / L.warp_mean if L.warp_mean else 1.0
    chain = heavy * t_warp
    probe = obs.probes[i] if i < len(obs.probes) else None
    if probe is not None and probe.warp_mean:
        # the block(s) holding the heaviest item (heavy.py): their heaviest warp's chain, its excess
        # over their average warp grown to the bench inputs' heaviest item
        excess = probe.warp_max / probe.warp_mean - 1.0
        chain = max(chain, _warp_time(probe, k, L) * (1.0 + excess * obs.heavy_ratio))
    t = {
        "issue": instr / (h200.SUB_PARTITIONS * sms * clk) * imbalance,
        "shared": (shared_wf + global_wf) / (sms * clk) * imbalance,
        "dram": dram / k["dram_bytes_per_s"],
        "l2": l2 / k["l2_bytes_per_s"],
        "atomic": L.atomic_same_address_max * s / k["same_address_atomics_per_s"]
                  + L.atomic_lanes * s / k["atomics_per_s"],
        "latency": max(waves * t_warp, chain),
    }
    for p, count in pipes.items():
        if p in ("other",):
            continue
        rate = h200.PIPE_RATE[p] * (k["fp32_efficiency"] if p == "fp32" else 1.0)
        t["pipe:" + p] = count / (rate * sms * clk) * imbalance
    return LaunchCost(kernel=L.kernel, grid=grid, block=block, blocks=blocks, bps=bps, warps_per_sm=resident * wpb,
                      occupancy=occ, terms=t, per_pc=per_pc, dram_bytes=dram, instructions=instr, waves=waves,
                      loads_in_flight=_in_flight(L), same_address=L.atomic_same_address_max * s,
                      shared_wavefronts=shared_wf,
                      shared_requests=sum(r.shared_requests + r.shared_atomic_requests for r in L.pcs.values()) * s)


def _load_latency(r, k) -> float:
    """One load's round trip, from where the cache model found its sectors (DRAM where none)."""
    if not r.cache_accesses:
        return k["dram_latency_s"]
    return (r.l1_hits * k["l1_latency_s"] + r.l2_hits * k["l2_latency_s"]
            + r.dram_sectors * k["dram_latency_s"]) / r.cache_accesses


def _stall(r, n: float, warps: float, lat: float, k) -> float:
    """Seconds one warp waits on this instruction's loads: its batches of loads in flight, each a
    round trip less what the independent instructions before the first use hide."""
    b = r.batch
    if b is None or not warps:
        return 0.0
    trips = n / max(1, b.in_flight) / warps
    hidden = b.distance * k["cycles_per_dependent_instruction"] / h200.CLOCK_HZ
    return trips * max(0.0, (lat if b.space == "global" else k["shared_latency_s"]) - hidden)


def _warp_time(L, k, launch=None) -> float:
    """The average warp's dependent chain in L's blocks (per-block counts, one block's warps). A
    probe of one block sees a cold cache where the heaviest item's thread meets one the rest of the
    grid warmed: each load's round trip is the shorter of the probe's and `launch`'s (the sampled
    launch it belongs to), its own stream's reuse from the one, the shared data's from the other."""
    wpb = max(1, -(-int(L.block[0] * L.block[1] * L.block[2]) // 32))
    stall = instr = 0.0
    for pc, r in L.pcs.items():
        p = pipe(r.op)
        instr += r.instructions * (k["ptx_to_sass_other"] if p == "int" else 0.25 if p == "other" else 1.0)
        seen = launch.pcs.get(pc) if launch is not None else None
        lat = _load_latency(r, k)
        if seen is not None and seen.cache_accesses:
            lat = min(lat, _load_latency(seen, k))
        stall += _stall(r, r.instructions, wpb, lat, k)
    return stall + L.barriers * k["barrier_s"] + instr / wpb * k["cycles_per_dependent_instruction"] / h200.CLOCK_HZ


def _in_flight(L) -> tuple[float, float]:
    """(global loads in flight per warp, bytes in flight per warp), weighted by executions."""
    n = loads = bytes_ = 0.0
    for r in L.pcs.values():
        b = r.batch
        if b is None or b.space != "global" or not r.global_load_requests:
            continue
        n += r.global_load_requests
        loads += r.global_load_requests * b.in_flight
        bytes_ += b.in_flight * h200.SECTOR * r.global_load_sectors
    return (loads / n, bytes_ / n) if n else (0.0, 0.0)


def combine(terms: dict, p: float) -> float:
    groups = {
        "compute": max([v for k, v in terms.items() if k == "issue" or k.startswith("pipe:")], default=0.0),
        "memory": max(terms.get("dram", 0.0), terms.get("l2", 0.0)),
        "shared": terms.get("shared", 0.0), "atomic": terms.get("atomic", 0.0),
        "latency": terms.get("latency", 0.0)}
    return sum(v ** p for v in groups.values()) ** (1.0 / p)
