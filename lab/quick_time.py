"""Time candidate kernels on the GPU in seconds, without a whole grade: for trying variants in one
device call, and for running one launch plan under a profiler.

    python lab/quick_time.py KATA DIR [DIR ...] [--case '{"R": 16384, "L": 4096, "k": 8}' ...]
                               [--runs N] [--no-check] [--seed S] [--checks K] [--backend cpu]
                               [--flush read|write]

Each DIR holds kernel.cu and launch.py. Per case: the inputs, reference outputs and error scales
`kata bench` uses (grader/performance/bench_inputs.py, bench seed 0 unless --seed; cached on
disk), K checked runs (in-out buffers restored and outputs poisoned before each, as in timing:
a second checked run is WRONG when a plan depends on state the first one left), then
harness/timing.measure with the grader's policy (L2 flush, noise rule), then the outputs of the
last timed run compared bytewise with the checked run's (a plan whose outputs drift while timed
is flagged, as `kata bench` does). --runs N runs the plan N times and stops (for
`ncu --launch-skip ...`). Prints one line per (DIR, case): median, fraction of roofline (read
bandwidth from the calibration cache or docs/roofline.md's 4.4 TB/s), the check and the first
mismatch when WRONG.

--flush picks the L2 flush before each sample (harness/measure/timing.L2Flush; default the
method's read); with --runs it also flushes before each run, so a profiler sees the kernel after it.

--backend cpu runs the checks on the CPU emulator and times nothing: a test of this script and of
the plan's restore behaviour at small --case sizes on a machine without a GPU.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _backend(kind: str):
    if kind == "cpu":
        from harness.backends.cpu import CpuBackend

        return CpuBackend(), None
    from harness.backends.gpu import GpuBackend

    backend, bandwidth = GpuBackend(), 4.4e12
    try:
        from harness.measure import calibrate

        cal = calibrate.load_cached(backend.facts.name, backend.driver_version)
        if cal:
            bandwidth = cal.bandwidth
    except Exception:
        pass
    return backend, bandwidth


def _checked_runs(kata, bufs, run, backend, case, data, count: int) -> str:
    """`count` runs, each after prepare() and each checked: 'ok' or 'WRONG (run i): first mismatch'."""
    from grader.performance.judge import _check

    for i in range(count):
        bufs.prepare()
        run()
        backend.synchronize()
        wrong = _check(kata, bufs.inputs, bufs.outputs(), case, data.expected, data.scales)
        if wrong:
            return f"WRONG (checked run {i + 1} of {count}): {wrong[0]}"
    return "ok"


def main() -> int:
    from grader import catalog
    from grader.grading.cases import reference_params
    from grader.performance.bench_inputs import bench_data
    from grader.performance.measured import _Case
    from grader.performance.prefetching import BENCH_SEED_OFFSET
    from harness.frontends import nvrtc as compiler
    from harness.measure import timing
    from harness.backends.plan import Plan
    from harness.sandbox.worker import _load_launch

    ap = argparse.ArgumentParser()
    ap.add_argument("kata")
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="as `kata bench --seed` (default 0)")
    ap.add_argument("--checks", type=int, default=0, help="checked runs before timing (default 1; cpu 2)")
    ap.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    ap.add_argument("--flush", choices=("read", "write"), default=None)
    args = ap.parse_args()
    kata = catalog.load(args.kata)
    cases = [json.loads(c) for c in args.case] or list(kata.bench.cases)
    backend, bandwidth = _backend(args.backend)
    policy = timing.TimingPolicy(**({"flush_mode": args.flush} if args.flush else {}))
    flush = timing.L2Flush(policy.flush_bytes, policy.flush_mode) if args.backend == "gpu" else None
    checks = 0 if args.no_check or args.runs else (args.checks or (2 if args.backend == "cpu" else 1))
    dirs = [Path(d) for d in args.dirs if (Path(d) / "kernel.cu").is_file()]  # `variants/*` also matches NOTES.md
    for d in sorted(set(map(str, args.dirs)) - set(map(str, dirs))):
        print(f"{d}: skipped, no kernel.cu in it")
    for i, case in enumerate(cases):
        data = bench_data(kata, case, args.seed + BENCH_SEED_OFFSET + i)  # kata bench's very inputs
        for d in dirs:
            compiled = compiler.compile((d / "kernel.cu").read_text(), "kernel.cu", cubin=args.backend == "gpu")
            if not compiled.ok:
                print(f"{d} {case}: compile error\n{compiled.log}")
                continue
            backend.load(compiled.ptx, compiled.cubin, "kernel.cu")
            launch_fn = _load_launch(str(d / "launch.py"))
            plan = Plan(backend, d / "launch.py")
            bufs = _Case(kata, backend, case, 1, data.inputs)
            run = lambda: launch_fn(plan, **bufs.args)  # noqa: E731
            if args.runs:
                for _ in range(args.runs):
                    bufs.prepare()
                    if args.flush:
                        flush(backend.stream)
                    run()
                backend.synchronize()
                print(f"{d} {case}: ran {args.runs} times")
                continue
            ok = _checked_runs(kata, bufs, run, backend, case, data, checks) if checks else "unchecked"
            regs = {k: (r.registers, r.spill_stores) for k, r in compiled.resources.items()}
            if args.backend == "cpu":
                print(f"{d} {case}: {ok} (cpu: not timed)", flush=True)
                continue
            kept = {k: v.tobytes() for k, v in bufs.outputs().items()} if checks else None
            res = timing.measure(run, backend.stream, policy=policy, before=bufs.prepare, flush=flush)
            if checks and {k: v.tobytes() for k, v in bufs.outputs().items()} != kept:
                ok += "; CHANGED during timing (outputs of the last timed run differ from the checked run's)"
            cost = kata.reference.cost(**reference_params(kata, case, bufs.inputs))
            floor = cost.get("bytes", 0) / bandwidth
            flags = f" flags={list(res.flags)}" if getattr(res, "flags", None) else ""
            print(f"{d} {case}: {timing.fmt_time(res.stats.median)} "
                  f"({floor / res.stats.median:.1%} of roofline, flush {policy.flush_mode}) n={res.stats.n} {ok} regs/spills={regs}{flags}",
                  flush=True)
            bufs = None
        data = None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
