"""A grade you can look at: `kata grade --html` writes one self-contained page (no scripts, no
network): the learner's kernel with each line's share of the time and its counters, the roofline
with the estimate (and on a GPU the measurement), the occupancy budget, and the kernel placed on
a DRAM-busy vs SM-busy grid with its bound named.

The figures are inline SVG whose geometry is computed here; grade.html.j2 only lays them out.
Every learner string reaches the page through jinja2's autoescape.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from grader.results import GradeReport

PAGE_NAME = "kata-grade.html"
#: the roofline's axes: arithmetic intensity (flop per compulsory byte) and flop/s, log scales
AI_RANGE = (1 / 16, 256.0)
PLOT = dict(w=400, h=280, left=60, right=20, top=20, bottom=44)


@dataclass
class SourceLine:
    number: int
    text: str
    share: float | None = None  # of the bound resource's time, from the model (0..1)
    what: str = ""  # what the line does there (ld, fma, ...)
    sectors: str = ""  # "16.0 / 4.0" global sectors per request, measured / ideal
    bank: str = ""  # shared-memory bank-conflict degree, "4.00x"
    branch: str = ""  # branch efficiency, "91%"
    findings: list[str] = field(default_factory=list)


@dataclass
class Point:
    x: float
    y: float
    label: str
    kind: str  # "estimate" | "measured"


def write(report: GradeReport, path: Path | None = None) -> Path:
    path = Path(path) if path is not None else Path(report.workspace) / PAGE_NAME
    path.write_text(render(report), encoding="utf-8")
    return path


def render(report: GradeReport) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(loader=PackageLoader("grader.performance", "templates"), autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    return env.get_template("grade.html.j2").render(r=report, **page(report))


def page(report: GradeReport) -> dict:
    """Everything the template shows, computed; every figure may be None (nothing to show)."""
    case = _estimate_case(report)
    return dict(source=_source(report, case), source_name=_kernel_name(report), estimate_case=case,
                roofline=_roofline(report, case), occupancy=_occupancy(report), grid=_grid(case),
                memory=report.memory.report if report.memory is not None else None)


def _kernel_name(report: GradeReport) -> str:
    folder = Path(report.workspace)
    return next((n for n in ("kernel.cu", "kernel.py") if (folder / n).is_file()), "kernel.cu")


def _estimate_case(report: GradeReport):
    e = report.estimate
    if e is None or not e.cases:
        return None
    return max(e.cases, key=lambda c: c.seconds)  # the case that costs most: the one worth reading


def _source(report: GradeReport, case) -> list[SourceLine]:
    name = _kernel_name(report)
    try:
        text = (Path(report.workspace) / name).read_text(errors="replace")
    except OSError:
        return []
    rows = [SourceLine(i, line) for i, line in enumerate(text.splitlines(), start=1)]
    by_line = {r.number: r for r in rows}
    for where, share, what in (case.lines if case is not None else ()):
        file, _, line = str(where).rpartition(":")
        if Path(file).name == name and line.isdigit() and int(line) in by_line:
            row = by_line[int(line)]
            row.share, row.what = (row.share or 0.0) + float(share), what
    memory = report.memory.report if report.memory is not None else None
    for c in getattr(memory, "per_line", ()) or ():
        row = by_line.get(c.line)
        if row is None or Path(c.file).name != name:
            continue
        parts = []
        if c.load_sectors_per_request is not None:
            parts.append(f"ld {c.load_sectors_per_request:.1f} / {c.load_ideal_sectors_per_request:.1f}")
        if c.store_sectors_per_request is not None:
            parts.append(f"st {c.store_sectors_per_request:.1f} / {c.store_ideal_sectors_per_request:.1f}")
        row.sectors = " · ".join(parts)
        row.bank = f"{c.bank_conflict_degree:.2f}x" if c.bank_conflict_degree is not None else ""
        row.branch = f"{c.branch_efficiency:.0%}" if c.branch_efficiency is not None else ""
    for f in report.findings:
        if f.line in by_line and (f.file is None or Path(f.file).name == name):
            by_line[f.line].findings.append(f"{f.kind}: {f.message}")
    return rows


def _scale(value: float, lo: float, hi: float, size: float) -> float:
    return (math.log10(value) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * size


def _roofline(report: GradeReport, case) -> dict | None:
    """The H200's roofline (calibrated ceilings) with the estimate and any GPU measurement."""
    from grader.performance.model import h200

    if case is None:
        return None
    bw, peak = h200.READ_BYTES_PER_S, h200.FP32_FLOPS
    flops = _flops(report, case.case)
    nbytes = case.compulsory_bytes or 1.0
    ai = min(max(flops / nbytes, AI_RANGE[0]), AI_RANGE[1])
    roof_s = max(nbytes / bw, flops / peak)

    def height(seconds: float) -> float:  # a share of the ceiling at this intensity, drawn as flop/s
        return min(bw * ai, peak) * min(1.0, roof_s / seconds)

    points = [Point(ai, height(case.seconds), f"estimate {_ms(case.seconds)}", "estimate")]
    for measured in getattr(report.performance, "cases", ()) or ():
        if measured.case == case.case:
            points.append(Point(ai, height(measured.kernel.stats.median),
                                f"measured {_ms(measured.kernel.stats.median)}", "measured"))
    w, h = PLOT["w"] - PLOT["left"] - PLOT["right"], PLOT["h"] - PLOT["top"] - PLOT["bottom"]
    y_lo, y_hi = bw * AI_RANGE[0] / 8, peak * 2

    def xy(x: float, y: float) -> tuple[float, float]:
        return (round(PLOT["left"] + _scale(x, *AI_RANGE, w), 1),
                round(PLOT["top"] + h - _scale(max(y, y_lo), y_lo, y_hi, h), 1))

    ridge = peak / bw
    roof = [xy(AI_RANGE[0], bw * AI_RANGE[0]), xy(ridge, peak), xy(AI_RANGE[1], peak)]
    xticks = [(xy(v, y_lo)[0], _num(v)) for v in (1 / 16, 1 / 4, 1, 4, 16, 64, 256)]
    yticks = [(xy(AI_RANGE[0], v)[1], f"{v / 1e12:g} T") for v in (1e11, 1e12, 1e13) if y_lo <= v <= y_hi]
    return dict(plot=PLOT, roof=" ".join(f"{x},{y}" for x, y in roof), xticks=xticks, yticks=yticks,
                points=[(*xy(p.x, p.y), p) for p in points], ridge=ridge,
                clamped=flops <= 0, bw=bw, peak=peak, axis_y=xy(AI_RANGE[0], y_lo)[1])


