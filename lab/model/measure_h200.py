"""Time the performance model's calibration set on the GPU, in one process, with kata's own timing
method (harness.measure.timing: CUDA events around the launch plan, an L2 flush before every
sample, the noise rule), and write the medians as JSON.

    python3 lab/model/measure_h200.py OUT [--budget-s 450] [--katas reduce matmul ...] [--only NAME ...]

The set: every kata's solution, lab/reduce_variants, lab/variants (scan, topk), and the
folders under lab/model/<kata>/ (the reduction and SGEMM ladders, the deliberately slower
designs). Per kata the bench inputs are made once on the host and uploaded once; each kernel then
runs on them. Correctness is the CPU grade's job (every folder passes `kata grade`); here each
output is only compared with the solution's at the same case, and a disagreement is recorded,
not fatal. Results are written after every kernel, so a run cut short keeps what it measured.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

DEFAULT_KATAS = ("reduce", "matmul", "softmax", "scan", "histogram", "spmv", "topk", "attention")
SEED = 20261201


def calibration_set(root: Path = ROOT, katas=DEFAULT_KATAS) -> list[tuple[str, Path, str]]:
    """(kata, folder, label) for every kernel of the set, solutions first within each kata."""
    out = []
    for kata in katas:
        out.append((kata, root / "solutions" / kata, f"{kata}/solution"))
        extra = []
        if kata == "reduce":
            extra += sorted((root / "lab" / "reduce_variants").glob("*/kernel.cu"))
        extra += sorted((root / "lab" / "variants" / kata).glob("*/kernel.cu"))
        extra += sorted((root / "lab" / "model" / kata).glob("*/kernel.cu"))
        for k in extra:
            rel = k.parent.relative_to(root)
            out.append((kata, k.parent, str(rel)))
    return out


def agree(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether an output matches the solution's at the same case, loosely (float sums in another
    order differ in the last digits; integer outputs must be equal)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "iub":
        return bool(np.array_equal(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(b64))) if b64.size else 1.0)
    return bool(np.all(np.isfinite(a64) == np.isfinite(b64)) and np.nanmax(np.abs(a64 - b64), initial=0.0) <= 1e-3 * scale)


def _load_plan(folder: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"plan_{abs(hash(str(folder)))}", folder / "launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.launch


def run(out_dir: Path, katas, only=(), budget_s: float = 450.0, backend=None, time_fn=None, cases_of=None,
        policy=None) -> dict:
    """Measure; returns the results document (also written to out_dir/measurements.json).
    backend/time_fn/cases_of/policy: injected by the CPU test (a fake clock, small cases)."""
    from grader import catalog
    from grader.performance.measured import _Case
    from harness.backends.plan import Plan
    from harness.frontends import nvrtc
    from harness.measure import timing

    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    if backend is None:
        from harness.backends.gpu import GpuBackend

        backend = GpuBackend()
    policy = policy or timing.TimingPolicy(min_seconds=0.15, max_seconds=1.0, max_samples=400)
    if time_fn is None:
        flush, clock = timing.L2Flush(policy.flush_bytes, policy.flush_mode), timing.ClockProbe()
        time_fn = lambda fn, before: timing.measure(fn, backend.stream, policy=policy, before=before,
                                                    flush=flush, clock=clock).stats.median
    doc = {"gpu": backend.facts.name, "date": time.strftime("%Y-%m-%d"), "seed": SEED,
           "method": "harness.measure.timing.measure (events, L2 flush, noise rule)", "results": [], "skipped": []}
    entries = [e for e in calibration_set(ROOT, katas) if not only or any(o in e[2] for o in only)]
    for kata_id in dict.fromkeys(e[0] for e in entries):
        kata = catalog.load(kata_id)
        cases = cases_of(kata) if cases_of else [dict(c) for c in kata.bench.cases]
        for ci, case in enumerate(cases):
            if time.monotonic() - started > budget_s:
                doc["skipped"] += [f"{e[2]} {case}" for e in entries if e[0] == kata_id]
                continue
            t0 = time.monotonic()
            bufs = _Case(kata, backend, case, SEED + ci)
            gen_s = time.monotonic() - t0
            reference = None
            for _, folder, label in (e for e in entries if e[0] == kata_id):
                if time.monotonic() - started > budget_s:
                    doc["skipped"].append(f"{label} {case}")
                    continue
                row = {"kata": kata_id, "label": label, "case": case, "inputs_s": round(gen_s, 2)}
                try:
                    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
                    if not compiled.ok:
                        raise RuntimeError("compile error")
                    backend.load(compiled.ptx, compiled.cubin, "kernel.cu")
                    plan = Plan(backend, folder / "launch.py")
                    launch = _load_plan(folder)
                    fn = lambda: launch(plan, **bufs.args)
                    bufs.prepare()
                    fn()
                    backend.synchronize()
                    outs = bufs.outputs()
                    if reference is None:
                        reference = outs
                    row["agrees_with_solution"] = all(agree(outs[k], reference[k]) for k in outs if k != "indices")
                    row["median_s"] = float(time_fn(fn, bufs.prepare))
                    row["launches"] = len(plan.launches)
                except Exception as exc:  # one kernel's failure must not end the run
                    row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                doc["results"].append(row)
                (out_dir / "measurements.json").write_text(json.dumps(doc, indent=1))
                print(f"{label:55s} {case} {row.get('median_s', float('nan')) * 1e3:10.3f} ms"
                      + ("" if row.get("agrees_with_solution", True) else "  (differs from the solution)")
                      + (f"  {row['error']}" if "error" in row else ""), flush=True)
            bufs = None
    doc["wall_s"] = round(time.monotonic() - started, 1)
    (out_dir / "measurements.json").write_text(json.dumps(doc, indent=1))
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--katas", nargs="*", default=list(DEFAULT_KATAS))
    ap.add_argument("--only", nargs="*", default=[], help="labels containing any of these")
    ap.add_argument("--budget-s", type=float, default=450.0)
    ap.add_argument("--list", action="store_true", help="print the set and exit")
    args = ap.parse_args(argv)
    if args.list:
        for kata, _, label in calibration_set(ROOT, args.katas):
            print(kata, label)
        return 0
    doc = run(args.out, args.katas, args.only, args.budget_s)
    print(f"{len(doc['results'])} measurements, {len(doc['skipped'])} skipped, {doc['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
