"""Commands `kata bench [ID ...] [DIR]` and `kata calibrate`: parse, call grader.performance.bench, render.

`kata bench` times kata solutions (or a workspace) over each kata's bench shapes on the GPU,
prints a table, writes JSON and draws a roofline plot with the kernel, the library baseline and
the calibrated ceilings. It needs a GPU: on a CPU-only machine `kata grade` shows the
memory-efficiency report instead, and no command ever prints a time from the emulator.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from grader.performance.bench import (bench_jobs, bench_one, graded_row, markdown_table, roofline_plot, table_rows,
                                      to_json)
from grader.cli._errors import handled
from grader.errors import EnvironmentProblem


def _gpu():
    from harness.backends.gpu import GpuBackend, GpuUnavailable

    try:
        return GpuBackend()
    except GpuUnavailable as exc:
        raise EnvironmentProblem(f"kata bench and kata calibrate need a CUDA GPU: {exc}",
                                 hint="on this machine `kata grade --backend cpu` reports memory "
                                      "efficiency instead (no times)") from None


@click.command("bench")
@click.argument("targets", nargs=-1)
@click.option("--kata", "kata_id", help="the kata a DIR submission solves (default: the folder's name)")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("kata-bench"), show_default=True,
              help="folder for bench.json, bench.md and roofline.png")
@click.option("--backend", type=click.Choice(["gpu", "cpu"]), default="gpu", show_default=True,
              help="cpu: the H200 model's estimates (labelled as such), one check at the bench shape scaled down")
@handled
def bench_command(targets, kata_id, out_dir, backend):
    """Time solutions (ID ...) or a workspace (DIR) over the bench shapes on the GPU.

    \b
      kata bench                 every kata's reference solution
      kata bench reduce scan     those katas' solutions
      kata bench ./my-reduce     a workspace, graded in full first (kata from --kata, the
                                 workspace's marker, or the folder's name)
      kata bench ./my-reduce --backend cpu
                                 no GPU: estimates for the H200 from kata's performance model
    """
    from grader.terminal import Terminal
    from rich.table import Table

    from harness.measure import calibrate

    jobs = bench_jobs(targets, kata_id)
    if backend == "cpu":
        _bench_cpu(jobs, out_dir)
        return
    backend = _gpu()
    cal, fresh = calibrate.load_or_calibrate(backend)
    console = Terminal()
    console.print(("calibrated now: " if fresh else "calibration: ") + cal.describe())
    rows = [_graded(k, folder, label) if iso else bench_one(k, folder, backend=backend, calibration=cal, label=label)
            for k, folder, label, iso in jobs]
    table = Table("kata", "submission", "case", "median", "score", "library", "tier", "flags")
    for cells in table_rows(rows):
        table.add_row(*cells)
    console.print(table)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"gpu": cal.gpu, "driver": cal.driver, "calibration": to_json(cal), "rows": rows}
    (out_dir / "bench.json").write_text(json.dumps(doc, indent=1))
    (out_dir / "bench.md").write_text(markdown_table(rows))
    plot = roofline_plot(rows, {"bandwidth": cal.bandwidth, "fp32": cal.fp32, "bf16": cal.bf16},
                         out_dir / "roofline.png", f"kata bench on {cal.gpu}")
    console.print(f"wrote {out_dir / 'bench.json'}, {out_dir / 'bench.md'}" + (f", {plot}" if plot else ""))
    if any(r.get("error") for r in rows):
        raise SystemExit(1)


def _graded(kata, folder: Path, label: str | None) -> dict:
    """A learner's workspace: the whole GPU grade, its code in the pipeline's worker process."""
    from grader import pipeline

    try:
        report = pipeline.grade(kata.id, folder, backend="gpu")
    except Exception as exc:  # a row says what went wrong; the other rows still run
        return graded_row(kata, folder, error=exc, label=label)
    return graded_row(kata, folder, report, label=label)


def _bench_cpu(jobs, out_dir: Path) -> None:
    from grader.terminal import Terminal
    from rich.table import Table

    from grader.performance.model import LABEL, bench_cpu

    console = Terminal()
    console.print(LABEL)
    rows = [bench_cpu.bench_row(k, folder, label) for k, folder, label, _ in jobs]
    table = Table(*bench_cpu.HEAD)
    for cells in bench_cpu.table_rows(rows):
        table.add_row(*cells)
    console.print(table)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "bench.json").write_text(json.dumps({"gpu": "estimate: " + LABEL, "rows": rows}, indent=1))
    (out_dir / "bench.md").write_text(bench_cpu.markdown(rows))
    console.print(f"wrote {out_dir / 'bench.json'}, {out_dir / 'bench.md'}")
    if any(r.get("error") for r in rows):
        raise SystemExit(1)


@click.command("calibrate")
@click.option("--show", is_flag=True, help="print the cached calibration without measuring")
@handled
def calibrate_command(show):
    """Measure this GPU's copy/read bandwidth and fp32/bf16 peaks; every later grade scores against them."""
    from harness.measure import calibrate

    backend = _gpu()
    if show:
        cal = calibrate.load_cached(backend.facts.name, int(backend.driver_version))
        click.echo(cal.describe() if cal else "not calibrated yet: run `kata calibrate`")
        return
    cal = calibrate.calibrate(backend)
    path = calibrate.save(cal)
    click.echo(cal.describe())
    click.echo(f"saved to {path}")


commands = [bench_command, calibrate_command]
