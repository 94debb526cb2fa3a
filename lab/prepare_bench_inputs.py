"""Make the bench inputs, references and error scales of many katas at once, one process per case,
so that the timed grades after it find them in the cache (a GPU machine's first grade of a kata
otherwise spends most of its time here, single-threaded).

    python lab/prepare_bench_inputs.py [KATA ...] [--jobs N] [--seed 0]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _one(kata_id: str, index: int, seed: int) -> tuple[str, int, float, str]:
    from grader import catalog
    from grader.performance.bench_inputs import bench_data
    from grader.performance.prefetching import BENCH_SEED_OFFSET

    kata = catalog.load(kata_id)
    case = dict(kata.bench.cases[index])
    t0 = time.perf_counter()
    try:
        bench_data(kata, case, seed + BENCH_SEED_OFFSET + index)
        return kata_id, index, time.perf_counter() - t0, ""
    except Exception as exc:  # reported, the others go on
        return kata_id, index, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}"


def main(argv=None) -> int:
    from grader import catalog

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("katas", nargs="*")
    p.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    jobs = [(k, i) for k in (args.katas or catalog.ids()) for i in range(len(catalog.load(k).bench.cases))]
    failed = 0
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for fut in as_completed([pool.submit(_one, k, i, args.seed) for k, i in jobs]):
            kata_id, index, seconds, error = fut.result()
            failed += bool(error)
            print(f"{kata_id} case {index}: {seconds:.1f} s {error}", flush=True)
    print(f"{len(jobs)} bench cases in {time.perf_counter() - t0:.1f} s, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
