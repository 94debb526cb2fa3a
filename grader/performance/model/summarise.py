"""The model run's records reduced, inside the worker, to what the estimate needs: per launch and
per instruction the counters (by name), the cache model's hits and misses, and the loads in
flight. Typed from here on: an Observation per bench case, a LaunchSummary per launch, PcCounts
per instruction, every count per block run at the model shape (or extrapolated to the bench's)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from grader.performance.model import cache, h200, static
from harness.emulator.tally import _FIELDS


@dataclass(frozen=True)
class LoadBatch:
    """How a load waits (static.load_batches): its space, its depth in a chain of dependent loads,
    the loads of that space and depth that leave together, and the instructions before its use."""

    space: str
    depth: int
    in_flight: int
    distance: int


@dataclass(frozen=True)
class PcCounts:
    """One instruction's counts per block run."""

    op: str
    file: str | None
    line: int | None
    instructions: float = 0.0  # warp instructions issued
    active_lanes: float = 0.0
    global_load_requests: float = 0.0
    global_load_sectors: float = 0.0
    global_store_requests: float = 0.0
    global_store_sectors: float = 0.0
    global_atomic_requests: float = 0.0  # warp-level atom/red on global memory
    shared_requests: float = 0.0
    shared_wavefronts: float = 0.0
    shared_atomic_requests: float = 0.0
    shared_atomic_steps: float = 0.0  # serialised steps of its shared atomics (lanes on one address)
    l1_lines: float = 0.0  # distinct 128-byte lines its warps' global requests touched (L1 wavefronts)
    cache_accesses: float = 0.0  # (block, sector) records the cache model saw
    l1_hits: float = 0.0
    l2_hits: float = 0.0
    dram_sectors: float = 0.0
    #: of the watched blocks' loads (heavy.py), those of the sector the lane's previous load here read
    stream_share: float | None = None
    batch: LoadBatch | None = None

    def scaled(self, g: float) -> PcCounts:
        return replace(self, **{f.name: getattr(self, f.name) * g for f in fields(self) if f.type == "float"})

    @property
    def global_requests(self) -> float:
        return self.global_load_requests + self.global_store_requests

    @property
    def global_sectors(self) -> float:
        return self.global_load_sectors + self.global_store_sectors


@dataclass(frozen=True)
class LaunchSummary:
    kernel: str
    grid: tuple
    block: tuple
    shared: int  # dynamic shared bytes
    blocks_run: int
    blocks_total: int
    pcs: dict  # pc -> PcCounts
    cache_truncated: bool  # the records were capped: cache counts cover the part recorded
    atomic_lanes: float  # global atomic lanes per block
    atomic_same_address_max: float  # lanes on the most-hit address, per block
    barriers: float
    syncs: int = 0  # values the plan read back after this launch (device-to-host syncs)
    warp_max: float = 0.0  # the busiest warp's instructions
    warp_mean: float = 0.0  # the average warp's, of the warps that ran
    atomic_sectors: float = 0.0  # (warp request, sector) pairs of global atomics per block
    atomic_serial: float = 0.0  # per warp request its most lanes on one address, summed, per block
    atomic_lines: float = 1.0  # distinct 128-byte lines the run's global atomics hit
    #: the most-hit address belongs to a stretch of the grid (a row's sum): atomic_same_address_max
    #: is then that address's whole count, not a per-block share of one every block hits
    atomic_private: bool = False
    atomic_buffer: int = -1  # which buffer (in the plan's order of making them) holds that address


@dataclass(frozen=True)
class Observation:
    """What the model saw for one bench case."""

    case: dict
    model_case: dict
    model_case2: dict | None
    method: str  # complete | sampled | extrapolated | scaled | incomplete (model.METHODS)
    mode: str  # sample | data | full
    per_block: bool
    work_ratio: float  # bench work / model work (the kata's scale_by)
    runs: str  # "one" or "two" model runs
    dry: list  # (kernel, grid, block, dynamic shared) of each bench-shape launch
    dry_error: str
    launches: list  # LaunchSummary
    stopped: bool
    cost_bench: dict = field(default_factory=dict)
    out_of_budget: bool = False
    #: per launch, the probe of the blocks holding the heaviest item (heavy.py), or None
    probes: list = field(default_factory=list)
    #: the bench inputs' heaviest item over the model run's (1.0 where the kata declares none)
    heavy_ratio: float = 1.0
    dry_buffers: list = field(default_factory=list)  # elements of each bench-shape buffer, in order made


