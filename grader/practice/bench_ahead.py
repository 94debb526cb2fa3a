"""`kata start KATA` on a GPU machine: the kata's bench inputs made ahead, while the learner writes.

A fresh machine's first GPU grade spent 5-10 s waiting for its bench inputs (each case's and its
rotation set's, grader/performance/prefetching.py), though the learner spends minutes writing
before that grade. So `kata start` launches `python -m grader.practice.bench_ahead KATA SEED`,
detached (its own session, no terminal, no output), which makes the sets a grade with the default
seed will time (bench_pool.make_all: the missing ones in parallel subprocesses), times the library
at each (grader/performance/baseline_cache.py: the grade then imports no torch), warms the
emulator's compiled code once per machine (warm_emulator), and exits.

Coordination is the cache's per-case lock (bench_inputs.lock_case): each set is made by whoever
holds its lock, and a grade that arrives meanwhile waits for that lock and then loads the finished
entry (saved to a temporary folder and renamed, so never read half-written), instead of making
it twice. Nothing runs forever: make_all stops a subprocess after bench_pool.CASE_TIMEOUT_S, and
the detached process exits when the sets are made. Silent by design: whatever fails here costs a
grade time, never an error; KATA_BENCH_AHEAD=0 turns it off.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

#: "0": never make inputs ahead; "1": even where no GPU is visible (the CPU dry run of the lab's
#: measurement, and tests); unset: only on a machine whose GPU CuPy sees (checked detached)
AHEAD_ENV = "KATA_BENCH_AHEAD"


def start_ahead(kata_id: str, seed: int | None = None, *, launch=subprocess.Popen):
    """Launch the detached maker of kata_id's bench inputs; returns its Popen, or None where it is
    off or pointless (no CuPy installed: a CPU machine pays nothing, not even an import)."""
    wanted = os.environ.get(AHEAD_ENV, "").strip()
    if wanted == "0" or (wanted != "1" and importlib.util.find_spec("cupy") is None):
        return None
    from grader.grading.cases import DEFAULT_SEED
    from grader.performance.bench_inputs import cache_root
    from grader.performance.bench_pool import JOBS_ENV, _child_env

    if cache_root() is None:
        return None
    env = _child_env()
    env.pop(JOBS_ENV)  # the detached process fans out (its subprocesses do not)
    if os.environ.get(JOBS_ENV):
        env[JOBS_ENV] = os.environ[JOBS_ENV]
    seed = DEFAULT_SEED if seed is None else int(seed)
    cmd = [sys.executable, "-m", "grader.practice.bench_ahead", kata_id, str(seed)]
    try:
        return launch(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                      start_new_session=True, close_fds=True)
    except OSError:
        return None


def make_ahead(kata_id: str, seed: int, *, warm=None, libraries=None) -> int:
    """The detached process: every set a grade with `seed` times, into the cache, then the library's
    time at each bench case (_time_libraries), and meanwhile the emulator's compiled code warmed
    (warm_emulator; tests pass their own of both). Returns how many sets are in the cache afterwards."""
    import threading

    from grader import catalog
    from grader.performance.bench_inputs import bench_data
    from grader.performance.bench_pool import make_all
    from grader.performance.prefetching import bench_seeds, rotation_seeds

    if os.environ.get(AHEAD_ENV, "").strip() != "1":
        from harness.backends import gpu

        if not gpu.available():
            return 0  # no GPU: a grade here runs on the emulator and times nothing
    kata = catalog.load(kata_id)
    warming = threading.Thread(target=warm or warm_emulator, args=(kata,), daemon=True, name="kata-warm-emulator")
    warming.start()  # beside the sets, which mostly wait for their subprocesses
    seeds = bench_seeds(len(kata.bench.cases), seed)
    made = len(make_all(kata, seeds, make=bench_data, rotation=rotation_seeds(seeds)))
    (libraries or _time_libraries)(kata, seed)
    warming.join()
    return made


def _time_libraries(kata, seed: int) -> int:
    """The library's time at each bench case, into the machine's cache: the grade then imports no
    torch (grader/performance/baseline_cache.py). Never raises."""
    try:
        from grader.performance.measured import time_baselines_ahead

        return time_baselines_ahead(kata, seed)
    except Exception:  # noqa: BLE001 - the grade times whatever is missing
        return 0


def warm_emulator(kata) -> bool:
    """Compile the emulator's numba code into its on-disk cache, once per machine and emulator
    version: a first GPU grade on a fresh machine compiled it in its sanitizer run and its model
    run (2-4 s on the H200). How: the kata's own solution graded on the emulator (public cases,
    no estimate; the result is dropped). Returns whether it ran; never raises."""
    try:
        from grader.performance.bench_inputs import cache_root

        root, stamp = cache_root(), _emulator_stamp()
        folder = kata.solution_dir
        if root is None or stamp is None or not any((folder / f).exists() for f in ("kernel.cu", "kernel.py")):
            return False
        marker = root.parent / f"emulator-warm-{stamp}"
        if marker.exists():
            return False
        from grader.pipeline import grade

        grade(kata.id, folder, backend="cpu", examples=0, with_estimate=False)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("")
        return True
    except Exception:  # noqa: BLE001 - an optimisation: the first grade compiles what is missing
        return False


def _emulator_stamp() -> str | None:
    """Changes whenever numba or the emulator's source does (numba's own cache follows both)."""
    import hashlib

    try:
        import numba

        import harness.emulator as emulator
    except ImportError:
        return None  # no numba: nothing compiled to warm
    files = sorted(Path(emulator.__file__).parent.glob("*.py"))
    blob = [numba.__version__] + [f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files]
    return hashlib.sha256("\n".join(blob).encode()).hexdigest()[:16]


def main(argv=None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    try:
        make_ahead(args[0], int(args[1]))
    except Exception:  # noqa: BLE001 - silent by design: the grade makes whatever is missing
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
