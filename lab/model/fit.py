"""Fit the model's few open constants to the calibration set's measurements.

    python3 lab/model/fit.py MEASUREMENTS.json --obs OBS.pickle [--write grader/performance/model/fitted.json]

Coordinate descent in log space on the squared log error of predicted / measured time, each
constant kept inside its physical range (BOUNDS: fit physics, not the set; the model is also
judged on kernels written elsewhere). The observations come from compare.py's
cache, so each evaluation is arithmetic only.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare

#: the constants fitted; every other one stays at its physics value
#: (the DRAM bandwidth is not among them: `kata calibrate` measures it, 4.44 TB/s streaming read)
FREE = ("l2_bytes_per_s", "dram_latency_s", "l2_latency_s", "shared_latency_s",
        "fp32_efficiency", "same_address_atomics_per_s", "launch_s", "ptx_to_sass_other",
        "cycles_per_dependent_instruction", "barrier_s", "sync_s")
#: physical ranges (public H200/Hopper figures and microbenchmark folklore); a fit never leaves them
BOUNDS = {"dram_bytes_per_s": (3.8e12, 4.6e12), "l2_bytes_per_s": (6e12, 1.4e13), "dram_latency_s": (4e-7, 1e-6),
          "l2_latency_s": (1e-7, 3e-7), "shared_latency_s": (1e-8, 4e-8), "fp32_efficiency": (0.5, 0.95),
          "same_address_atomics_per_s": (2e8, 1.5e9), "launch_s": (1e-6, 8e-6), "ptx_to_sass_other": (0.5, 1.2),
          "cycles_per_dependent_instruction": (0.5, 3.0), "barrier_s": (1e-8, 1e-7), "sync_s": (5e-6, 5e-5)}
STEPS = (0.6, 0.8, 0.9, 1.1, 1.25, 1.6)


def loss(measured, observed, k) -> float:
    """Mean over katas of the mean squared log error within the kata: a kata with many kernels
    (topk's variants, the reduction ladder) weighs as much as one with a single solution."""
    rows = compare.predictions(measured, observed, k)
    if not rows:
        return math.inf
    per: dict[str, list[float]] = {}
    for r in rows:
        per.setdefault(r["kata"], []).append(math.log(r["predicted_s"] / r["median_s"]) ** 2)
    return sum(sum(v) / len(v) for v in per.values()) / len(per)


def fit(measured, observed, start, sweeps: int = 2, log=print):
    best = start
    best_loss = loss(measured, observed, best)
    log(f"start: mean squared log error {best_loss:.4f}")
    for sweep in range(sweeps):
        for name in FREE:
            lo, hi = BOUNDS[name]
            for step in STEPS:
                value = float(best.c[name]) * step
                if not lo <= value <= hi:
                    continue
                trial = replace(best, c={**best.c, name: value})
                lt = loss(measured, observed, trial)
                if lt < best_loss - 1e-6:
                    best, best_loss = trial, lt
            log(f"sweep {sweep + 1} {name} = {best.c[name]:.4g}: {best_loss:.4f}")
    return best, best_loss


def main(argv=None) -> int:
    from grader.performance.model import h200

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measurements", type=Path)
    ap.add_argument("--obs", type=Path, required=True)
    ap.add_argument("--write", type=Path)
    ap.add_argument("--sweeps", type=int, default=2)
    args = ap.parse_args(argv)
    doc = json.loads(args.measurements.read_text())
    measured = [r for r in doc["results"] if "median_s" in r]
    observed = compare.load_observations(measured, args.obs)
    start = h200.fitted()
    physics = json.loads((h200.HERE / "fitted.json").read_text()).get("physics", start.c)
    start = replace(start, c=dict(physics))
    best, err = fit(measured, observed, start, args.sweeps)
    if args.write:
        out = {"gpu": doc.get("gpu", h200.NAME), "date": doc.get("date", time.strftime("%Y-%m-%d")),
               "status": (f"fitted to {len(measured)} kernel-cases of the calibration set "
                          f"(lab/model/measure_h200.py; mean squared log error {err:.3f})"),
               "constants": best.c, "physics": physics}
        args.write.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {args.write}")
    print(json.dumps(best.c, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
