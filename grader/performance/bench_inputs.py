"""Bench-size inputs, their reference outputs and error scales, made once per machine and kept on disk.

Drawing 2^28 hostile values and computing a float64 reference takes several seconds of host time,
most of a GPU grade's latency at bench sizes, and a "bound" tolerance's error scale
(reference.error_scale: softmax's float64 reference again, spmv's 67M-element gather, matmul's
float64 product) as long again. They depend only on the kata's reference.py, the case and the
seed, so they are cached under that key (with CACHE_FORMAT) and later grades memory-map them
instead. The cache is trimmed, least recently used first, to CAP_BYTES; a damaged entry is remade.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from grader.grading.cases import reference_params

CAP_BYTES = int(os.environ.get("KATA_BENCH_CACHE_BYTES", 16 << 30))  # a GPU machine with disk to spare may raise it
#: part of every entry's key: entries of an older layout (no error scales) are never read as this one
CACHE_FORMAT = 2
#: a half-written entry (its grade was killed mid-save) older than this is removed by trim()
STALE_TMP_S = 3600.0


class BenchData(NamedTuple):
    inputs: dict  # generate()'s arrays (memory-mapped from the cache when it has them) and scalars
    expected: dict  # reference() outputs
    scales: dict  # grader.grading.check.error_scales(): {} unless the kata's tolerance is "bound"
    seconds: float  # spent making or loading them


def cache_root() -> Path | None:
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home) / "cache" / "bench"
    try:
        from platformdirs import user_cache_dir  # absent on some GPU images: then no cache
    except ImportError:
        return None
    return Path(user_cache_dir("kata")) / "bench"


def _key(kata, case: dict, seed: int) -> str:
    source = Path(kata.folder, "reference.py").read_bytes()
    blob = json.dumps([CACHE_FORMAT, kata.id, sorted((k, repr(v)) for k, v in case.items()), int(seed),
                       hashlib.sha256(source).hexdigest()])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _load(folder: Path) -> tuple[dict, dict, dict]:
    meta = json.loads((folder / "meta.json").read_text())
    if meta.get("format") != CACHE_FORMAT:
        raise ValueError(f"cache entry of format {meta.get('format')}, not {CACHE_FORMAT}")
    inputs = {n: np.load(folder / f"in_{n}.npy", mmap_mode="r") for n in meta["arrays"]}
    inputs.update(meta["scalars"])
    expected = {n: np.load(folder / f"out_{n}.npy", mmap_mode="r") for n in meta["expected"]}
    scales = {n: np.load(folder / f"scale_{n}.npy", mmap_mode="r") for n in meta["scales"]}
    os.utime(folder / "meta.json")  # recently used: trimmed last
    return inputs, expected, scales


def _save(root: Path, key: str, inputs: dict, expected: dict, scales: dict) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
    arrays, scalars = [], {}
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            np.save(tmp / f"in_{name}.npy", value)
            arrays.append(name)
        else:
            scalars[name] = value.item() if hasattr(value, "item") else value
    for name, value in expected.items():
        np.save(tmp / f"out_{name}.npy", np.asarray(value))
    for name, value in scales.items():
        np.save(tmp / f"scale_{name}.npy", np.asarray(value))
    (tmp / "meta.json").write_text(json.dumps({"format": CACHE_FORMAT, "arrays": arrays, "scalars": scalars,
                                               "expected": list(expected), "scales": list(scales)}))
    try:
        tmp.rename(root / key)  # atomic: a concurrent grade sees all of it or none
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another grade made it first


def trim(root: Path, cap: int = CAP_BYTES) -> None:
    entries = []
    for d in root.iterdir():
        if d.name == LOCKS:
            continue
        if d.is_dir() and d.name.startswith("."):
            try:  # a save that never finished (its grade was killed): nobody will rename it now
                if time.time() - d.stat().st_mtime > STALE_TMP_S:
                    shutil.rmtree(d, ignore_errors=True)
            except OSError:
                pass
            continue
        if d.is_dir():
            size = sum(f.stat().st_size for f in d.iterdir())
            entries.append(((d / "meta.json").stat().st_mtime if (d / "meta.json").exists() else 0, size, d))
    total = sum(e[1] for e in entries)
    for _, size, d in sorted(entries):
        if total <= cap:
            break
        shutil.rmtree(d, ignore_errors=True)
        total -= size


def bench_data(kata, case: dict, seed: int, *, locked: bool = False) -> BenchData:
    """Inputs, expected outputs and error scales of one bench case, and the seconds spent; cached
    on disk when possible (and then returned memory-mapped, so the page cache holds them)."""
    t0 = time.perf_counter()
    root = cache_root()
    key = _key(kata, case, seed)
    if locked:  # this process inherited the case's lock from the grade that started it
        return _bench_data(kata, case, seed, root, key, t0)
    with _making(root, key):  # one process makes a case; another waits for it, then loads it
        return _bench_data(kata, case, seed, root, key, t0)


def lock_case(root: Path, key: str):
    """The case's lock, taken now without waiting (an open file to hand to the subprocess that makes
    the case), or None when another process holds it or there is no flock."""
    try:
        import fcntl

        handle = open(_lock_path(root, key), "w")
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


LOCKS = ".locks"  # beside the entries; trim() leaves it alone


def _lock_path(root: Path, key: str) -> Path:
    (root / LOCKS).mkdir(parents=True, exist_ok=True)
    return root / LOCKS / f"{key}.lock"


@contextlib.contextmanager
def _making(root: Path | None, key: str):
    """An exclusive lock on one case's cache entry (flock: released when its holder dies)."""
    if root is None:
        yield
        return
    try:
        import fcntl

        handle = open(_lock_path(root, key), "w")
    except (ImportError, OSError):  # no flock (Windows) or no cache: nobody to wait for
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _bench_data(kata, case: dict, seed: int, root: Path | None, key: str, t0: float) -> BenchData:
    from grader.grading.check import error_scales

    if root is not None and (root / key / "meta.json").exists():
        try:
            return BenchData(*_load(root / key), time.perf_counter() - t0)
        except (OSError, ValueError, KeyError):
            shutil.rmtree(root / key, ignore_errors=True)
    inputs = kata.reference.generate(np.random.default_rng(seed), **case)
    params = reference_params(kata, case, inputs)
    expected = kata.reference.reference(inputs, **params)
    scales = error_scales(kata, inputs, params, expected)
    if root is not None:
        try:
            _save(root, key, inputs, expected, scales)
            trim(root)
            inputs, expected, scales = _load(root / key)
        except (OSError, ValueError, KeyError):
            pass  # a full or read-only disk costs time on the next grade, nothing else
    return BenchData(inputs, expected, scales, time.perf_counter() - t0)
