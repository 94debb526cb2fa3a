"""The engine's fast paths compute exactly what its general path computes.

With no observer attached the engine runs box-shaped lane sets through 2-D views (boxes.py).
Every zoo case runs twice: with the sanitizer and counters on (so every instruction takes the
general 1-D path) and with them off and boxes tried for every group however small; the device
memory must end bit-for-bit the same, and the fast run must report the same engine findings.
"""
from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from harness.compiler import compile
from harness.emulator import Emulator, engine

ZOO = Path(__file__).parent / "zoo"
sys.path.insert(0, str(ZOO))

import _zoo  # noqa: E402
import test_zoo  # noqa: E402,F401  (registers the zoo's cases)


def _memory_after(name, size, fast: bool, monkeypatch):
    source, _, fn, options = _zoo.CASES[name]
    if fast:
        monkeypatch.setattr(engine, "BOX_MIN", 1)
        options = {**options, "sanitize": False, "counters": False}
    dev = _zoo.Device(source, **options)
    fn(dev, size, np.random.default_rng(zlib.crc32(f"{name}-{size}".encode())))
    engine_kinds = {"out-of-bounds", "misaligned", "divergent-barrier", "deadlock", "watchdog", "trap",
                    "barrier-after-exit"}
    kinds = sorted((f.kind, f.line) for f in dev.emu.findings if f.kind in engine_kinds)
    return dev.emu.mem.buf.copy(), kinds


@pytest.mark.parametrize("name,size", [pytest.param(n, s, id=f"{n}-{s}")
                                       for n, (_, sizes, _, _) in sorted(_zoo.CASES.items()) for s in sizes])
def test_box_runs_match_the_general_path(name, size, monkeypatch):
    slow, slow_kinds = _memory_after(name, size, False, monkeypatch)
    fast, fast_kinds = _memory_after(name, size, True, monkeypatch)
    assert fast.size == slow.size
    diff = np.flatnonzero(fast != slow)
    assert diff.size == 0, f"{diff.size} bytes differ, first at global offset {diff[0]}"
    assert fast_kinds == slow_kinds


BAD = r"""
extern "C" __global__ void k(const float* x, float* y, int n, int shift) {
    __shared__ float s[64];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = x[i];
    __syncthreads();
    if (t < 32) {
        y[i] = s[t + shift] + x[i + shift];   // shift 1: in bounds; shift 40: past s and past x
    }
}
"""


@pytest.mark.parametrize("shift", [1, 40])
def test_a_box_with_a_bad_lane_falls_back_and_reports_the_line(shift, monkeypatch):
    monkeypatch.setattr(engine, "BOX_MIN", 1)
    r = compile(BAD, "kernel.cu")
    assert r.ok, r.log
    outs = []
    for on in (True, False):
        emu = Emulator(sanitize=on, counters=on)
        mod = emu.load(r.ptx, "kernel.cu")
        x = np.arange(64 * 8, dtype=np.float32)
        px, py = emu.alloc(x.nbytes), emu.alloc(x.nbytes)
        emu.write(px, x)
        emu.memset(py, 0, x.nbytes)
        res = emu.launch(mod, "k", grid=(8, 1, 1), block=(64, 1, 1), args=[px, py, x.size, shift])
        outs.append((emu.read(py, np.float32, x.size),
                     sorted((f.kind, f.line, f.count) for f in res.findings if f.kind == "out-of-bounds")))
    (slow, slow_found), (fast, fast_found) = outs
    assert np.array_equal(slow.view(np.uint32), fast.view(np.uint32))
    assert fast_found == slow_found
    assert bool(fast_found) == (shift == 40)