def _blocks_per_sm(threads: int, shared: int, registers: int = 0) -> int:
    from grader.performance.occupancy import blocks_per_sm
    from harness.hardware import H200

    return blocks_per_sm(threads, shared, registers, H200)


def _launch(L: dict, footprint: float, registers: dict, batches: dict, spread=(1.0, 0.0),
            bench_grid: int | None = None) -> LaunchSummary:
    """spread (spread.py): the grid's mean work per block over the sampled blocks', by which every
    count and the average warp scale, and the heaviest warp the probes saw. bench_grid: the blocks
    of the matching bench-shape launch (None: unknown)."""
    spread, probe_warp_max = spread
    threads = int(np.prod(L["block"]))
    grid = int(np.prod(L["grid"]))
    ran = max(1, int(L["blocks_run"].size))
    bps = _blocks_per_sm(threads, L["shared"], registers.get(L["kernel"], 0))
    if ran < grid:  # a sample: its share of L2 is the sample's share of the resident blocks
        concurrency = ran
        share = ran / max(1, min(grid, bps * h200.SMS))
        if bench_grid and bench_grid != grid:
            # a sample at a smaller shape stands for the bench's resident blocks: its share of the
            # L2 is its share of those, and its blocks' bytes are the bench's blocks' scaled by the
            # per-block footprint (a row re-read after every resident row was read misses at the
            # bench shape, so it must at the model's)
            share = footprint * ran * bench_grid / (grid * max(1, min(bench_grid, bps * h200.SMS)))
        l2 = h200.L2_BYTES / h200.SECTOR * min(1.0, share)
    else:  # the whole grid at a smaller shape: the L2 shrinks with the footprint
        concurrency = max(1, min(grid, bps * h200.SMS))
        l2 = h200.L2_BYTES / h200.SECTOR * min(1.0, footprint)
    l1 = max(32.0, (h200.L1_BYTES - bps * L["shared"]) / bps / h200.SECTOR)
    res = cache.simulate(L["records"], concurrency, l2, l1)
    per = spread / ran  # every count below is per block run, as the grid's average block
    pcs = {}
    for pc, row in L["rows"].items():
        pc = int(pc)
        named = dict(zip(_FIELDS, (float(v) * per for v in row)))
        c = res.per_pc.get(pc, {})
        op, file, line = L["meta"][pc]
        pcs[pc] = PcCounts(
            op=op, file=file, line=line, **{f: named[f] for f in (
                "instructions", "active_lanes", "global_load_requests", "global_load_sectors",
                "global_store_requests", "global_store_sectors", "global_atomic_requests", "shared_requests",
                "shared_wavefronts", "shared_atomic_requests")},
            shared_atomic_steps=L["shared_atomic_cost"].get(pc, 0) * per, l1_lines=L.get("lines", {}).get(pc, 0) * per,
            cache_accesses=c.get("accesses", 0) * per, l1_hits=c.get("l1_hits", 0) * per,
            l2_hits=c.get("l2_hits", 0) * per, dram_sectors=c.get("dram_sectors", 0) * per,
            batch=LoadBatch(*batches[pc]) if pc in batches else None,
            stream_share=_stream_share(L, pc))
    warps = L.get("warp_issues")
    same = L["atomic_same_address_max"] * per
    elems = int(L.get("atomic_buffer_elems", 0) or 0)
    private = bool(L.get("atomic_monotone")) and elems > 1 and L["atomic_lanes"] > 0
    if private:  # the grid's atomics spread evenly along the buffer, the sample's hottest at least
        same = max(float(L["atomic_same_address_max"]), L["atomic_lanes"] * per * grid / elems)
    return LaunchSummary(
        kernel=L["kernel"], grid=tuple(L["grid"]), block=tuple(L["block"]), shared=int(L["shared"]),
        blocks_run=ran, blocks_total=grid, pcs=pcs, cache_truncated=bool(L["truncated"]),
        atomic_lanes=L["atomic_lanes"] * per, atomic_same_address_max=same,
        atomic_sectors=L.get("atomic_sectors", 0) * per, atomic_serial=L.get("atomic_serial", 0) * per,
        atomic_lines=float(max(1, L.get("atomic_lines", 1))), atomic_private=private,
        atomic_buffer=int(L.get("atomic_buffer", -1)),
        barriers=L["barriers"] * per, syncs=int(L.get("syncs", 0)),
        warp_max=max(float(warps.max()) if warps is not None and warps.size else 0.0, probe_warp_max),
        warp_mean=float(warps.mean()) * spread if warps is not None and warps.size else 0.0)


