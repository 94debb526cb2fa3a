"""Time candidate kernels on the GPU in seconds, without a whole grade: for trying variants in one
device call, and for running one launch plan under a profiler.

    python bench/quick_time.py KATA DIR [DIR ...] [--case '{"R": 16384, "L": 4096, "k": 8}' ...]
                               [--runs N] [--no-check]

Each DIR holds kernel.cu and launch.py. Per case: inputs from the kata's generator (seed 1), one
checked run, then harness/timing.measure with the grader's policy (L2 flush, noise rule) unless
--runs N is given, which runs the plan N times and stops (for `ncu --launch-skip ...`). Prints one
line per (DIR, case): median, fraction of roofline (read bandwidth from the calibration cache or
ROOFLINE.md's 4.4 TB/s) and whether the output matched.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from grader import catalog
    from grader.grading.cases import reference_params
    from grader.performance.measured import _Case, _check
    from harness.frontends import nvrtc as compiler
    from harness.measure import timing
    from harness.backends.gpu import GpuBackend
    from harness.backends.plan import Plan
    from harness.sandbox.worker import _load_launch

    ap = argparse.ArgumentParser()
    ap.add_argument("kata")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--no-check", action="store_true")
    args = ap.parse_args()
    kata = catalog.load(args.kata)
    cases = [json.loads(c) for c in args.case] or list(kata.bench.cases)
    backend = GpuBackend()
    bandwidth = 4.4e12
    try:
        from harness.measure import calibrate

        cal = calibrate.load_cached(backend.facts.name, backend.driver_version)
        if cal:
            bandwidth = cal.bandwidth
    except Exception:
        pass
    for case in cases:
        bufs = None
        data = kata.reference.generate(np.random.default_rng(1), **case)
        expected = None if args.no_check or args.runs else kata.reference.reference(
            data, **reference_params(kata, case, data))
        for d in args.dirs:
            d = Path(d)
            compiled = compiler.compile((d / "kernel.cu").read_text(), "kernel.cu", cubin=True)
            if not compiled.ok:
                print(f"{d} {case}: compile error\n{compiled.log}")
                continue
            backend.load(compiled.ptx, compiled.cubin, "kernel.cu")
            launch_fn = _load_launch(str(d / "launch.py"))
            plan = Plan(backend, d / "launch.py")
            bufs = _Case(kata, backend, case, 1, data)
            run = lambda: launch_fn(plan, **bufs.args)  # noqa: E731
            if args.runs:
                for _ in range(args.runs):
                    bufs.prepare()
                    run()
                backend.synchronize()
                print(f"{d} {case}: ran {args.runs} times")
                continue
            bufs.prepare()
            run()
            backend.synchronize()
            ok = "unchecked" if expected is None else (
                "ok" if not _check(kata, bufs.inputs, bufs.outputs(), case, expected) else "WRONG")
            res = timing.measure(run, backend.stream, before=bufs.prepare)
            cost = kata.reference.cost(**reference_params(kata, case, bufs.inputs))
            floor = cost.get("bytes", 0) / bandwidth
            regs = {k: (r.registers, r.spill_stores) for k, r in compiled.resources.items()}
            print(f"{d} {case}: {timing.fmt_time(res.stats.median)} "
                  f"({floor / res.stats.median:.1%} of roofline) n={res.stats.n} {ok} regs/spills={regs}",
                  flush=True)
            bufs = None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
