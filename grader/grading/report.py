"""A GradeReport for people (rich, in the terminal) and for programs (one JSON object).

Terminal order: the verdict first, then what failed (the shrunk case, a few mismatches, the seed and
the command that reruns it), findings with the learner's source line quoted, the static resources,
the memory counters (CPU) or the performance score (GPU), and which backend ran and why.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from grader.grading.grade_notes import count
from grader.grading.safe_text import SafeConsole
from grader.results import GradeReport
from grader.terminal import Terminal

_VERDICT_STYLE = {"pass": ("PASS", "bold green"), "fail": ("FAIL", "bold red"), "error": ("ERROR", "bold yellow")}
MAX_FINDINGS = 8


def render(report: GradeReport, console: Console | None = None, extra: str | None = None) -> None:
    console = SafeConsole(console or Terminal())  # the learner's text, cleaned and capped
    label, style = _VERDICT_STYLE.get(report.verdict, ("?", "bold"))
    head = Text()
    head.append(f" {label} ", style=f"{style} reverse")
    head.append(f"  {report.kata} · {report.title}   ", style="bold")
    head.append(report.headline)
    console.print(head)

    c = report.compile
    if not c.ok:
        _compile(console, report)
    failure = report.correctness.failure if report.correctness else None
    if failure is not None:
        if failure.mismatches:
            console.print(f"  mismatches ({failure.mismatch_count} in total, first {len(failure.mismatches)}):")
            for m in failure.mismatches:
                console.print(f"    {m}")
        if failure.problem is not None and failure.problem.source:
            console.print(f"    {failure.problem.line} │ {failure.problem.source}", style="dim")
        if report.verdict == "error" and failure.problem is not None and failure.problem.detail:
            console.print(Text(failure.problem.detail.rstrip(), style="dim"))
            console.print("  this is a bug in kata, not in your kernel: please report it with the lines above",
                          style="yellow")
        origin = {"drawn": "drawn by hypothesis and shrunk", "public": "a public edge case",
                  "hidden": "a hidden case", "requested": "the case you asked for"}.get(failure.origin, failure.origin)
        console.print(f"  case: {origin} · seed {report.seed}")
        console.print(Text(f"  rerun: {failure.rerun}", style="cyan"))
    elif report.correctness is not None:
        cr = report.correctness
        console.print(f"  correctness: {count(cr.cases_run, 'case')} passed ({cr.public} public, {cr.drawn} drawn "
                      f"by hypothesis with seed {cr.seed}" + (f", {cr.hidden} hidden" if cr.hidden else "") + ")")
    if c.ok and c.warnings_shown():
        for d in c.warnings_shown():
            console.print(f"  warning {d.file}:{d.line}: {d.message}", style="yellow")
    _findings(console, report)
    _resources(console, report)
    _memory(console, report)
    _performance(console, report)
    _estimate(console, report)
    for note in report.notes:
        console.print(f"  note: {note}", style="dim")
    compiled_by = f" · compiled by {c.compiler}" if c.compiler else ""
    console.print(f"  backend: {report.backend} ({report.backend_reason}){compiled_by}", style="dim")
    if extra:
        console.print(f"  {extra}", style="dim")


def _compile(console: Console, report: GradeReport) -> None:
    c = report.compile
    source = _source_lines(report)
    errors = [d for d in c.diagnostics if d.severity == "error"]
    for d in errors[:5]:
        if len(errors) > 1 or d.message not in report.headline:  # one error is the headline already
            console.print(f"  {d.file}:{d.line}: error: {d.message}", style="red")
        quoted = source.get(d.line) if d.file == "kernel.cu" and d.line else d.source_line
        if quoted:
            console.print(f"    {d.line} │ {quoted.rstrip()}", style="dim")
    if not c.diagnostics and c.log.strip() and not c.message:
        console.print(c.log.strip()[:2000], style="red")


def _source_lines(report: GradeReport) -> dict[int, str]:
    try:
        lines = (Path(report.workspace) / "kernel.cu").read_text(errors="replace").splitlines()
    except OSError:
        return {}
    return {i + 1: text for i, text in enumerate(lines)}


def _findings(console: Console, report: GradeReport) -> None:
    if not report.findings:
        return
    source = _source_lines(report)
    m = report.memory
    console.print(f"  findings ({m.label}, case {_case(m.case)}):" if m is not None and m.label and m.case
                  else "  findings:", style="bold")
    for f in report.findings[:MAX_FINDINGS]:
        where = f"{Path(f.file).name if f.file else '?'}:{f.line if f.line is not None else '?'}"
        count = f" (x{f.count})" if f.count > 1 else ""
        style = "red" if f.severity == "error" else "yellow"
        console.print(Text(f"    {f.kind} {where}{count}: {f.message}", style=style))
        if f.line in source and (f.file is None or Path(f.file).name == "kernel.cu"):
            console.print(Text(f"      {f.line:>4} │ {source[f.line].rstrip()}", style="dim"))
        if f.other_line in source and f.other_line != f.line:
            console.print(Text(f"      {f.other_line:>4} │ {source[f.other_line].rstrip()}  (the other access)",
                               style="dim"))
    if len(report.findings) > MAX_FINDINGS:
        console.print(f"    ... and {len(report.findings) - MAX_FINDINGS} more (--json lists them all)")


def _resources(console: Console, report: GradeReport) -> None:
    r = report.resources
    if r is None or not r.kernels:
        return
    occ = {o.kernel: o for o in r.occupancy}
    table = Table(title=None, box=None, pad_edge=False, show_edge=False)
    for col in ("kernel", "registers", "shared B", "spills B", "occupancy", "limited by"):
        table.add_column(col, justify="left" if col in ("kernel", "limited by") else "right")
    for k in r.kernels:
        o = occ.get(k.kernel)
        table.add_row(k.kernel, str(k.registers), str(k.shared_bytes), str(k.spill_stores + k.spill_loads),
                      f"{o.fraction:.0%} ({o.block_threads} thr/block)" if o else "-",
                      " and ".join(o.limiters) if o else "-")
    console.print("  resources (ptxas, sm_90):", style="bold")
    console.print(Padding(table, (0, 0, 0, 4), expand=False))


def _case(params: dict | None) -> str:
    return ", ".join(f"{k} = {v}" for k, v in (params or {}).items())


def _memory(console: Console, report: GradeReport) -> None:
    m = report.memory
    if m is not None and m.label and m.report is None:  # a GPU grade's borrowed sanitizer run
        if m.case is not None and not report.findings:
            screened = f"; no findings on {m.screened} more public cases (sanitizer on)" if m.screened else ""
            console.print(f"  {m.label}: no findings on case {_case(m.case)}{screened}")
        if m.note:
            console.print(f"  {m.label}: {m.note}", style="yellow")
        return
    if m is None or m.report is None:
        if m is not None and m.note:
            console.print(f"  memory: {m.note}", style="yellow")
        return
    rep = m.report
    console.print(f"  {rep.label}, case {_case(m.case)}:", style="bold")
    table = Table(box=None, show_header=True, pad_edge=False, show_edge=False)
    table.add_column("counter")
    table.add_column("measured", justify="right")
    table.add_column("ideal", justify="right")
    # Sectors the lanes touched, before any cache: DRAM traffic is the estimate's (its cache model).
    table.add_row("sectors touched x 32 B (no cache)", f"{rep.moved_bytes:,}", f"{rep.compulsory_bytes:,}")
    table.add_row("global load sectors / request", f"{rep.load_sectors_per_request:.2f}",
                  f"{rep.load_ideal_sectors_per_request:.2f}")
    table.add_row("global store sectors / request", f"{rep.store_sectors_per_request:.2f}",
                  f"{rep.store_ideal_sectors_per_request:.2f}")
    table.add_row("shared bank-conflict degree", f"{rep.bank_conflict_degree:.2f}x", "1.00x")
    table.add_row("branch efficiency", f"{rep.branch_efficiency:.0%}", "100%")
    table.add_row("global atomic requests", f"{rep.atomics:,}", "")
    console.print(Padding(table, (0, 0, 0, 4), expand=False))
    for spot in rep.hotspots:
        console.print(f"    {spot}", style="yellow")
    if m.note:
        console.print(f"  {m.note}", style="yellow")


def _performance(console: Console, report: GradeReport) -> None:
    p = report.performance
    if p is None:
        return
    summary = getattr(p, "summary", None)
    if summary is not None and hasattr(summary, "headline"):
        console.print(f"  performance: {summary.headline()}", style="bold")
    for case in getattr(p, "cases", ()) or ():
        label = ", ".join(f"{k} = {v}" for k, v in case.case.items())
        sc, stats = case.score, case.kernel.stats
        base = f"; library {case.baseline.stats.median * 1e3:.3f} ms" if case.baseline is not None else ""
        libs = getattr(case, "libraries", ())
        if len(libs) > 1:  # name each: the fastest is the one scored against
            base = "; libraries " + ", ".join(f"{label} {s * 1e3:.3f} ms" for label, s in libs)
        console.print(f"    {label}: median {stats.median * 1e3:.3f} ms over {len(case.kernel.samples)} samples, "
                      f"{sc.achieved_bandwidth / 1e9:,.0f} GB/s of compulsory traffic, "
                      f"{sc.value:.2f} ({sc.metric}){base}")
    if getattr(p, "error", None):
        console.print(f"  performance: {p.error}", style="yellow")
    for flag in getattr(p, "flags", ())[:5]:
        console.print(f"    {flag}", style="yellow")


def _estimate(console: Console, report: GradeReport) -> None:
    e = report.estimate
    if e is None:
        return
    head, *rest = e.lines()
    console.print(f"  {head}", style="bold")
    for line in rest:
        console.print(f"  {line}")
    for case in getattr(report.performance, "cases", ()) or ():  # a GPU grade: measurement beside estimate
        est = next((c for c in e.cases if c.case == case.case), None)
        if est is None or not est.seconds:
            continue
        ratio = case.kernel.stats.median / est.seconds
        far = "  (far from the estimate: the model misses something here)" if not 0.5 <= ratio <= 2.0 else ""
        label = ", ".join(f"{k} = {v}" for k, v in case.case.items())
        console.print(f"    {label}: measured {case.kernel.stats.median * 1e3:.3f} ms = {ratio:.2f}x the estimate{far}",
                      style="yellow" if far else "")


# -- JSON -------------------------------------------------------------------------------------

def to_dict(report: GradeReport) -> dict:
    failure = report.correctness.failure if report.correctness else None
    c = report.compile
    return {
        "kata": report.kata,
        "backend": report.backend,
        "backend_reason": report.backend_reason,
        "verdict": report.verdict,
        "stage": report.stage,
        "headline": report.headline,
        "reasons": list(report.reasons),
        "workspace": report.workspace,
        "compile": {"ok": c.ok, "message": c.message or None, "compiler": c.compiler or None,
                    "diagnostics": [{"file": d.file, "line": d.line, "severity": d.severity,
                                     "message": d.message} for d in c.diagnostics]},
        "resources": _plain(report.resources.kernels) if report.resources else [],
        "occupancy": _plain(report.resources.occupancy) if report.resources else [],
        "correctness": None if report.correctness is None else {
            "cases_run": report.correctness.cases_run, "public": report.correctness.public,
            "drawn": report.correctness.drawn, "hidden": report.correctness.hidden,
            "seed": report.correctness.seed,
            "first_failure": None if failure is None else {
                "case": _plain(failure.params), "origin": failure.origin, "reason": failure.reason,
                "message": failure.headline, "mismatches": [str(m) for m in failure.mismatches],
                "mismatch_count": failure.mismatch_count, "rerun": failure.rerun,
                "problem": _plain(failure.problem)}},
        "findings": [{"kind": f.kind, "severity": f.severity, "file": Path(f.file).name if f.file else None,
                      "line": f.line, "message": f.message, "count": f.count} for f in report.findings],
        "counters": None if report.memory is None or report.memory.report is None else _counters(report.memory.report),
        "sanitizer": None if report.memory is None or report.memory.case is None else {
            "ran_on": "cpu emulator", "label": report.memory.label or "sanitizer",
            "case": _plain(report.memory.case), "note": report.memory.note or None,
            "public_cases_screened": report.memory.screened},
        "performance": _plain(report.performance),
        "estimate": _plain(report.estimate),
        "notes": list(report.notes),
    }


def _counters(memory) -> dict:
    """The counters' totals; the per-line table is the HTML grade's (grader/performance/report_html.py)."""
    plain = _plain(memory)
    plain.pop("per_line", None)
    return plain


def to_json(report: GradeReport) -> str:
    return json.dumps(to_dict(report), indent=2, allow_nan=False)


def _plain(value, depth: int = 0):
    """JSON-able data from dataclasses, numpy values and containers (NaN and inf become null)."""
    if depth > 12:
        return str(value)
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return _plain(value.tolist(), depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
                if f.name != "detail"}
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, Path):
        return str(value)
    return str(value)