def _stream_share(L: dict, pc: int) -> float | None:
    hits, loads = ((L.get("watch") or {}).get("stream") or {}).get(pc, (0, 0))
    return hits / loads if loads else None


def _watched(L: dict, summary: LaunchSummary) -> LaunchSummary | None:
    """The blocks holding the heaviest item, as a launch of their own: each instruction's count
    theirs, its cache behaviour the launch's (Profile's watch)."""
    w = L.get("watch")
    if not w or not w["warp_issues"].size:
        return None
    n = float(w["blocks"])
    pcs = {pc: replace(r, instructions=w["pcs"].get(pc, 0) / n) for pc, r in summary.pcs.items() if pc in w["pcs"]}
    return replace(summary, pcs=pcs, blocks_run=int(n), barriers=summary.barriers,
                   warp_max=float(w["warp_issues"].max()), warp_mean=float(w["warp_issues"].mean()))


def _extrapolate(a: LaunchSummary, b: LaunchSummary, e: float, anchor: dict) -> LaunchSummary:
    """Per-block counts at the bench shape from two model runs: x_bench = x1 (x2 / x1) ** e, so a
    count that doubles with the work (the element loop) grows with it and one that stays (the
    per-block epilogue) stays; no instruction outgrows its anchor (static.anchors), whose count
    it keeps its larger-run share of."""
    def f(x1, x2):
        return x2 if x1 <= 0 or x2 <= 0 else x1 * (x2 / x1) ** e

    grow: dict[int, float] = {}
    for pc, r in b.pcs.items():
        before = a.pcs[pc].instructions if pc in a.pcs else 0.0
        grow[pc] = f(before, r.instructions) / r.instructions if r.instructions else 1.0
    for pc in grow:  # cap by the anchor's growth (the anchor itself is never capped)
        top = anchor.get(pc, pc)
        if top != pc and top in grow:
            grow[pc] = min(grow[pc], grow[top])
    atoms = [pc for pc, r in b.pcs.items() if r.global_atomic_requests]
    g_atom = (sum(b.pcs[pc].global_atomic_requests * grow[pc] for pc in atoms)
              / sum(b.pcs[pc].global_atomic_requests for pc in atoms)) if atoms else 1.0
    return replace(b, pcs={pc: r.scaled(grow[pc]) for pc, r in b.pcs.items()},
                   atomic_lanes=b.atomic_lanes * g_atom, atomic_same_address_max=b.atomic_same_address_max * g_atom,
                   atomic_sectors=b.atomic_sectors * g_atom, atomic_serial=b.atomic_serial * g_atom,
                   barriers=f(a.barriers, b.barriers), warp_max=f(a.warp_max, b.warp_max),
                   warp_mean=f(a.warp_mean, b.warp_mean))


def _shape_exponent(bench: dict, first: dict, second: dict) -> float | None:
    """log(bench / first) / log(second / first) along the dimensions the two model shapes halve,
    when they all grow by one factor and the bench differs from the first shape only in them:
    a count is extrapolated in the shape's own scale (adamw's thread walks `big` elements however
    the arena's padding grows), not in the cost model's bytes. None otherwise."""
    import math

    moved = [k for k in second if second[k] != first.get(k)]
    if not moved or any(bench.get(k) != first.get(k) for k in bench if k not in moved):
        return None
    try:
        steps = {second[k] / first[k] for k in moved}
        reach = {bench[k] / first[k] for k in moved}
    except (TypeError, ZeroDivisionError, KeyError):
        return None
    if len(steps) != 1 or len(reach) != 1 or min(steps) <= 1 or min(reach) < 1:
        return None
    return math.log(reach.pop()) / math.log(steps.pop())