def _flops(report: GradeReport, case: dict) -> float:
    try:
        from grader import catalog

        return float(catalog.load(report.kata).reference.cost(**case).get("flops", 0) or 0)
    except Exception:  # noqa: BLE001 - a cost model that needs the inputs' scalars: bytes only
        return 0.0


def _occupancy(report: GradeReport) -> list[dict]:
    """Per kernel: how many blocks per SM each resource allows, the smallest one limiting."""
    out = []
    for o in (report.resources.occupancy if report.resources is not None else ()):
        # each bar: the share of that resource's budget the resident blocks use (the limiter's is full)
        bars = [dict(name=name, blocks=blocks, width=round(100 * min(1.0, o.blocks_per_sm / blocks), 1) if blocks else 100,
                     limits=name in o.limiters, detail=_budget(name, o)) for name, blocks in o.limits.items()]
        out.append(dict(o=o, bars=bars))
    return out


def _budget(name: str, o) -> str:
    return {"registers": f"{o.registers} per thread x {o.block_threads} threads",
            "shared memory": f"{o.shared_bytes:,} B per block",
            "threads": f"{o.block_threads} threads per block",
            "blocks per SM": "the SM's block slots"}.get(name, "")


def _grid(case) -> dict | None:
    """The estimate on a DRAM-busy (x) vs SM-busy (y) square: where the time goes."""
    if case is None:
        return None
    util = case.utilisation
    dram = float(util.get("dram", 0.0))
    sm = max([float(v) for k, v in util.items() if k in ("issue", "shared") or k.startswith("pipe:")] or [0.0])
    size = 200
    return dict(size=size, dram=dram, sm=sm, x=round(30 + dram * size, 1), y=round(10 + (1 - sm) * size, 1),
                bound=case.bound, resource=case.resource)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _num(v: float) -> str:
    return f"1/{round(1 / v)}" if v < 1 else f"{v:g}"
