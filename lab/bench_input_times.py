"""How long a fresh machine's first GPU grade spends making bench inputs and references, measured
without a GPU: the same functions the performance stage calls (grader/performance/bench_inputs.py).

    python lab/bench_input_times.py [KATA ...] [--write lab/results/bench-input-times.md]

Per kata, each bench case in its own subprocess (so one case's arrays are freed before the next):
the seconds of reference.generate, reference.reference and the error scales at the bench shape,
serially, as the prefetch made them before. Then, per kata, the wall time of
`bench_pool.make_all` (what the prefetch calls now) into a fresh cache, and of a second call
that finds them cached.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _one_case(kata_id: str, index: int) -> dict:
    """Runs in a subprocess: generate / reference / error scales of one bench case, timed."""
    import numpy as np

    from grader import catalog
    from grader.grading.cases import reference_params
    from grader.grading.check import error_scales
    from grader.performance.prefetching import BENCH_SEED_OFFSET

    kata = catalog.load(kata_id)
    case = dict(kata.bench.cases[index])
    t0, c0 = time.perf_counter(), time.process_time()
    inputs = kata.reference.generate(np.random.default_rng(BENCH_SEED_OFFSET + index), **case)
    t1, c1 = time.perf_counter(), time.process_time()
    params = reference_params(kata, case, inputs)
    expected = kata.reference.reference(inputs, **params)
    t2, c2 = time.perf_counter(), time.process_time()
    try:  # as bench_inputs makes them: with the reference's outputs where error_scale takes them
        error_scales(kata, inputs, params, expected)
    except TypeError:  # a tree from before error_scales took them
        error_scales(kata, inputs, params)
    t3, c3 = time.perf_counter(), time.process_time()
    size = sum(v.nbytes for v in inputs.values() if isinstance(v, np.ndarray))
    return dict(case=case, generate=t1 - t0, reference=t2 - t1, scales=t3 - t2, mb=size / 1e6,
                cpu=dict(generate=c1 - c0, reference=c2 - c1, scales=c3 - c2))


def _make_all(kata_id: str, home: str) -> dict:
    """Runs in a subprocess: bench_inputs.make_all into KATA_HOME=home, then again (cached)."""
    os.environ["KATA_HOME"] = home
    from grader import catalog
    from grader.performance.bench_pool import make_all
    from grader.performance.prefetching import BENCH_SEED_OFFSET

    kata = catalog.load(kata_id)
    seeds = [BENCH_SEED_OFFSET + i for i in range(len(kata.bench.cases))]
    t0 = time.perf_counter()
    make_all(kata, seeds)
    t1 = time.perf_counter()
    make_all(kata, seeds)
    return dict(fresh=t1 - t0, cached=time.perf_counter() - t1)


def _sub(fn: str, *args) -> dict:
    code = f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); from lab.bench_input_times import {fn}; " \
           f"print(json.dumps({fn}(*{args!r})))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    from grader import catalog

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("katas", nargs="*")
    ap.add_argument("--write", type=Path)
    ap.add_argument("--no-serial", action="store_true", help="only the make_all timings")
    ap.add_argument("--no-make-all", action="store_true", help="only the per-case timings")
    args = ap.parse_args(argv)
    load0, started = os.getloadavg()[0], datetime.datetime.now(datetime.timezone.utc)
    rows = []
    for kata_id in args.katas or catalog.ids():
        n = len(catalog.load(kata_id).bench.cases)
        serial, longest = 0.0, 0.0
        parts = []
        if not args.no_serial:
            for i in range(n):
                r = _sub("_one_case", kata_id, i)
                if "error" in r:
                    parts.append(f"case {i}: {r['error']}")
                    continue
                serial += r["generate"] + r["reference"] + r["scales"]
                longest = max(longest, r["generate"] + r["reference"] + r["scales"])
                cpu = r["cpu"]
                parts.append(f"{r['generate']:.1f} + {r['reference']:.1f} + {r['scales']:.1f} s wall, "
                             f"{cpu['generate']:.1f} + {cpu['reference']:.1f} + {cpu['scales']:.1f} CPU-s "
                             f"({r['mb']:.0f} MB)")
        made = "- | -"
        if not args.no_make_all:
            with tempfile.TemporaryDirectory(prefix="kata-bench-inputs-") as home:
                m = _sub("_make_all", kata_id, home)
            made = f"{m['fresh']:.1f} | {m['cached']:.2f}" if "error" not in m else f"{m['error']} | -"
        row = f"| {kata_id} | {n} | {serial:.1f} | {longest:.1f} | {made} | {'; '.join(parts)} |"
        rows.append(row)
        print(row, flush=True)
    lines = ["# Bench inputs and references of a first GPU grade, made on the CPU", "",
             f"- command: `python lab/bench_input_times.py {' '.join(argv if argv is not None else sys.argv[1:])}`".rstrip(),
             f"- date: {started:%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores",
             f"- 1-minute load average at start / end: {load0:.1f} / {os.getloadavg()[0]:.1f}", "",
             "serial s: generate + reference + error scales of every bench case one after the other (what the "
             "prefetch did before); longest case s: what the prefetch's parallel subprocesses take where there "
             "are cores for every case (KATA_BENCH_JOBS, default cores - 1); make_all s: grader.performance.bench_pool.make_all into a fresh cache "
             "(the prefetch now), then again with the cache filled.", "",
             "| kata | cases | serial s | longest case s | make_all fresh s | make_all cached s | per case: generate + reference + scales |",
             "|---|---|---|---|---|---|---|", *rows, ""]
    if args.write:
        args.write.write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
