"""Prefetch: the GPU worker's idle time while the emulator runs the sanitizer.

The pipeline sends `prefetch(kata_id, seed)` to the GPU worker as soon as correctness passed; it
readies the backend, the calibration, the bench inputs and torch in a background thread, and
`performance_stage` takes the result with `take` (waiting for it, or redoing whatever failed).
"""
from __future__ import annotations

import mmap
import threading
import time
from dataclasses import dataclass, field

from grader.performance.bench_inputs import BenchData, bench_data

#: bench inputs are drawn with the grade's seed plus this, apart from the correctness cases' seeds
BENCH_SEED_OFFSET = 0x5EED_BE4C
#: added to a case's bench seed for the second buffer set its timed samples rotate through
ROTATION_SEED = 7919

#: how long performance_stage waits for an unfinished prefetch before doing the work itself
PREFETCH_WAIT_S = 240.0


@dataclass
class Prefetched:
    """What `prefetch` made for one (kata, seed); each field stays None/empty where it failed."""

    kata_id: str
    seed: int
    cases: tuple  # the kata's bench cases when it ran: data[i] belongs to cases[i]
    backend: object = None  # a harness.backends.gpu.GpuBackend
    calibration: object = None
    data: dict = field(default_factory=dict)  # case position -> BenchData
    torch: bool = False  # `import torch` done (the kata declares a baseline)
    phases: dict = field(default_factory=dict)  # "background_*" seconds
    error: str | None = None  # why it stopped early (swallowed: the stage redoes the work)


_PREFETCHED: dict[tuple[str, int], Prefetched] = {}
_LOCK = threading.Lock()


def prefetch(kata_id: str, seed: int = 0) -> None:
    """Make ready what performance_stage(kata, seed=seed) needs, into a module-level store: the GPU
    backend, the calibration, every bench case's inputs, expected outputs and error scales (loaded
    or generated, grader/performance/bench_inputs.py), and `import torch` when the kata declares a baseline.
    The pipeline runs it in the GPU worker's background thread (harness.sandbox.isolation.Worker.prefetch).
    Never raises: whatever fails is left for the stage to redo (no GPU: nothing is done at all)."""
    try:
        from grader import catalog

        kata = catalog.load(kata_id)
        entry = Prefetched(kata_id, int(seed), tuple(dict(c) for c in kata.bench.cases))
    except BaseException:  # noqa: BLE001 - never decides a verdict
        return
    with _LOCK:
        _PREFETCHED.clear()  # one grade per worker: an older entry is garbage
        _PREFETCHED[(kata_id, int(seed))] = entry

    def step(name: str, fn) -> bool:
        t = time.perf_counter()
        try:
            fn()
            return True
        except BaseException as exc:  # noqa: BLE001 - the stage redoes this step
            entry.error = entry.error or f"{name}: {type(exc).__name__}: {exc}"
            return False
        finally:
            entry.phases[f"background_{name}"] = time.perf_counter() - t

    def make_backend() -> None:
        from harness.backends.gpu import GpuBackend

        entry.backend = GpuBackend()

    def load_calibration() -> None:
        from harness.measure import calibrate as _cal

        entry.calibration, _ = _cal.load_or_calibrate(entry.backend)

    def load_data() -> None:
        from grader.performance.bench_pool import make_all  # the missing sets in parallel processes

        seeds = bench_seeds(len(entry.cases), seed)
        # each case's inputs and its second set, which the timing rotates through (measured.py),
        # made together: the cores make both sets at once, not one after the other
        made = make_all(kata, seeds, make=bench_data, rotation=rotation_seeds(seeds))
        for key, data in made.items():
            _read_ahead(data)
            entry.data[key] = data

    def import_torch() -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.init()  # the library's CUDA state too, not only its Python modules
        entry.torch = True

    if not step("backend", make_backend):
        return  # no usable GPU here: nothing else is worth doing
    # `import torch` (3-5 s of Python) beside the data, which mostly waits for subprocesses
    torch = threading.Thread(target=step, args=("torch_import", import_torch), daemon=True, name="kata-torch-import")
    if getattr(kata.reference, "baseline", None) is not None and not _baselines_cached(kata, seed):
        torch.start()
    step("calibration", load_calibration)
    step("data", load_data)
    if torch.ident is not None:
        torch.join()


def _baselines_cached(kata, seed: int) -> bool:
    """The machine's cache has the library's time at every bench case: the stage imports no torch."""
    try:
        from grader.performance import baseline_cache
        from harness.measure.timing import TimingPolicy

        return baseline_cache.all_cached(kata, bench_seeds(len(kata.bench.cases), seed), TimingPolicy())
    except Exception:  # noqa: BLE001 - then torch is imported as before
        return False


#: seconds of the import started before the cases ran (import_torch_beside), for the phases
_BESIDE_PHASES: dict[str, float] = {}


def import_torch_beside(kata_id: str) -> None:
    """Sent to a GPU worker as soon as it starts, beside its correctness runs: `import torch`, 3-5 s
    of Python that the prefetch otherwise starts only after the cases. It prints nothing (anything
    Python-level goes nowhere) and leaves the GPU alone: torch.cuda.init() stays in the prefetch,
    after the runs. Only for a kata with a baseline."""
    import contextlib
    import io

    from grader import catalog

    if getattr(catalog.load(kata_id).reference, "baseline", None) is None:
        return
    t = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            import torch  # noqa: F401
    finally:
        _BESIDE_PHASES["background_torch_import_beside_cases"] = time.perf_counter() - t


def bench_seeds(count: int, seed: int) -> list[int]:
    """The seed of each bench case of a grade with this seed."""
    return [int(seed) + BENCH_SEED_OFFSET + i for i in range(count)]


def rotation_seeds(seeds: list[int]) -> list[int]:
    """The seed of each bench case's second buffer set (the timing's rotation, measured.py)."""
    return [s + ROTATION_SEED for s in seeds]


def _read_ahead(data: BenchData) -> None:
    """Ask the kernel to page memory-mapped arrays in now (asynchronously), not at the first upload."""
    for group in (data.inputs, data.expected, data.scales):
        for value in group.values():
            mm = getattr(value, "_mmap", None)
            if mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_WILLNEED"):
                try:
                    mm.madvise(mmap.MADV_WILLNEED)
                except (OSError, ValueError):
                    pass


def take(kata_id: str, seed: int, phases: dict) -> Prefetched | None:
    """Wait for the worker's prefetch (if any), then take its entry for (kata_id, seed) out of the store."""
    try:
        from harness.sandbox.worker import wait_background

        waited, finished = wait_background(PREFETCH_WAIT_S)
    except Exception:
        waited, finished = 0.0, True
    phases["prefetch_wait"] = waited
    with _LOCK:
        entry = _PREFETCHED.pop((kata_id, int(seed)), None)
        _PREFETCHED.clear()
    if entry is None or not finished:
        return None  # still running after the wait: its results are not ours to share
    phases.update(entry.phases)
    phases.update(_BESIDE_PHASES)
    return entry


