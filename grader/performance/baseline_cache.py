"""The library's time at a bench case, kept per machine so that a grade need not import torch.

A GPU grade scores the learner's kernel against the library a user would call, timed at the same
shape on the same GPU. That time does not depend on the learner's kernel, yet timing it cost a
fresh machine's first grade 2-5 s: `import torch` in the GPU worker (2 s alone, 5 s beside the
correctness runs), then the library's own timing (0.3-2.4 s). So the first grade of a case times
the library and keeps the result here, and the grades after it within MAX_AGE_S reuse it: they
never import torch. `kata start` times it ahead, with the bench inputs
(grader/practice/bench_ahead.py). `kata bench`, which records results, always times afresh.

Key: the kata's reference.py (its baseline function), the case, the bench seed, the timing policy,
torch's version and the GPU (name, SM count, driver). The file is the learner's, like the bench
inputs and the calibration beside it: a local grade cannot defend against its machine's owner
(docs/threat-model.md); a proctored interview grades on the server, with the server's cache.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

import msgspec

from harness.measure.timing import TimingResult

#: a cached library time older than this is timed again (driver updates, clocks, thermal state)
MAX_AGE_S = 24 * 3600.0
FORMAT = 1
#: "0": never read or write the cache (every grade times the library)
CACHE_ENV = "KATA_BASELINE_CACHE"


@dataclasses.dataclass(frozen=True)
class Entry:
    """A bench case's library timing as a grade measured it."""

    baseline: TimingResult | None  # the fastest library's timing (None: none could be timed)
    libraries: tuple[tuple[str, float], ...]  # (label, median s), fastest first
    notes: tuple[str, ...]  # libraries not timed, and why
    gpu: str  # machine(): whose GPU measured it
    made: float  # time.time() when it was measured


def enabled() -> bool:
    return os.environ.get(CACHE_ENV, "").strip() != "0"


def folder() -> Path | None:
    from grader.performance.bench_inputs import cache_root

    root = cache_root()
    return None if root is None else root.parent / "baselines"


def torch_version() -> str | None:
    """torch's installed version, read without importing it (None: not installed)."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def machine(backend) -> str:
    """The GPU and driver a cached time belongs to."""
    facts = backend.facts
    try:
        import cupy

        driver = cupy.cuda.runtime.driverGetVersion()
    except Exception:  # noqa: BLE001 - a missing driver version only narrows the key less
        driver = 0
    return f"{facts.name}|{facts.sm_count}|{driver}"


def key(kata, case: dict, seed: int, policy) -> str:
    """The cache key of one bench case's library time, without the GPU (checked on load)."""
    source = hashlib.sha256(Path(kata.folder, "reference.py").read_bytes()).hexdigest()
    blob = json.dumps([FORMAT, kata.id, source, sorted((k, repr(v)) for k, v in case.items()), int(seed),
                       repr(policy), torch_version()])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _path(k: str) -> Path | None:
    base = folder()
    return None if base is None else base / f"{k}.json"


def load(k: str, gpu: str | None = None, *, now: float | None = None) -> Entry | None:
    """The entry under key k, if it is fresh and (gpu given) was measured on that GPU; else None.
    A damaged or foreign file reads as absent (the grade times the library again)."""
    path = _path(k)
    if path is None or not enabled():
        return None
    try:
        entry = msgspec.json.decode(path.read_bytes(), type=Entry)
    except (OSError, msgspec.MsgspecError, ValueError, TypeError):
        return None
    age = (time.time() if now is None else now) - entry.made
    if not 0 <= age <= MAX_AGE_S or (gpu is not None and entry.gpu != gpu):
        return None
    return entry


def save(k: str, entry: Entry) -> None:
    """Keep an entry (written to a temporary name and renamed: never read half-written). Silent on
    failure: the cache saves time, it never decides anything."""
    path = _path(k)
    if path is None or not enabled():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(msgspec.json.encode(entry))
        os.replace(tmp, path)
    except OSError:
        pass


def all_cached(kata, seeds: list[int], policy) -> bool:
    """Whether every bench case of kata (case i drawn with seeds[i], prefetching.bench_seeds) has a
    fresh library time (any GPU: the stage checks which): then the grade's GPU worker need not
    import torch beside its correctness runs."""
    cases = tuple(kata.bench.cases)
    return bool(cases) and all(load(key(kata, dict(c), s, policy)) is not None for c, s in zip(cases, seeds))
