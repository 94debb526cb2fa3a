"""The time model: an observation (counts at the bench shape) -> seconds per resource -> time.

Per launch, each resource gives the time it would need alone:
- compute: warp instructions over the schedulers' issue rate, and each pipe over its own rate
  (FP32 at its sustained fraction), on the busiest SM (a grid of 133 blocks on 132 SMs runs two
  rounds on one of them); wgmma's FLOPs over the tensor cores' dense peak for their type at the
  power-capped sustained share (the "wgmma" pipe: a warpgroup's m64n256k16 is 128 cycles of an SM's
  tensor cores, not one issue slot);
- shared: shared-memory wavefronts (bank conflicts included) and global L1 wavefronts, one per
  cycle per SM;
- memory: DRAM bytes from the cache model over the HBM bandwidth; L2 traffic over L2's;
- atomics: the lanes that hit the most-hit address serialise at the L2's atomic unit, and so do a
  warp's lanes on one address, on as many units at once as lines are in use (one line's where a
  per-row sum is hit by neighbouring warps); every request's sectors pass the units;
- latency: one warp's chain of round trips (memory latency per batch of loads in flight,
  shared-memory round trips, barriers, dependent issue) times the waves of blocks an SM runs.
The launch takes the p-norm of these (the largest dominates; overlapping ones add a little) plus
the launch gap. The bound is the largest term, named with its utilisation.
"""
from __future__ import annotations

import math

from grader.performance.model import h200
from grader.performance.model.static import async_unit, pipe
from grader.performance.model.summarise import bench_launch
from grader.performance.model.terms import LaunchCost, PcCost


#: a probe's longest warp over the sample's, at least, for the heavy item to be one serial chain
HEAVY_CHAIN = 2.0


def _geometry(obs, i: int, L) -> tuple[tuple, tuple, int]:
    """(grid, block, dynamic shared) of the bench-shape launch matching model launch i."""
    d = bench_launch(obs.dry, obs.mode, i, L.kernel)
    if d is not None:
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
    wgmma_s = 0.0
    for pc, r in L.pcs.items():
        n = r.instructions * s
        p = pipe(r.op)
        w = n * (k["ptx_to_sass_other"] if p == "int" else 0.25 if p == "other" else 1.0)
        if async_unit(r.op) == "wgmma":
            wgmma_s += n * wgmma_seconds(r.op)
        else:
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
        if async_unit(r.op) == "tma":  # the copy engine moves L2 to shared memory past L1's wavefronts
            gwf = 0.0
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
    if obs.runs == "one" and L.blocks_run >= L.blocks_total:
        # every item of the model run was emulated (a queue may hand the heaviest to any thread):
        # the longest warp's excess grows to the bench's heaviest item
        heavy = 1.0 + (heavy - 1.0) * obs.heavy_ratio
    chain = heavy * t_warp
    probe = obs.probes[i] if i < len(obs.probes) else None
    # a grid that does not grow with the items (a fixed grid taking tasks from a queue) has no
    # block of its own for the heavy item: a probe block alone would take the whole queue
    per_item = obs.model_case == obs.case or blocks != L.blocks_total
    if probe is not None and probe.warp_mean and per_item:
        # the block(s) holding the heavy item (heavy.py): their heaviest warp's chain, its excess
        # over a typical warp grown to the bench inputs' heaviest item; where that warp is not
        # twice the sample's longest, the kernel spreads heavy items over many warps
        longest = _warp_time(probe, k, L) * probe.warp_max / probe.warp_mean
        # (a whole-grid run's watched blocks are the item's own: no sample to compare with)
        if L.blocks_run >= L.blocks_total or probe.warp_max >= HEAVY_CHAIN * L.warp_max:
            chain = max(chain, t_warp + (longest - t_warp) * obs.heavy_ratio)
    t = {
        "issue": instr / (h200.SUB_PARTITIONS * sms * clk) * imbalance,
        "shared": (shared_wf + global_wf) / (sms * clk) * imbalance,
        "dram": dram / k["dram_bytes_per_s"],
        "l2": l2 / k["l2_bytes_per_s"],
        "atomic": _atomic_chain(L, s, blocks, wpb, k, obs.dry_buffers)[0],
        "latency": max(waves * t_warp, chain),
    }
    for p, count in pipes.items():
        if p in ("other",):
            continue
        rate = h200.PIPE_RATE[p] * (k["fp32_efficiency"] if p == "fp32" else 1.0)
        t["pipe:" + p] = count / (rate * sms * clk) * imbalance
    if wgmma_s:
        t["pipe:wgmma"] = wgmma_s * imbalance
    return LaunchCost(kernel=L.kernel, grid=grid, block=block, blocks=blocks, bps=bps, warps_per_sm=resident * wpb,
                      occupancy=occ, terms=t, per_pc=per_pc, dram_bytes=dram, instructions=instr, waves=waves,
                      loads_in_flight=_in_flight(L), same_address=_same_address(L, s, obs.dry_buffers),
                      atomic_chain=_atomic_chain(L, s, blocks, wpb, k, obs.dry_buffers)[1],
                      shared_wavefronts=shared_wf,
                      shared_requests=sum(r.shared_requests + r.shared_atomic_requests for r in L.pcs.values()) * s)


#: a wgmma's input type -> the roofline precision whose dense peak it runs at
_WGMMA_TYPES = {"bf16": "bf16", "f16": "fp16", "tf32": "tf32", "e4m3": "fp8", "e5m2": "fp8"}


