"""Predictions of the H200 model against the calibration set's measurements.

    python3 lab/model/compare.py MEASUREMENTS.json [--out lab/results/DATE-h200-model.md]
                                   [--constants grader/performance/model/fitted.json] [--obs OBS.pickle]

For every measured kernel the model runs on the CPU exactly as in a grade (observe, then
estimate); the observations are cached in --obs so fit.py can re-estimate with other constants
in seconds. The markdown gives every kernel's measured and predicted time and the goals: within
1.5x for >= 90 % of kernels and 2x for all, Spearman rank correlation >= 0.95 within each kata,
and every pair of ladder steps whose measured times differ by more than 25 % in the right order.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

LADDERS = {"reduction": "lab/model/reduce/r", "SGEMM": "lab/model/matmul/s"}


def folder_of(label: str) -> Path:
    if label.endswith("/solution"):
        return ROOT / "solutions" / label.split("/")[0]
    if label.startswith("bench/"):  # records made before the lab moved out of bench/
        label = "lab/" + label[len("bench/"):]
    return ROOT / label


def observe(kata_id: str, folder: Path):
    """(observations, ptxas resources) of one folder, as a CPU grade makes them."""
    from grader.performance.model.observe import observe_in_worker
    from harness.frontends import nvrtc

    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location(f"plan_{abs(hash(str(folder)))}", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    regs = {k: r.registers for k, r in compiled.resources.items()}
    obs = observe_in_worker(plan.launch, str(folder / "launch.py"), kata_id, compiled.ptx, "kernel.cu", 0,
                            registers=regs)
    return obs, compiled.resources


def load_observations(measured: list, cache: Path | None) -> dict:
    """{label: (kata, observations, resources)}, from the cache where present."""
    have = pickle.loads(cache.read_bytes()) if cache and cache.is_file() else {}
    for row in measured:
        label = row["label"]
        if label not in have:
            print(f"observing {label}", flush=True)
            try:
                obs, res = observe(row["kata"], folder_of(label))
            except Exception as exc:  # recorded, the others go on
                print(f"  failed: {type(exc).__name__}: {exc}")
                continue
            have[label] = (row["kata"], obs, res)
            if cache:
                cache.write_bytes(pickle.dumps(have))
    return have


def predictions(measured: list, observed: dict, fitted=None) -> list[dict]:
    from grader import catalog
    from grader.performance.model import estimate

    rows = []
    cache: dict[str, object] = {}
    for m in measured:
        if "median_s" not in m or m["label"] not in observed:
            continue
        kata, obs, res = observed[m["label"]]
        if m["label"] not in cache:
            cache[m["label"]] = estimate(catalog.load(kata), obs, res, fitted)
        est = cache[m["label"]]
        case = next((c for c in est.cases if c.case == m["case"]), None)
        if case is None:
            continue
        rows.append({**m, "predicted_s": case.seconds, "bound": case.bound})
    return rows


def spearman(a: list[float], b: list[float]) -> float:
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for rank, i in enumerate(order):
            r[i] = float(rank)
        return r
    if len(a) < 3:
        return math.nan
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))


def goals(rows: list[dict]) -> dict:
    ratios = [r["predicted_s"] / r["median_s"] for r in rows]
    off = [max(q, 1 / q) for q in ratios]
    per_kata = {}
    for kata in sorted({r["kata"] for r in rows}):
        sel = [r for r in rows if r["kata"] == kata]
        per_kata[kata] = spearman([r["median_s"] for r in sel], [r["predicted_s"] for r in sel])
    ladders = {}
    for name, prefix in LADDERS.items():
        steps = sorted((r for r in rows if r["label"].replace("bench/", "lab/", 1).startswith(prefix)),
                       key=lambda r: r["label"])
        pairs = wrong = 0
        bad = []
        for i, a in enumerate(steps):
            for b in steps[i + 1:]:
                if max(a["median_s"], b["median_s"]) / min(a["median_s"], b["median_s"]) <= 1.25:
                    continue
                pairs += 1
                if (a["median_s"] < b["median_s"]) != (a["predicted_s"] < b["predicted_s"]):
                    wrong += 1
                    bad.append(f"{a['label'].rsplit('/', 1)[1]} vs {b['label'].rsplit('/', 1)[1]}")
        ladders[name] = {"pairs": pairs, "wrong": wrong, "misordered": bad}
    return {"n": len(rows), "within_1_5": sum(o <= 1.5 for o in off) / max(1, len(off)),
            "within_2": sum(o <= 2.0 for o in off) / max(1, len(off)),
            "worst": max(off, default=0.0), "geomean_ratio": math.exp(sum(math.log(q) for q in ratios) / max(1, len(ratios))),
            "spearman": per_kata, "ladders": ladders}


def markdown(rows: list[dict], g: dict, doc: dict, constants: str) -> str:
    out = [f"# H200 performance model: predictions vs measurements ({doc.get('date', '?')}, {doc.get('gpu', '?')})", "",
           f"Measurements: `lab/model/measure_h200.py` ({doc.get('method', '')}). Model constants: {constants}.", "",
           "## Goals", "",
           f"- within 1.5x: **{g['within_1_5']:.0%}** of {g['n']} kernel-cases (goal >= 90 %); within 2x: "
           f"**{g['within_2']:.0%}** (goal 100 %); worst {g['worst']:.2f}x; geometric mean predicted/measured "
           f"{g['geomean_ratio']:.2f}",
           "- Spearman rank correlation per kata (goal >= 0.95): " + ", ".join(
               f"{k} {v:.2f}" if not math.isnan(v) else f"{k} -" for k, v in g["spearman"].items())]
    for name, lad in g["ladders"].items():
        out.append(f"- {name} ladder: {lad['pairs'] - lad['wrong']}/{lad['pairs']} pairs differing by > 25 % in the "
                   f"right order" + (f" (misordered: {'; '.join(lad['misordered'])})" if lad["misordered"] else ""))
    out += ["", "## Every kernel", "", "| kata | kernel | case | measured | predicted | pred/meas | bound (model) |",
            "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["kata"], r["label"])):
        case = " ".join(f"{k}={v}" for k, v in r["case"].items())
        out.append(f"| {r['kata']} | {r['label']} | {case} | {r['median_s'] * 1e3:.3f} ms | {r['predicted_s'] * 1e3:.3f} ms"
                   f" | {r['predicted_s'] / r['median_s']:.2f} | {r['bound']} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    from grader.performance.model import h200

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measurements", type=Path, help="measure_h200.py's JSON, or 'none' with --predict")
    ap.add_argument("--predict", action="store_true",
                    help="predictions for the whole calibration set, before any measurement")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--constants", type=Path)
    ap.add_argument("--obs", type=Path, help="observation cache (pickle), made if absent")
    args = ap.parse_args(argv)
    if args.predict:
        return _predict(args)
    doc = json.loads(args.measurements.read_text())
    measured = [r for r in doc["results"] if "median_s" in r]
    observed = load_observations(measured, args.obs)
    k = h200.fitted(args.constants)
    rows = predictions(measured, observed, k)
    g = goals(rows)
    text = markdown(rows, g, doc, f"{k.status or 'fitted'} ({k.date}, {k.gpu})")
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


def _predict(args) -> int:
    """The model's predictions for every kernel of the set and bench case (no measurement)."""
    from grader import catalog
    from grader.performance.model import h200
    from measure_h200 import DEFAULT_KATAS, calibration_set

    k = h200.fitted(args.constants)
    rows = [{"kata": kata, "label": label, "case": dict(c), "median_s": 1.0}
            for kata, _, label in calibration_set(ROOT, DEFAULT_KATAS) for c in catalog.load(kata).bench.cases]
    observed = load_observations(rows, args.obs)
    preds = predictions(rows, observed, k)
    out = [f"# H200 model predictions for the calibration set (constants: {k.status}, {k.date})", "",
           "| kata | kernel | case | predicted | bound (model) |", "|---|---|---|---|---|"]
    for r in preds:
        case = " ".join(f"{a}={b}" for a, b in r["case"].items())
        out.append(f"| {r['kata']} | {r['label']} | {case} | {r['predicted_s'] * 1e3:.3f} ms | {r['bound']} |")
    text = "\n".join(out) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
