"""The schedule-bug corpus' driver (issue: bugs that depend on the schedule). Each case runs one
kernel of a wrong/right pair the way its host program would and asserts the answer against numpy;
`expect` pins what the sanitizer must say about the wrong one.

A case is `fn(dev, rng, kernel)`; dev is anything with upload / zeros / empty / read / launch (the
emulator's Device below, or the CuPy device of lab/races_gpu.py, which runs the same cases
on a GPU). Scalars are passed as numpy scalars so both devices pack them alike.
"""
from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Expect:
    kind: str  # the finding's kind (or "order-dependent": a mismatch under another schedule)
    line: str  # MARK name of the line the finding is at
    other: str | None = None  # MARK name of the other access's line
    blocks: str | None = None  # "same" | "different": the two threads' blocks
    says: tuple[str, ...] = ()  # phrases the message must contain (the fix, the barrier's scope)
    never: tuple[str, ...] = ()  # phrases it must not contain
    headline: bool = True  # the finding must be the launch's first error (the cause)


@dataclass(frozen=True)
class RaceCase:
    name: str
    source: str  # file in this folder
    wrong: str
    right: str
    run: object  # fn(dev, rng, kernel)
    expect: Expect
    # the class: global-race | atomic-order | warp-order | cross-block | memory-order (a missing fence, which
    # the emulator's sequentially consistent memory never shows) | barrier | scope | numba | cp-async |
    # branch-barrier
    cls: str
    gpu: bool = True  # run on the H200 by the device job
    extra: tuple = field(default_factory=tuple)  # more right kernels the case uses (a second launch)


CASES: dict[str, RaceCase] = {}


def case(source, wrong, right, cls, expect, gpu=True, extra=()):
    def register(fn):
        CASES[fn.__name__] = RaceCase(fn.__name__, source, wrong, right, fn, expect, cls, gpu, tuple(extra))
        return fn
    return register


def line_of(source: str, mark: str) -> int:
    for k, text in enumerate((HERE / source).read_text().splitlines(), 1):
        if re.search(rf"MARK {re.escape(mark)}\b", text):
            return k
    raise KeyError(f"no MARK {mark} in {source}")


def close(got, want, rtol, atol, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if bad.any():
        i = np.flatnonzero(bad.ravel())[0]
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ; first at {i}: got "
                             f"{got.ravel()[i]}, want {want.ravel()[i]}")


def load_numba_module():
    if not hasattr(np, "row_stack"):  # numba-cuda registers np.row_stack, which numpy 2.5 removed
        np.row_stack = np.vstack
    spec = importlib.util.spec_from_file_location("races_numba", HERE / "races_numba.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Device:
    """The emulator as a host program sees it; `options` go to Emulator (schedule=, sanitize=)."""

    def __init__(self, source: str, **options):
        from harness.emulator import Emulator

        self.source = source
        self.emu = Emulator(**{"sanitize": True, "counters": False, "wall_clock_s": 120.0, **options})
        self.sizes: dict[int, tuple[int, np.dtype]] = {}
        self.results = []
        if source.endswith(".cu"):
            from harness.frontends.nvrtc import compile

            r = compile((HERE / source).read_text(), filename=source)
            assert r.ok, r.log
            self.mod = self.emu.load(r.ptx, filename=source)
        else:
            self.numba = load_numba_module()
            self.mods: dict = {}

    def _alloc(self, count, dtype):
        dtype = np.dtype(dtype)
        ptr = self.emu.alloc(max(int(count) * dtype.itemsize, 16))
        self.sizes[ptr] = (int(count), dtype)
        return ptr

    def upload(self, array):
        array = np.ascontiguousarray(array)
        ptr = self._alloc(array.size, array.dtype)
        self.emu.write(ptr, array)
        return ptr

    def zeros(self, count, dtype):
        ptr = self._alloc(count, dtype)
        self.emu.memset(ptr, 0, max(int(count) * np.dtype(dtype).itemsize, 16))
        return ptr

    def empty(self, count, dtype):
        ptr = self._alloc(count, dtype)
        nbytes = max(int(count) * np.dtype(dtype).itemsize, 16)
        self.emu.memset(ptr, 0xFF, nbytes)
        self.emu.mark_unwritten(ptr, nbytes)
        return ptr

    def read(self, ptr, dtype, count):
        return np.asarray(self.emu.read(ptr, np.dtype(dtype), int(count)))

    def launch(self, kernel, grid, block, args, shared=0):
        dim = lambda v: tuple((tuple(v) if isinstance(v, (tuple, list)) else (int(v),)) + (1, 1))[:3]
        if self.source.endswith(".cu"):
            mod, name, values = self.mod, kernel, list(args)
        else:
            mod, name, values = self._numba(kernel, args)
        res = self.emu.launch(mod, name, grid=dim(grid), block=dim(block), shared_bytes=shared, args=values)
        self.results.append(res)
        return res

    def _numba(self, kernel, args):
        from harness.frontends import numba as nbf

        types, values = [], []
        for a in args:
            if isinstance(a, (int, np.integer)) and int(a) in self.sizes:
                count, dt = self.sizes[int(a)]
                types.append(nbf.numba_type("pointer", dt.str))
                values.extend(nbf.array_params(count, dt.itemsize, int(a)))
            else:
                types.append(nbf.numba_type("scalar", np.asarray(a).dtype.str))
                values.append(a)
        key = (kernel, tuple(str(t) for t in types))
        if key not in self.mods:
            fn = getattr(self.numba, kernel).py_func
            c = nbf.compile_kernel(fn, HERE / "races_numba.py", types)
            self.mods[key] = (self.emu.load(c.ptx, filename="races_numba.py"), c.entry)
        mod, entry = self.mods[key]
        return mod, entry, values
