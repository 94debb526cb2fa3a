"""Issue 5's measurements on a GPU in one invocation (budget: under 9 minutes on an H200).

    python lab/gpu_suite.py OUT_DIR [--parts calibrate,solutions,repeat,latency,variants]
                                      [--katas reduce scan ...] [--budget-s 520]

1. calibrate  the GPU's copy/read bandwidth and fp32/bf16 peaks (saved to KATA_HOME's cache)
2. solutions  every kata's solution over its bench shapes, with its library baseline
3. repeat     5 grades of the reduce solution (and --repeat-katas) at bench size: spread of medians
4. latency    per kata, a whole `kata grade --backend gpu` of the solution (grader.pipeline.grade:
              compile with no cache, correctness in the isolated worker, timing), against 10 s;
              bench inputs come from the on-disk cache the solutions part filled (a re-grade)
5. variants   three reduce designs graded in one run, which must rank atomic < tree < float4+shuffle

Writes OUT_DIR/results.json, OUT_DIR/results.md and OUT_DIR/roofline.png. Parts that would not fit
the remaining budget are skipped and say so in the results.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("KATA_HOME", os.path.join(tempfile.gettempdir(), "kata-home"))

VARIANTS = ("atomic_per_element", "shared_tree", "float4_shuffle")


def _solutions(args, backend, cal, log):
    from grader import catalog
    from grader.performance.bench import bench_one

    rows = []
    for kid in args.katas or catalog.ids():
        if _out_of_time(args, 30.0, f"solutions {kid}", log):
            continue
        t0 = time.perf_counter()
        rows.append(bench_one(catalog.load(kid), catalog.load(kid).solution_dir, backend=backend,
                              calibration=cal, label="solution"))
        log(f"solution {kid}: {_short(rows[-1])} ({time.perf_counter() - t0:.1f} s)")
    return rows


def _out_of_time(args, need_s: float, what: str, log) -> bool:
    """True (and noted in the results) when `what` would likely run past the budget."""
    if time.perf_counter() + need_s <= args.deadline:
        return False
    args.skipped.append(f"{what}: skipped, under {need_s:.0f} s of the budget left")
    log(args.skipped[-1])
    return True


def _short(row) -> str:
    if row.get("error"):
        return "ERROR " + row["error"][:160]
    s = row["summary"]
    return f"{s['value']:.3f} ({s['tier']}), library {s['baseline_value']}"


def _repeat(args, backend, cal, log):
    from grader import catalog
    from grader.performance.bench import bench_one

    out = {}
    for kid in args.repeat_katas:
        kata = catalog.load(kid)
        medians, values = [], []
        for i in range(5):
            r = bench_one(kata, kata.solution_dir, backend=backend, calibration=cal, label=f"repeat {i + 1}")
            if r.get("error"):
                out[kid] = {"error": r["error"]}
                break
            medians.append([c["kernel"]["stats"]["median"] for c in r["cases"]])
            values.append(r["summary"]["value"])
        else:
            per_case = [max(m) / min(m) - 1 for m in zip(*medians)]
            out[kid] = {"medians_s": medians, "scores": values,
                        "spread_per_case": per_case, "score_spread": max(values) / min(values) - 1}
            log(f"repeat {kid}: score spread {out[kid]['score_spread']:.2%}, per case "
                + ", ".join(f"{p:.2%}" for p in per_case))
    return out


def _latency(args, backend, cal, log):
    """`grader.pipeline.grade` of each solution on the GPU, as `kata grade` runs it: compile (a
    fresh compile cache), correctness in the isolated worker, then the performance stage."""
    import shutil

    from grader.performance import bench_inputs
    from grader import catalog
    from grader import pipeline
    from harness.measure import calibrate

    out = {}
    for kid in args.katas or catalog.ids():
        if _out_of_time(args, 30.0, f"latency {kid}", log):
            continue
        kata = catalog.load(kid)
        home = tempfile.mkdtemp(prefix="kata-latency-")
        old_home = os.environ["KATA_HOME"]
        shutil.copy(calibrate.cache_path(), Path(home) / "calibration.json")  # calibrated once, as users are
        # Bench inputs stay warm (made by the solutions part, as by a learner's first grade); the
        # compile cache starts empty.
        if bench_inputs.cache_root() and bench_inputs.cache_root().is_dir():
            (Path(home) / "cache").mkdir()
            (Path(home) / "cache" / "bench").symlink_to(bench_inputs.cache_root())
        os.environ["KATA_HOME"] = home
        try:
            t0 = time.perf_counter()
            report = pipeline.grade(kid, kata.solution_dir, backend="gpu")
            total = time.perf_counter() - t0
        except Exception as exc:
            out[kid] = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"latency {kid}: ERROR {exc}")
            continue
        finally:
            os.environ["KATA_HOME"] = old_home
            shutil.rmtree(home, ignore_errors=True)
        perf = report.performance
        timing_s = getattr(perf, "wall_s", None)
        phases = dict(getattr(perf, "phases", None) or {})
        out[kid] = {"total_s": total, "performance_s": timing_s, "data_s": getattr(perf, "data_s", None),
                    "phases": phases, "verdict": report.verdict, "stage": report.stage, "headline": report.headline,
                    "cases_run": getattr(report.correctness, "cases_run", None), "score": report.score}
        log(f"latency {kid}: {total:.1f} s ({report.verdict}, {report.headline}; performance stage "
            f"{timing_s if timing_s is None else round(timing_s, 1)} s; {phases_text(phases)})")
    return out


def phases_text(phases: dict) -> str:
    """'prefetch_wait 0.4 s, setup 0.3 s, ...' in the stage's order; background (overlapped) work last."""
    from grader.performance.measured import PHASES

    fg = [f"{k} {phases[k]:.2f} s" for k in PHASES if k in phases]
    bg = [f"{k} {v:.2f} s" for k, v in phases.items() if k not in PHASES]
    return ", ".join(fg) + (f" (overlapped with the sanitizer: {', '.join(bg)})" if bg else "")


