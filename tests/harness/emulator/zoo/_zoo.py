"""The zoo's driver: a small device wrapper over the emulator and the case registry.

Each case is a function `name(dev, size, rng)` that uploads inputs, launches the kernels of one
.cu file the way a host program would, and asserts the outputs against numpy.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.frontends.nvrtc import compile

ZOO = Path(__file__).parent
CASES: dict[str, tuple[str, tuple, object, dict]] = {}  # name -> (.cu stem, sizes, function, options)


def case(source: str, *sizes, emulator: dict | None = None):
    """Register a case running tests/harness/emulator/zoo/<source>.cu at each size; `emulator` holds
    Emulator options for this case (e.g. a small resident-block limit)."""
    def register(fn):
        CASES[fn.__name__] = (source, sizes, fn, emulator or {})
        return fn
    return register


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def compiled(stem: str):
    r = compile((ZOO / f"{stem}.cu").read_text(), filename=f"{stem}.cu")
    assert r.ok, r.log
    return r


class Device:
    """A host program's view: buffers are device addresses; every launch is kept for checks."""

    def __init__(self, stem: str, **options):
        from harness.emulator import Emulator

        self.filename = f"{stem}.cu"
        self.emu = Emulator(**{"sanitize": True, "counters": True, "wall_clock_s": 120.0, **options})
        self.mod = self.emu.load(compiled(stem).ptx, filename=self.filename)
        self.results = []

    def upload(self, array: np.ndarray) -> int:
        array = np.ascontiguousarray(array)
        ptr = self.emu.alloc(max(array.nbytes, 16))
        self.emu.write(ptr, array)
        return ptr

    def zeros(self, count: int, dtype) -> int:
        nbytes = max(int(count) * np.dtype(dtype).itemsize, 16)
        ptr = self.emu.alloc(nbytes)
        self.emu.memset(ptr, 0, nbytes)
        return ptr

    def empty(self, count: int, dtype) -> int:
        """Poisoned like the grader's outputs (0xFF bytes: NaN floats, -1 ints)."""
        nbytes = max(int(count) * np.dtype(dtype).itemsize, 16)
        ptr = self.emu.alloc(nbytes)
        self.emu.memset(ptr, 0xFF, nbytes)
        self.emu.mark_unwritten(ptr, nbytes)  # a kernel reading it before writing is a finding
        return ptr

    def read(self, ptr: int, dtype, count: int) -> np.ndarray:
        return np.asarray(self.emu.read(ptr, np.dtype(dtype), int(count)))

    def launch(self, kernel: str, grid, block, args, shared: int = 0):
        dim = lambda v: tuple((tuple(v) if isinstance(v, (tuple, list)) else (int(v),)) + (1, 1))[:3]
        res = self.emu.launch(self.mod, kernel, grid=dim(grid), block=dim(block), shared_bytes=shared,
                              args=list(args))
        assert not res.stopped, f"{kernel} stopped early: {[f.message for f in res.findings]}"
        self.results.append(res)
        return res


def close_sum(got, want64, scale, n, what="sum"):
    """A float32 reduction is right when within a few ulps of sum |x| per tree level."""
    bound = 4 * np.finfo(np.float32).eps * max(1.0, np.log2(max(n, 2))) * scale + 1e-30
    assert abs(float(got) - float(want64)) <= bound, f"{what}: got {got}, want {want64} (bound {bound})"
