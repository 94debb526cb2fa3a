"""The model's estimates beside H200 times of kernels it was not fitted to (the validation corpus),
estimate only (no correctness grade: the corpus' own validate.py grades them), one kernel at a time,
the results written after each; then the per-bound-class error table (--table) the estimates quote
(grader/performance/model/validation.json).

    python lab/model/validate_model.py CORPUS_DIR RECORDS.json [RECORDS.json ...] --out OUT.json [--only KATA ...]
    python lab/model/validate_model.py --table OUT.json [--write grader/performance/model/validation.json]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _key(case: dict) -> str:
    return json.dumps(case, sort_keys=True)


def _class(resource: str) -> str:
    from grader.performance.model import _bound_class

    return _bound_class(resource)


def estimate_folder(kata_id: str, folder: Path, bench_seed: int | None = None):
    from grader import catalog
    from grader.performance.model import estimate
    from grader.performance.model.observe import observe_in_worker
    from harness.frontends import nvrtc

    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location(f"plan_{abs(hash(str(folder)))}", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    kata = catalog.load(kata_id)
    # the heaviest item (a power-law row) of the inputs the H200 timed: case i's were drawn with seed + i
    seeds = [bench_seed + i for i in range(len(kata.bench.cases))] if bench_seed is not None else None
    obs = observe_in_worker(plan.launch, str(folder / "launch.py"), kata_id, compiled.ptx, "kernel.cu", 0,
                            registers={k: r.registers for k, r in compiled.resources.items()}, bench_seeds=seeds)
    return estimate(kata, obs, compiled.resources)


def run(corpus: Path, records: list[Path], out: Path, only: list[str]) -> None:
    measured, seed = {}, None
    for path in records:
        doc = json.loads(path.read_text())
        seed = doc.get("seed", seed)
        for r in doc.get("records", []):
            if r.get("median_s") and "error" not in r:
                measured[(r["kata"], r["design"], _key(r["case"]))] = r["median_s"]
    done = json.loads(out.read_text()) if out.is_file() else {"rows": []}
    seen = {(r["kata"], r["design"]) for r in done["rows"] if "error" not in r}
    done["rows"] = [r for r in done["rows"] if "error" not in r]  # an error is tried again
    folders = sorted({(k, d) for k, d, _ in measured})
    # one design per kata first (the first listed), then the rest: a cut run covers every kata
    order = [f for i, f in enumerate(folders) if i == 0 or folders[i - 1][0] != f[0]]
    order += [f for f in folders if f not in order]
    for kata_id, design in order:
        if (kata_id, design) in seen or (only and kata_id not in only):
            continue
        folder = ROOT / "solutions" / kata_id if design == "solution" else corpus / kata_id / design
        started = time.monotonic()
        try:
            e = estimate_folder(kata_id, folder, seed)
        except Exception as exc:  # recorded; the others go on
            done["rows"].append({"kata": kata_id, "design": design, "error": f"{type(exc).__name__}: {exc}"[:200]})
            out.write_text(json.dumps(done, indent=1))
            continue
        wall = time.monotonic() - started
        for c in e.cases:
            h200 = measured.get((kata_id, design, _key(c.case)))
            done["rows"].append({"kata": kata_id, "design": design, "case": c.case, "h200_s": h200,
                                 "estimate_s": c.seconds, "method": c.method, "resource": c.resource,
                                 "class": _class(c.resource), "floor_s": c.floor_s, "defect": c.defect,
                                 "score": c.score, "tier": e.tier, "bound": c.bound, "model_wall_s": round(wall, 1)})
        out.write_text(json.dumps(done, indent=1))
        print(f"{kata_id}/{design}: {wall:.0f} s", flush=True)


def table(out: Path) -> dict:
    rows = [r for r in json.loads(out.read_text())["rows"] if r.get("h200_s") and r.get("estimate_s")
            and r["method"] != "incomplete"]
    classes: dict[str, list[float]] = {}
    for r in rows:
        classes.setdefault(r["class"], []).append(r["h200_s"] / r["estimate_s"])
    return {k: {"n": len(v), "median": statistics.median(v),
                "within_1_5x": sum(1 for x in v if 1 / 1.5 <= x <= 1.5) / len(v),
                "within_3x": sum(1 for x in v if 1 / 3 <= x <= 3) / len(v),
                "geomean": math.exp(sum(math.log(x) for x in v) / len(v))} for k, v in sorted(classes.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", type=Path)
    ap.add_argument("records", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, required=False)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--table", type=Path)
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()
    if args.table:
        t = table(args.table)
        print(json.dumps(t, indent=1))
        if args.write:
            doc = json.loads(args.write.read_text())
            doc["classes"] = t
            args.write.write_text(json.dumps(doc, indent=1) + "\n")
        return
    run(args.corpus, args.records, args.out, args.only)


if __name__ == "__main__":
    main()