def _bench_cost(kata, bench: dict, entry: dict, runs: list) -> dict:
    """The cost model at the bench shape; where it needs values only the inputs carry (paged
    attention's block counts), the larger model run's cost grown by the factors its shape was
    halved by (exact at the bench shape itself)."""
    try:
        return kata.reference.cost(**{**bench, **entry.get("bench_scalars", {})})
    except (TypeError, KeyError, ValueError):
        model = entry.get("model_case2") or entry["model_case"]
        ratio = 1.0
        for k, v in bench.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and model.get(k):
                ratio *= v / model[k]
        return {k: v * ratio if isinstance(v, (int, float)) else v for k, v in runs[-1][1].items()}


def _spread(run) -> list[tuple[float, float]]:
    """Each launch's (spread ratio, heaviest probe warp) of a model run ((1.0, 0.0) where it has none)."""
    launches, _, extra = run
    return [tuple(x) for x in extra.get("spread") or [(1.0, 0.0)] * len(launches)]


def bench_launch(dry, mode, i: int, kernel: str):
    """The bench-shape launch (kernel, grid, block, dynamic shared) matching model launch i: the
    i-th if it runs the same kernel, else that kernel's first; None without a dry run (mode "full")."""
    if not dry or mode == "full":
        return None
    return dry[i] if i < len(dry) and dry[i][0] == kernel else next((d for d in dry if d[0] == kernel), None)


def observation(kata, entry: dict, lib: dict, dry, dry_error: str, runs: list, stopped: bool,
                ptx: str, filename: str, registers: dict | None = None, out_of_budget: bool = False,
                bench_heaviest: float | None = None, dry_buffers: list | None = None) -> Observation:
    """runs: [(Profile launches, cost, extra)] of one or two model runs (the second at a larger
    shape); extra (observe.model_run) carries the heaviest item's work and the probe's launches;
    bench_heaviest: the GPU's inputs' heaviest item (heavy.bench_heaviest)."""
    import math

    from harness.emulator.ptx import load_ptx

    module = load_ptx(ptx, filename)
    batches = static.load_batches(module.code, list(module.functions.values()))
    bench = dict(entry["case"])
    cost_bench = _bench_cost(kata, bench, entry, runs)
    key = lib["scale_by"]
    work = [max(1.0, float(r[1].get(key, 0) or 0)) for r in runs]
    wb = max(1.0, float(cost_bench.get(key, 0) or 0))
    foot = float(cost_bench.get("bytes", 1) or 1)
    benches = [[bench_launch(dry, lib.get("mode"), i, L["kernel"]) for i, L in enumerate(r[0])] for r in runs]
    summaries = [[_launch(L, float(r[1].get("bytes", 1) or 1) / foot, registers or {}, batches, f,
                          int(np.prod(b[1])) if b is not None else None)
                  for L, f, b in zip(r[0], _spread(r), bl)] for r, bl in zip(runs, benches)]
    last = summaries[-1]
    if len(runs) == 2 and [L.kernel for L in summaries[0]] == [L.kernel for L in last] and work[1] > work[0]:
        e = _shape_exponent(bench, entry["model_case"], entry.get("model_case2") or {})
        if e is None:  # the shapes differ other than by one factor: along the cost model's work
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
    elif all(L.blocks_run >= L.blocks_total for L in launches):
        method = "complete"
    else:
        method = "sampled"
    extra = runs[-1][2] if runs else {}
    probes = [_launch(P, float(runs[-1][1].get("bytes", 1) or 1) / foot, registers or {}, batches)
              for P in extra.get("probe") or []]
    if probes and [P.kernel for P in probes] != [L.kernel for L in launches]:
        probes = [next((P for P in probes if P.kernel == L.kernel), None) for L in launches]
    if not probes and how == "one":  # a whole-grid run: the watched blocks' own counts (heavy.py)
        probes = [_watched(L, S) for L, S in zip(runs[-1][0], launches)]
    seen = extra.get("heavy")
    ratio = bench_heaviest / seen if bench_heaviest and seen else 1.0
    return Observation(case=bench, model_case=model_case, model_case2=entry.get("model_case2"), method=method,
                       mode=lib["mode"], per_block=bool(lib.get("per_block")), work_ratio=wb / work[-1], runs=how,
                       dry=[tuple(d) for d in dry], dry_error=dry_error, launches=launches, stopped=stopped,
                       cost_bench=cost_bench, out_of_budget=out_of_budget, probes=probes, heavy_ratio=ratio,
                       dry_buffers=list(dry_buffers or []))
