"""Every bench case of a kata at once: the ones not in the cache are made in parallel processes.

A fresh GPU machine's first grade of a kata spent 15-96 s making its bench inputs, float64
references and error scales, one case after another in one thread (numpy's generators and most
float64 references are single-threaded). Each case is independent and lands in the on-disk cache
(grader/performance/bench_inputs.py), so the missing ones are made by `python -m
grader.performance.bench_pool` subprocesses, one per case, and then all are loaded (memory-mapped)
from the cache. A subprocess, not multiprocessing: the GPU worker holds a CUDA context (no fork),
and spawn would re-run `python -m grader`'s __main__. Where there is no cache, or one case is
missing, or KATA_BENCH_JOBS=1, the cases are made here as before; a case a subprocess failed to
make is made here too, so a failure costs time, never a grade.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from grader.performance.bench_inputs import _key, bench_data, cache_root, lock_case

JOBS_ENV = "KATA_BENCH_JOBS"
#: a subprocess still running after this long is stopped, and its case made here instead
CASE_TIMEOUT_S = 600.0


def jobs(missing: int) -> int:
    """How many cases to make at once: KATA_BENCH_JOBS, else one per case up to the cores but one
    (the emulator's sanitizer runs beside the prefetch)."""
    env = os.environ.get(JOBS_ENV, "").strip()
    if env.isdigit() and int(env) > 0:
        return min(missing, int(env))
    return max(1, min(missing, (os.cpu_count() or 1) - 1))


def input_sets(kata, seeds: list[int], rotation: list[int] | None = None) -> list[tuple[object, dict, int]]:
    """(key, case, seed) of every input set: key i for case i drawn with seeds[i], then ("rotation",
    i) for its second set drawn with rotation[i] (the timing rotates between the two, measured.py)."""
    cases = [dict(c) for c in kata.bench.cases]
    sets = [(i, c, seeds[i]) for i, c in enumerate(cases)]
    if rotation is not None:
        sets += [(("rotation", i), c, rotation[i]) for i, c in enumerate(cases)]
    return sets


def make_all(kata, seeds: list[int], *, make=bench_data, launch=subprocess.Popen,
             rotation: list[int] | None = None) -> dict:
    """{key: BenchData} for every bench case of kata (case i drawn with seeds[i]; with rotation, also
    its second set under ("rotation", i)), the missing ones made in parallel subprocesses first.
    make: bench_data (the prefetch passes its own name for it, which tests replace); launch: how a
    subprocess is started (tests fake it)."""
    sets = input_sets(kata, seeds, rotation)
    root = cache_root()
    if root is not None:
        missing = [(c, s) for _, c, s in sets if not (root / _key(kata, c, s) / "meta.json").exists()]
        if len(missing) > 1 and jobs(len(missing)) > 1:
            _make_in_parallel(kata, missing, jobs(len(missing)), launch)
    return {key: make(kata, c, s) for key, c, s in sets}


def start_early(kata, seeds: list[int], *, launch=subprocess.Popen, rotation: list[int] | None = None) -> list:
    """Start making the missing bench cases (and, with rotation, their second sets) now, in
    subprocesses, and return them without waiting.

    A GPU grade calls this as soon as the kernel compiles, so a fresh machine makes its bench inputs
    while the correctness cases and the sanitizer run, instead of after them. bench_data's per-case
    lock makes the prefetch wait for a case being made here rather than make it twice."""
    root = cache_root()
    if root is None:
        return []
    missing = [(c, s) for _, c, s in input_sets(kata, seeds, rotation)
               if not (root / _key(kata, c, s) / "meta.json").exists()]
    started = []
    for case, seed in missing[:jobs(len(missing))]:
        proc = _launch_locked(kata, root, case, seed, launch)
        if proc is False:
            break  # no subprocesses here: the prefetch makes them as before
        if proc is not None:
            started.append(proc)
    return started


def _launch_locked(kata, root, case: dict, seed: int, launch):
    """One case's subprocess, started holding the case's lock (taken here, before it starts: another
    grade or the prefetch may ask for the case first). None: the case is being made elsewhere
    already (or there is no flock: whoever needs it makes it); False: subprocesses cannot start."""
    lock = lock_case(root, _key(kata, case, seed))
    if lock is None:
        return None
    cmd = [sys.executable, "-m", "grader.performance.bench_pool", kata.id, json.dumps(case), str(seed), "--locked"]
    with lock:  # the subprocess holds the lock through its inherited copy until it exits
        try:
            return launch(cmd, env=_child_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, pass_fds=(lock.fileno(),))
        except OSError:
            return False


def stop(started: list) -> None:
    """End the early subprocesses a grade no longer waits for (it failed before its performance stage)."""
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()


def _child_env() -> dict:
    import grader

    env = dict(os.environ)
    here = str(Path(grader.__file__).resolve().parents[1])
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env[JOBS_ENV] = "1"  # a subprocess never fans out again
    return env


def _make_in_parallel(kata, missing: list[tuple[dict, int]], width: int, launch) -> None:
    """The missing cases, `width` subprocesses at a time; a case whose lock another process holds
    (an early subprocess making it) is left to it: bench_data waits for that lock, then loads."""
    root = cache_root()
    queue, running = list(missing), []
    deadline = time.monotonic() + CASE_TIMEOUT_S
    while queue or running:
        while queue and len(running) < width:
            case, seed = queue.pop(0)
            proc = _launch_locked(kata, root, case, seed, launch)
            if proc is False:
                return  # no subprocesses here: bench_data makes the rest in this process
            if proc is not None:
                running.append(proc)
        time.sleep(0.05)
        running = [p for p in running if p.poll() is None]
        if time.monotonic() > deadline:
            for p in running:
                p.kill()
            return


def main(argv=None) -> int:
    """`python -m grader.performance.bench_pool KATA CASE_JSON SEED [--locked]`: one bench case into
    the cache (--locked: the case's lock was handed over already open, see start_early)."""
    from grader import catalog

    args = list(argv if argv is not None else sys.argv[1:])
    kata_id, case, seed = args[:3]
    bench_data(catalog.load(kata_id), json.loads(case), int(seed), locked="--locked" in args[3:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
