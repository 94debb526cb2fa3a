"""The model's terms: one class per resource a launch may be bound by, each carrying its cost (the
seconds the resource alone would need), what the learner reads when it is the bound (its bound
text), what would move it (its advice), and which per-instruction cost its lines are ranked by.
Adding a term is a class here and its arithmetic in estimate.py; nothing else names it."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PcCost:
    """One instruction's share of each resource at the bench shape (for line attribution)."""

    file: str | None
    line: int | None
    op: str
    instr: float  # warp instructions (SASS-equivalent)
    dram: float  # bytes from DRAM
    shared: float  # shared-memory and L1 wavefronts
    stall: float  # seconds of memory round trips, summed over warps
    atomic: float  # global atomic requests


@dataclass(frozen=True)
class LaunchCost:
    """One bench-shape launch: its geometry, each term's seconds and each instruction's costs."""

    kernel: str
    grid: tuple
    block: tuple
    blocks: int
    bps: int  # resident blocks per SM
    warps_per_sm: int
    occupancy: object  # grader.performance.occupancy.OccupancyResult, or None without a ptxas report
    terms: dict  # term key -> seconds
    per_pc: dict  # pc -> PcCost
    dram_bytes: float
    instructions: float
    waves: int
    loads_in_flight: tuple  # (global loads in flight per warp, bytes in flight per warp)
    same_address: float  # lanes serialised on the most-hit address
    shared_wavefronts: float
    shared_requests: float
    atomic_chain: float = 0.0  # the longest chain of read-modify-writes on one L2 atomic unit


@dataclass(frozen=True)
class Context:
    """What a bound's text and advice may quote: the case's launches and totals."""

    launches: list  # LaunchCost
    utilisation: float  # of the bound resource
    compulsory_bytes: float
    dram_bytes: float
    launch_s: float


class Term:
    key = ""
    name = ""
    attribute: str | None = None  # the PcCost field its lines are ranked by

    def bound(self, c: Context) -> str:
        return self.key

    def advice(self, c: Context) -> str:
        return ""


_COALESCE = ("more bytes reach DRAM than the problem needs: coalesce the accesses (neighbouring threads, "
             "neighbouring addresses) and reuse data through shared memory or registers")


class Dram(Term):
    key, name, attribute = "dram", "DRAM", "dram"

    def bound(self, c):
        extra = (f", {c.dram_bytes / c.compulsory_bytes:.1f}x the compulsory bytes"
                 if c.compulsory_bytes and c.dram_bytes > 1.15 * c.compulsory_bytes else "")
        return f"DRAM {c.utilisation:.0%} busy{extra}"

    def advice(self, c):
        if c.compulsory_bytes and c.dram_bytes > 1.3 * c.compulsory_bytes:
            return _COALESCE
        return "at the memory ceiling: only moving fewer bytes (fewer passes, fused stages) would help"


class L2(Dram):
    key, name = "l2", "L2"

    def bound(self, c):
        return f"L2 bandwidth {c.utilisation:.0%} busy"


class Issue(Term):
    key, name, attribute = "issue", "instruction issue", "instr"

    def bound(self, c):
        instr = sum(t.instructions for t in c.launches) * 32
        per = f"{instr / c.compulsory_bytes:.1f} thread instructions per compulsory byte" if c.compulsory_bytes else ""
        return f"issue-bound: {per}, schedulers {c.utilisation:.0%} busy"

    def advice(self, c):
        return ("fewer instructions per element: wider loads (float4), less index arithmetic, more outputs "
                "per thread to amortise the loop overhead")


class Pipe(Issue):
    def __init__(self, pipe: str):
        self.pipe = pipe
        self.key, self.name = f"pipe:{pipe}", f"{pipe.upper()} pipe"

    def bound(self, c):
        if self.pipe == "wgmma":
            return f"tensor cores (wgmma) {c.utilisation:.0%} busy"
        return f"{self.name} {c.utilisation:.0%} busy"

    def advice(self, c):
        if self.pipe in ("int", "lsu"):
            return super().advice(c)
        if self.pipe == "fp32":
            return "at the FMA pipe's ceiling: only fewer FLOPs (or tensor cores, where the kata allows) would help"
        if self.pipe == "wgmma":
            return ("at the tensor cores' ceiling (wgmma at the power-capped sustained rate): only fewer FLOPs, "
                    "or a narrower type where the kata allows (fp8 doubles bf16's rate), would help")
        return f"the {self.pipe} pipe is the busiest: use fewer of its instructions per element"


class Shared(Term):
    key, name, attribute = "shared", "shared memory / L1", "shared"

    def bound(self, c):
        req = sum(t.shared_requests for t in c.launches)
        wf = sum(t.shared_wavefronts for t in c.launches)
        conflict = f", {wf / req:.1f} wavefronts per shared request" if req else ""
        return f"shared memory / L1 wavefronts {c.utilisation:.0%} busy{conflict}"

    def advice(self, c):
        return ("fewer shared-memory wavefronts per FMA: register tiling (more outputs per thread) reuses each "
                "shared load, and padding or a swizzle removes bank conflicts")


class Atomic(Term):
    key, name, attribute = "atomic", "same-address atomics", "atomic"

    def bound(self, c):
        same = max(t.same_address for t in c.launches)
        chain = max(t.atomic_chain for t in c.launches)
        if chain > 1.5 * same:  # lanes of one warp on one address, many warps on a few lines
            return (f"same-address atomics: a warp's lanes on one address are applied one after another, "
                    f"{chain:,.0f} in turn on the busiest L2 atomic unit")
        return f"same-address atomics: {same:,.0f} atomics serialised on one address"

    def advice(self, c):
        return "combine in registers and shared memory first: one atomic per block (or per warp), not per element"


class Latency(Term):
    key, name, attribute = "latency", "latency", "stall"

    def bound(self, c):
        t = max(c.launches, key=lambda t: t.terms["latency"])
        n, b = t.loads_in_flight
        what = f"{n:.0f} load{'s' if round(n) != 1 else ''} in flight per warp ({b:,.0f} B)" if n else "dependent chain"
        return f"latency-bound: {what}, {t.warps_per_sm} warps per SM"

    def advice(self, c):
        return ("more bytes in flight per SM: several independent loads per thread before the first use "
                "(unrolled loops, float4, more elements per thread) or more resident warps")


class Launch(Term):
    key, name = "launch", "launch overhead"

    def bound(self, c):
        n = len(c.launches)
        return f"launch overhead: {n} launch{'es' if n != 1 else ''}, {c.utilisation:.0%} of the time"

    def advice(self, c):
        each = c.launch_s / max(1, len(c.launches)) * 1e6
        if len(c.launches) <= 1:
            return (f"one launch already; launching it and filling the GPU cost ~{each:.1f} us of this estimate, "
                    f"most of the time at this size: only fusing this work with a neighbouring kernel removes it")
        return f"fewer, larger launches: {len(c.launches)} launches each pay ~{each:.1f} us"


_BY_KEY = {t.key: t for t in (Dram(), L2(), Issue(), Shared(), Atomic(), Latency(), Launch())}


def term(key: str) -> Term:
    """The term of a resource key ("dram", "pipe:fp32", ...)."""
    return Pipe(key[5:]) if key.startswith("pipe:") else _BY_KEY.get(key, Term())
