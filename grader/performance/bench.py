"""Benchmark runs and their rendering: time a submission over a kata's bench shapes on the GPU,
and turn the rows into a table, markdown, JSON values and a roofline plot.

`kata bench` (grader/cli/bench.py) and lab/gpu_suite.py call this; it needs a GPU to time, but
the rendering works on any machine.
"""
from __future__ import annotations

import importlib.util
import math
from dataclasses import asdict, is_dataclass
from pathlib import Path

from grader.errors import UsageError


def load_submission(folder: Path, kata_id: str):
    """(compile result with cubin, launch function, launch.py path) of a kernel.cu + launch.py folder."""
    from harness.frontends.nvrtc import compile as nvrtc_compile

    kernel, launch_py = folder / "kernel.cu", folder / "launch.py"
    if not kernel.is_file():
        raise UsageError(f"{kernel}: missing; a submission folder holds kernel.cu and launch.py",
                         hint=f"`kata start {kata_id}` makes one")
    if not launch_py.is_file():
        from grader.catalog import load

        launch_py = load(kata_id).file("launch.py")  # the kata's default plan
    compiled = nvrtc_compile(kernel.read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location(f"kata_launch_{kata_id.replace('-', '_')}", launch_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return compiled, module.launch, launch_py


def bench_jobs(targets, kata_id: str | None = None) -> list[tuple]:
    """(kata, folder, label, isolated) for each target of `kata bench`: a folder is a learner's
    workspace (its kata from kata_id, its .kata marker or its name), graded in full; anything else
    is a kata id whose reference solution is timed. No targets: every kata's solution."""
    from grader import catalog
    from grader.grading.workspace import read_marker

    jobs = []
    for t in targets or catalog.ids():
        if Path(t).is_dir():
            folder = Path(t)
            kid = kata_id or read_marker(folder.resolve()) or folder.resolve().name
            jobs.append((catalog.load(kid), folder, str(folder), True))
        else:
            k = catalog.load(t)
            jobs.append((k, k.solution_dir, "solution", False))
    return jobs


def bench_one(kata, folder: Path, *, backend, calibration, policy=None, label: str | None = None) -> dict:
    """Time one submission folder of `kata` in this process (the catalogue's own solutions); a
    JSON-ready row (never raises for the learner's errors). A learner's workspace is graded in full
    by the pipeline instead, its row made by graded_row."""
    from grader.performance.measured import performance_stage
    from harness.measure.timing import TimingPolicy

    row = {"kata": kata.id, "submission": label or str(folder), "metric": kata.bench.metric}
    try:
        compiled, launch_fn, launch_py = load_submission(folder, kata.id)
    except Exception as exc:  # a broken launch.py is reported in its row, the others still run
        return {**row, "error": f"{type(exc).__name__}: {exc}"}
    if not compiled.ok:
        return {**row, "error": "compile error: " + "; ".join(d.message for d in compiled.errors[:2])}
    try:
        res = performance_stage(kata, compiled, launch_fn, launch_file=launch_py, backend=backend,
                                calibration=calibration, policy=policy or TimingPolicy())
    except Exception as exc:
        return {**row, "error": f"{type(exc).__name__}: {exc}"}
    return {**row, **to_json(res)}


def graded_row(kata, folder: Path, report=None, error: Exception | None = None, label: str | None = None) -> dict:
    """The row of a workspace graded in full on the GPU (correctness first, the learner's code in
    the pipeline's worker process): its GradeReport, or the exception the grade raised."""
    row = {"kata": kata.id, "submission": label or str(folder), "metric": kata.bench.metric}
    if error is not None:
        return {**row, "error": f"{type(error).__name__}: {error}"}
    if report.performance is None:
        return {**row, "error": f"{report.verdict} at {report.stage}: {report.headline}"}
    return {**row, **to_json(report.performance)}


def to_json(obj):
    """Dataclasses (frozen results) to plain JSON values; inf/nan become null."""
    if is_dataclass(obj):
        return {k: to_json(v) for k, v in asdict(obj).items()}
    if isinstance(obj, dict):
        return {str(k): to_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        return obj.item()
    return obj


def table_rows(rows: list[dict]) -> list[list[str]]:
    """kata · submission · case · median · score · library · tier · flags, as strings."""
    out = []
    for r in rows:
        if r.get("error"):
            out.append([r["kata"], r["submission"], "-", "-", "-", "-", "error", r["error"][:80]])
            continue
        unit = r["metric"]
        for c in r["cases"]:
            fmt = (lambda v: "-" if v is None else f"{v:.0%}") if unit == "roofline" else \
                (lambda v: "-" if v is None else f"{v:.2f}" + (" GTEPS" if unit == "gteps" else "x"))
            med = c["kernel"]["stats"]["median"]
            libs = c.get("libraries") or []
            lib = fmt(c["score"]["baseline_value"]) + (f" ({libs[0][0]})" if len(libs) > 1 else "")
            out.append([r["kata"], r["submission"], _case_text(c["case"]), f"{med * 1e3:.3f} ms",
                        fmt(c["score"]["value"]), lib,
                        r["summary"]["tier"] if r.get("summary") else "-",
                        "; ".join(c["score"]["flags"] + c["kernel"]["flags"])[:80]])
    return out


def _case_text(case: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in case.items())


def markdown_table(rows: list[dict]) -> str:
    head = ["kata", "submission", "case", "median", "score", "library", "tier", "flags"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines) + "\n"


def roofline_plot(rows: list[dict], ceilings: dict, path: Path, title: str = "kata bench") -> Path | None:
    """Log-log roofline: memory and fp32/bf16 roofs, each case's kernel (filled) and library (hollow).

    Cases without FLOPs (counting, graph) sit at intensity 1/64 with their score's height below
    the roof, so the vertical gap is the score either way."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    B, P = ceilings["bandwidth"], ceilings["fp32"]
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [2.0 ** e for e in range(-7, 11)]
    ax.plot(xs, [min(P, x * B) / 1e12 for x in xs], "k-", label=f"fp32 roof ({B / 1e12:.2f} TB/s, {P / 1e12:.0f} TFLOP/s)")
    if ceilings.get("bf16"):
        ax.plot(xs, [min(ceilings["bf16"], x * B) / 1e12 for x in xs], "k--", lw=0.8, label="bf16 tensor-core roof")
    marks = iter("osD^vP*Xh<>p")
    for r in rows:
        if r.get("error"):
            continue
        m = next(marks, "o")
        for c in r["cases"]:
            cost_b = c["score"]["achieved_bandwidth"] * c["kernel"]["stats"]["median"]
            flops = c["score"]["achieved_flops"] * c["kernel"]["stats"]["median"]
            x = flops / cost_b if flops > 0 and cost_b > 0 else 1 / 64
            roof = min(P, x * B)
            frac = c["score"]["value"] if r["metric"] == "roofline" else c["score"]["roofline_s"] / c["kernel"]["stats"]["median"]
            line = ax.plot([x], [roof * frac / 1e12], m, ms=8, label=f"{r['kata']} · {r['submission']}")[0]
            if c.get("baseline"):
                bfrac = c["score"]["roofline_s"] / c["baseline"]["stats"]["median"]
                ax.plot([x], [roof * bfrac / 1e12], m, ms=10, mfc="none", color=line.get_color(),
                        label=f"{r['kata']} · library")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / compulsory byte)")
    ax.set_ylabel("TFLOP/s (height below the roof = fraction of roofline)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
