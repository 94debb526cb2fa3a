"""On the CPU backend the memory-efficiency report stands where a GPU grade's timing would: exact
counts from the emulator's counters (bytes moved against the kata's compulsory bytes, sectors per
request, bank-conflict degree, branch efficiency) and the worst lines, never a time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MEMORY_LABEL = "memory efficiency (CPU emulator: exact counts, not a time)"


@dataclass(frozen=True)
class LineCounters:
    """One source line's counters (the HTML grade's kernel listing)."""

    file: str  # kernel.cu, kernel.py
    line: int
    load_sectors_per_request: float | None  # None: the line has no global loads
    load_ideal_sectors_per_request: float | None
    store_sectors_per_request: float | None
    store_ideal_sectors_per_request: float | None
    bank_conflict_degree: float | None  # shared wavefronts / ideal; None: no shared accesses
    branch_efficiency: float | None  # active lanes / (32 x warp instructions) of the line


@dataclass(frozen=True)
class MemoryReport:
    label: str  # MEMORY_LABEL: says plainly that this is no timing
    case: dict  # the case the counters came from
    compulsory_bytes: int  # the kata's cost model at that case
    requested_bytes: int  # bytes the lanes loaded and stored
    moved_bytes: int  # 32-byte sectors touched x 32: what the memory system moves without cache reuse
    efficiency: float  # compulsory / moved (1.0: every byte moved was needed, once)
    load_sectors_per_request: float
    load_ideal_sectors_per_request: float  # with perfect coalescing
    store_sectors_per_request: float
    store_ideal_sectors_per_request: float
    bank_conflict_degree: float  # shared wavefronts / ideal wavefronts (1.0: conflict-free)
    branch_efficiency: float  # active lanes / (32 x warp instructions)
    atomics: int  # global atomic warp requests
    hotspots: tuple[str, ...]  # "kernel.cu:12: 8.0 sectors per load request, ideal 4.0" (worst first)
    per_line: tuple[LineCounters, ...] = ()  # every counted source line, in line order

    def lines(self) -> list[str]:
        out = [f"{self.label}",
               f"  sectors touched x 32 B (no cache; DRAM bytes are the estimate's) {self.moved_bytes:,} vs "
               f"compulsory {self.compulsory_bytes:,} "
               f"({self.efficiency:.0%} efficient)",
               f"  global loads: {self.load_sectors_per_request:.1f} sectors/request "
               f"(ideal {self.load_ideal_sectors_per_request:.1f}); stores: "
               f"{self.store_sectors_per_request:.1f} (ideal {self.store_ideal_sectors_per_request:.1f})",
               f"  shared memory bank-conflict degree {self.bank_conflict_degree:.2f}x; "
               f"branch efficiency {self.branch_efficiency:.0%}; {self.atomics:,} global atomic requests"]
        out += [f"  {h}" for h in self.hotspots]
        return out


def _ratio(a: int, b: int) -> float:
    return a / b if b else 0.0


def memory_report(counters, case: dict, cost: dict, max_hotspots: int = 3) -> MemoryReport:
    """Summarise emulator counters (harness.emulator.counters.Counters, one per launch of the plan)
    for one case whose cost model is `cost`."""
    totals: dict[str, int] = {}
    lines: dict[tuple, dict[str, int]] = {}
    for c in counters:
        for k, v in c.total.to_dict().items():
            if isinstance(v, (int, np.integer)) and k not in ("line",):
                totals[k] = totals.get(k, 0) + int(v)
        for line, t in c.per_line.items():
            acc = lines.setdefault((t.file, line), {})
            for k, v in t.to_dict().items():
                if isinstance(v, (int, np.integer)) and k != "line":
                    acc[k] = acc.get(k, 0) + int(v)
    g = lambda d, k: d.get(k, 0)  # noqa: E731
    moved = 32 * (g(totals, "global_load_sectors") + g(totals, "global_store_sectors"))
    compulsory = int(cost.get("bytes", 0) or 0)
    spots = []
    for (file, line), d in lines.items():
        if line is None:
            continue
        for kind, have, ideal, req in (("sectors per load request", "global_load_sectors",
                                        "global_load_ideal_sectors", "global_load_requests"),
                                       ("sectors per store request", "global_store_sectors",
                                        "global_store_ideal_sectors", "global_store_requests"),
                                       ("shared wavefronts per request", "shared_wavefronts",
                                        "shared_ideal_wavefronts", "shared_requests")):
            if g(d, req) and g(d, have) > 1.5 * g(d, ideal):
                waste = g(d, have) - g(d, ideal)
                spots.append((waste, f"{file or '?'}:{line}: {_ratio(g(d, have), g(d, req)):.1f} {kind}, "
                                     f"ideal {_ratio(g(d, ideal), g(d, req)):.1f}"))
    spots.sort(key=lambda s: -s[0])
    per_line = tuple(_line_counters(file, line, d) for (file, line), d in
                     sorted(((k, v) for k, v in lines.items() if k[1] is not None), key=lambda kv: (str(kv[0][0]), kv[0][1])))
    return MemoryReport(
        label=MEMORY_LABEL, case=dict(case), compulsory_bytes=compulsory,
        requested_bytes=g(totals, "bytes_read") + g(totals, "bytes_written"), moved_bytes=moved,
        efficiency=_ratio(compulsory, moved),
        load_sectors_per_request=_ratio(g(totals, "global_load_sectors"), g(totals, "global_load_requests")),
        load_ideal_sectors_per_request=_ratio(g(totals, "global_load_ideal_sectors"), g(totals, "global_load_requests")),
        store_sectors_per_request=_ratio(g(totals, "global_store_sectors"), g(totals, "global_store_requests")),
        store_ideal_sectors_per_request=_ratio(g(totals, "global_store_ideal_sectors"),
                                               g(totals, "global_store_requests")),
        bank_conflict_degree=_ratio(g(totals, "shared_wavefronts"), g(totals, "shared_ideal_wavefronts")) or 1.0,
        branch_efficiency=_ratio(g(totals, "active_lanes"), 32 * g(totals, "instructions")),
        atomics=g(totals, "global_atomic_requests"), hotspots=tuple(s for _, s in spots[:max_hotspots]),
        per_line=per_line)


def _line_counters(file, line: int, d: dict) -> LineCounters:
    def per(have: str, req: str):
        return d[have] / d[req] if d.get(req) else None

    return LineCounters(
        file=str(file or "?"), line=int(line),
        load_sectors_per_request=per("global_load_sectors", "global_load_requests"),
        load_ideal_sectors_per_request=per("global_load_ideal_sectors", "global_load_requests"),
        store_sectors_per_request=per("global_store_sectors", "global_store_requests"),
        store_ideal_sectors_per_request=per("global_store_ideal_sectors", "global_store_requests"),
        bank_conflict_degree=per("shared_wavefronts", "shared_ideal_wavefronts") if d.get("shared_requests") else None,
        branch_efficiency=d["active_lanes"] / (32 * d["instructions"]) if d.get("instructions") else None)
