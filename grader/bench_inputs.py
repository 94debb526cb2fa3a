"""Bench-size inputs and their reference outputs, made once per machine and kept on disk.

Drawing 2^28 hostile values and computing a float64 reference takes several seconds of host time,
most of a GPU grade's latency at bench sizes. They depend only on the kata's reference.py, the
case and the seed, so they are cached under that key and later grades memory-map them instead.
The cache is trimmed, least recently used first, to CAP_BYTES; a damaged entry is remade.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from grader.cases import reference_params

CAP_BYTES = 16 << 30


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
    blob = json.dumps([kata.id, sorted((k, repr(v)) for k, v in case.items()), int(seed),
                       hashlib.sha256(source).hexdigest()])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _load(folder: Path) -> tuple[dict, dict]:
    meta = json.loads((folder / "meta.json").read_text())
    inputs = {n: np.load(folder / f"in_{n}.npy", mmap_mode="r") for n in meta["arrays"]}
    inputs.update(meta["scalars"])
    expected = {n: np.load(folder / f"out_{n}.npy", mmap_mode="r") for n in meta["expected"]}
    os.utime(folder / "meta.json")  # recently used: trimmed last
    return inputs, expected


def _save(root: Path, key: str, inputs: dict, expected: dict) -> None:
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
    (tmp / "meta.json").write_text(json.dumps({"arrays": arrays, "scalars": scalars, "expected": list(expected)}))
    try:
        tmp.rename(root / key)  # atomic: a concurrent grade sees all of it or none
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # another grade made it first


def trim(root: Path, cap: int = CAP_BYTES) -> None:
    entries = []
    for d in root.iterdir():
        if d.is_dir() and not d.name.startswith("."):
            size = sum(f.stat().st_size for f in d.iterdir())
            entries.append(((d / "meta.json").stat().st_mtime if (d / "meta.json").exists() else 0, size, d))
    total = sum(e[1] for e in entries)
    for _, size, d in sorted(entries):
        if total <= cap:
            break
        shutil.rmtree(d, ignore_errors=True)
        total -= size


def bench_data(kata, case: dict, seed: int) -> tuple[dict, dict, float]:
    """(inputs, expected outputs, seconds spent) for one bench case; cached on disk when possible."""
    t0 = time.perf_counter()
    root = cache_root()
    key = _key(kata, case, seed)
    if root is not None and (root / key / "meta.json").exists():
        try:
            inputs, expected = _load(root / key)
            return inputs, expected, time.perf_counter() - t0
        except (OSError, ValueError, KeyError):
            shutil.rmtree(root / key, ignore_errors=True)
    inputs = kata.reference.generate(np.random.default_rng(seed), **case)
    expected = kata.reference.reference(inputs, **reference_params(kata, case, inputs))
    if root is not None:
        try:
            _save(root, key, inputs, expected)
            trim(root)
        except OSError:
            pass  # a full or read-only disk costs time on the next grade, nothing else
    return inputs, expected, time.perf_counter() - t0