def wgmma_seconds(opcode: str) -> float:
    """GPU-seconds of one warp's share (a quarter) of a wgmma.mma_async.m64nNkK: its 2·64·N·K FLOPs
    over the whole GPU's sustained tensor rate for its input type (0 when the shape is unreadable)."""
    parts = opcode.split(".")
    shape = next((q for q in parts if q.startswith("m64n") and "k" in q), None)
    kind = next((_WGMMA_TYPES[q] for q in parts[parts.index(shape) + 2:] if q in _WGMMA_TYPES), None) if shape else None
    if shape is None or kind is None:
        return 0.0
    n, kk = shape[4:].split("k")
    flops = 2 * 64 * int(n) * int(kk) / 4
    return flops / (h200.TENSOR_PEAK[kind] * h200.TENSOR_SUSTAINED)


def _same_address(L, s: float, buffers: list | None = None) -> float:
    """Atomics on the most-hit address over the bench launch: a share of every block's where all
    blocks hit it (a counter, a bin, a column); where it belongs to a stretch of the grid (a row's
    sum), the bench's atomics spread over the bench-shape buffer (dry run), or the model run's count."""
    if not L.atomic_private:
        return L.atomic_same_address_max * s
    if buffers and 0 <= L.atomic_buffer < len(buffers) and buffers[L.atomic_buffer] > 0:
        return max(1.0, L.atomic_lanes * s / buffers[L.atomic_buffer])
    return L.atomic_same_address_max


def _atomic_chain(L, s: float, blocks: int, wpb: int, k, buffers: list | None = None) -> tuple[float, float]:
    """(seconds the L2's atomic units need, the longest chain of read-modify-writes on one unit):
    the most-hit address's chain, or the warps' same-address lanes (applied one after another)
    spread over the units in use at once, whichever is longer; plus every request's sectors
    through all of them."""
    rate = k["same_address_atomics_per_s"]
    if L.atomic_private:
        # lines in use at once: the stretch of the buffer the resident threads' rows cover
        threads = blocks * wpb * 32
        resident = min(threads, h200.SMS * h200.MAX_WARPS_PER_SM * 32)
        lines = L.atomic_lanes * s / _same_address(L, s, buffers) * resident / max(1, threads) * 4 / 128
    else:
        lines = L.atomic_lines
    units = min(max(1.0, lines), k.c.get("atomic_units", 32.0))
    longest = max(_same_address(L, s, buffers), L.atomic_serial * s / units)
    return longest / rate + L.atomic_sectors * s / k.c.get("atomic_sectors_per_s", k["atomics_per_s"]), longest


def _load_latency(r, k, idle: bool = False) -> float:
    """One load's round trip, from where the cache model found its sectors (DRAM where none);
    idle: an L2 no other warp queues at (the last warp of a heavy-tailed grid runs alone)."""
    if not r.cache_accesses:
        return k["dram_latency_s"]
    l2 = min(k["l2_latency_s"], k.c.get("l2_latency_idle_s", k["l2_latency_s"])) if idle else k["l2_latency_s"]
    return (r.l1_hits * k["l1_latency_s"] + r.l2_hits * l2 + r.dram_sectors * k["dram_latency_s"]) / r.cache_accesses


def _stall(r, n: float, warps: float, lat: float, k) -> float:
    """Seconds one warp waits on this instruction's loads: its batches of loads in flight, each a
    round trip less what the independent instructions before the first use hide."""
    b = r.batch
    if b is None or not warps:
        return 0.0
    trips = n / max(1, b.in_flight) / warps
    hidden = b.distance * k["cycles_per_dependent_instruction"] / h200.CLOCK_HZ
    return trips * max(0.0, (lat if b.space == "global" else k["shared_latency_s"]) - hidden)


def _miss_latency(r, k) -> float:
    """An L1 miss's round trip at an idle L2: L2 or DRAM as the cache model split this load's misses."""
    misses = r.l2_hits + r.dram_sectors
    if not misses:
        return k["dram_latency_s"]
    l2 = min(k["l2_latency_s"], k.c.get("l2_latency_idle_s", k["l2_latency_s"]))
    return (r.l2_hits * l2 + r.dram_sectors * k["dram_latency_s"]) / misses


def _warp_time(L, k, launch=None) -> float:
    """The average warp's dependent chain in L's blocks (per-block counts, one block's warps), at
    an idle L2 (the heavy item's warp outlasts the others). A watched load (heavy.py) that reads
    its lane's previous sector hits L1 at any size; its others miss L1 (a smaller model shape's
    L1 holds what the bench's would not) and go where `launch`'s (the sampled launch's) misses
    went. Unwatched loads: the shorter of the two runs' round trips."""
    wpb = max(1, -(-int(L.block[0] * L.block[1] * L.block[2]) // 32))
    stall = instr = 0.0
    for pc, r in L.pcs.items():
        p = pipe(r.op)
        instr += r.instructions * (k["ptx_to_sass_other"] if p == "int" else 0.25 if p == "other" else 1.0)
        seen = launch.pcs.get(pc) if launch is not None else None
        seen = seen if seen is not None and seen.cache_accesses else r
        if r.stream_share is not None:
            # the lane's own stream from L1; the rest where the launch's L1 misses went
            lat = r.stream_share * k["l1_latency_s"] + (1.0 - r.stream_share) * _miss_latency(seen, k)
        else:
            lat = min(_load_latency(r, k, idle=True), _load_latency(seen, k, idle=True))
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