def _variants(args, backend, cal, log):
    from grader import catalog
    from grader.performance.bench import bench_one

    kata = catalog.load("reduce")
    rows = [bench_one(kata, kata.solution_dir, backend=backend, calibration=cal, label="solution")]
    for name in VARIANTS:
        rows.append(bench_one(kata, ROOT / "lab" / "reduce_variants" / name, backend=backend,
                              calibration=cal, label=name))
    vals = [r["summary"]["value"] if not r.get("error") else None for r in rows[1:]]
    ordered = None not in vals and vals[0] < vals[1] < vals[2]
    log("variants: " + ", ".join(f"{r['submission']} {_short(r)}" for r in rows)
        + f" -> {'in order' if ordered else 'NOT in order'}")
    return {"rows": rows, "scores": dict(zip(VARIANTS, vals)), "in_order": ordered}


def _markdown(doc) -> str:
    from grader.performance.bench import markdown_table

    cal = doc.get("calibration") or {}
    lines = [f"# kata on {doc['gpu']} ({doc['date']})", ""]
    if cal:
        lines += ["## Calibration", "",
                  f"copy {cal['copy_bandwidth'] / 1e12:.2f} TB/s · read {cal['read_bandwidth'] / 1e12:.2f} TB/s · "
                  f"fp32 {cal['fp32'] / 1e12:.1f} TFLOP/s · bf16 "
                  + (f"{cal['bf16'] / 1e12:.0f} TFLOP/s" if cal.get("bf16") else "n/a")
                  + f" · max SM clock {cal.get('sm_clock_max_mhz')} MHz", ""]
    if doc.get("solutions"):
        lines += ["## Every solution and its library baseline", "", markdown_table(doc["solutions"])]
    if doc.get("repeat"):
        lines += ["## Spread of 5 repeated grades (goal <= 1 %)", "", "| kata | score spread | per-case median spread |",
                  "|---|---|---|"]
        for k, r in doc["repeat"].items():
            if "error" in r:
                lines.append(f"| {k} | error: {r['error'][:80]} | |")
            else:
                lines.append(f"| {k} | {r['score_spread']:.2%} | "
                             + ", ".join(f"{p:.2%}" for p in r["spread_per_case"]) + " |")
        lines.append("")
    if doc.get("latency"):
        lines += ["## Grade latency per kata: `kata grade --backend gpu` of the solution (goal <= 10 s)", "",
                  "| kata | whole grade | of which performance stage | cases checked | verdict | score |",
                  "|---|---|---|---|---|---|"]
        for k, r in doc["latency"].items():
            if "error" in r:
                lines.append(f"| {k} | error: {r['error'][:80]} | | | | |")
                continue
            perf = f"{r['performance_s']:.1f} s" if r.get("performance_s") is not None else "-"
            score = f"{r['score']:.3f}" if r.get("score") is not None else "-"
            lines.append(f"| {k} | {r['total_s']:.1f} s | {perf} | {r['cases_run']} | {r['verdict']} | {score} |")
        lines.append("")
        phased = [(k, r["phases"]) for k, r in doc["latency"].items() if r.get("phases")]
        if phased:
            lines += ["Performance-stage phases per kata (seconds; grader/performance/measured.py PHASES):", ""]
            lines += [f"- {k}: {phases_text(p)}" for k, p in phased]
            lines.append("")
    if doc.get("variants"):
        v = doc["variants"]
        lines += ["## Three reduce designs in one run", "", markdown_table(v["rows"]),
                  f"In order atomic < tree < float4+shuffle: **{v['in_order']}**", ""]
    if doc.get("skipped"):
        lines += ["## Skipped", ""] + [f"- {s}" for s in doc["skipped"]] + [""]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--parts", default="calibrate,solutions,repeat,latency,variants")
    p.add_argument("--katas", nargs="*", default=None, help="default: every kata in the catalogue")
    p.add_argument("--repeat-katas", nargs="*", default=["reduce"])
    p.add_argument("--budget-s", type=float, default=520.0)
    args = p.parse_args(argv)
    start = time.perf_counter()
    args.deadline, args.skipped = start + args.budget_s, []
    args.out.mkdir(parents=True, exist_ok=True)
    log_path = args.out / "suite.log"

    def log(msg):
        line = f"[{time.perf_counter() - start:6.1f} s] {msg}"
        print(line, flush=True)
        with open(log_path, "a") as f:
            f.write(line + "\n")

    from grader.performance.bench import roofline_plot, to_json
    from harness.measure import calibrate
    from harness.backends.gpu import GpuBackend

    backend = GpuBackend()
    parts = args.parts.split(",")
    if "calibrate" in parts:
        cal = calibrate.calibrate(backend)
        calibrate.save(cal)
    else:
        cal, _ = calibrate.load_or_calibrate(backend)
    log("calibration: " + cal.describe())
    doc = {"gpu": cal.gpu, "driver": cal.driver, "date": dt.date.today().isoformat(),
           "calibration": to_json(cal), "skipped": args.skipped}
    # rough costs, to skip what would overrun the budget rather than be killed mid-write
    estimates = {"solutions": 15.0 * len(args.katas or [0] * 9), "repeat": 40.0 * len(args.repeat_katas),
                 "latency": 15.0 * len(args.katas or [0] * 9), "variants": 40.0}
    durations: dict[str, float] = {}
    for part, fn in (("variants", _variants), ("solutions", _solutions), ("repeat", _repeat),
                     ("latency", _latency)):
        if part not in parts:
            continue
        left = args.budget_s - (time.perf_counter() - start)
        if estimates[part] > left:
            doc["skipped"].append(f"{part}: about {estimates[part]:.0f} s needed, {left:.0f} s of budget left")
            log(doc["skipped"][-1])
            continue
        if part == "latency" and "solutions" in durations:  # a grade costs about what its bench did
            estimates[part] = max(estimates[part], durations["solutions"])
        t_part = time.perf_counter()
        try:
            doc[part] = fn(args, backend, cal, log)
            durations[part] = time.perf_counter() - t_part
        except Exception as exc:  # one broken part must not lose the others' numbers
            doc["skipped"].append(f"{part}: {type(exc).__name__}: {exc}")
            log(doc["skipped"][-1])
        (args.out / "results.json").write_text(json.dumps(to_json(doc), indent=1))
    (args.out / "results.md").write_text(_markdown(doc))
    rows = list(doc.get("solutions") or []) + [r for r in (doc.get("variants") or {}).get("rows", [])
                                               if r["submission"] != "solution"]
    roofline_plot(rows, {"bandwidth": cal.bandwidth, "fp32": cal.fp32, "bf16": cal.bf16},
                  args.out / "roofline.png", f"kata solutions on {cal.gpu}, {doc['date']}")
    log(f"done in {time.perf_counter() - start:.0f} s: {args.out}/results.md, results.json, roofline.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
