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

from harness.frontends.nvrtc import compile
from harness.emulator import Emulator, boxes

ZOO = Path(__file__).parent / "zoo"
sys.path.insert(0, str(ZOO))

import _zoo  # noqa: E402
import test_zoo  # noqa: E402,F401  (registers the zoo's cases)


def _memory_after(name, size, fast: bool, monkeypatch):
    source, _, fn, options = _zoo.CASES[name]
    if fast:
        monkeypatch.setattr(boxes, "BOX_MIN", 1)
        monkeypatch.setattr(boxes, "LAUNCH_MIN", 1)
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
    monkeypatch.setattr(boxes, "BOX_MIN", 1)
    monkeypatch.setattr(boxes, "LAUNCH_MIN", 1)
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


PATTERNS = r"""
extern "C" __global__ void k(const float* x, float* y, unsigned char* b, float4* v, int* same, int n) {
    __shared__ float s[128];
    __shared__ int t[4];
    int tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = x[i];                        // affine in the block
    s[64 + tid] = x[n - 1 - i];           // affine, descending in global memory
    if (tid < 4) t[tid] = 0;
    __syncthreads();
    t[1] = tid;                           // every lane of the block stores to one word: the last wins
    same[blockIdx.x & 1] = i;             // every lane of the grid stores to one of two words
    __syncthreads();
    float r = s[63 - tid] + s[(tid * 5) & 63] + s[0];   // descending, scattered, one word for all
    if (tid % 3 == 1) r += s[tid + 1];    // a partial group that is no box
    y[i] = r + t[1];
    b[i] = (unsigned char)(b[i] + tid);   // byte accesses
    if (tid < 16) {                       // a box of float4 loads and stores
        float4 q = v[blockIdx.x * 16 + tid];
        q.x += q.w; q.y *= 2.0f;
        v[blockIdx.x * 16 + tid] = q;
    }
}
"""


def test_access_patterns_match_the_general_path(monkeypatch):
    monkeypatch.setattr(boxes, "BOX_MIN", 1)
    monkeypatch.setattr(boxes, "LAUNCH_MIN", 1)
    r = compile(PATTERNS, "kernel.cu")
    assert r.ok, r.log
    rng = np.random.default_rng(3)
    blocks, n = 8, 8 * 64
    x = rng.standard_normal(n).astype(np.float32)
    b = rng.integers(0, 256, n, dtype=np.uint8)
    v = rng.standard_normal(blocks * 16 * 4).astype(np.float32)
    mems = []
    for on in (True, False):
        emu = Emulator(sanitize=on, counters=on)
        mod = emu.load(r.ptx, "kernel.cu")
        ptrs = []
        for a in (x, np.zeros(n, np.float32), b, v, np.zeros(2, np.int32)):
            ptrs.append(emu.alloc(a.nbytes))
            emu.write(ptrs[-1], a)
        res = emu.launch(mod, "k", grid=(blocks, 1, 1), block=(64, 1, 1), args=ptrs + [n])
        assert not res.stopped
        mems.append(emu.mem.buf.copy())
    assert np.array_equal(mems[0], mems[1])


MISALIGNED = r"""
extern "C" __global__ void k(const float* x, float* y, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* p = (const float*)((const char*)x + off);   // off = 2: every lane misaligned
    y[i] = p[i];
}
"""


@pytest.mark.parametrize("off", [0, 2])
def test_a_misaligned_box_falls_back_and_reports(off, monkeypatch):
    monkeypatch.setattr(boxes, "BOX_MIN", 1)
    monkeypatch.setattr(boxes, "LAUNCH_MIN", 1)
    r = compile(MISALIGNED, "kernel.cu")
    assert r.ok, r.log
    outs = []
    for on in (True, False):
        emu = Emulator(sanitize=on, counters=on)
        mod = emu.load(r.ptx, "kernel.cu")
        x = np.arange(4 * 64 + 4, dtype=np.float32)
        px, py = emu.alloc(x.nbytes), emu.alloc(x.nbytes)
        emu.write(px, x)
        res = emu.launch(mod, "k", grid=(4, 1, 1), block=(64, 1, 1), args=[px, py, off])
        outs.append((emu.read(py, np.uint32, 4 * 64), sorted((f.kind, f.line, f.count) for f in res.findings
                                                            if f.kind == "misaligned")))
    assert np.array_equal(outs[0][0], outs[1][0])
    assert outs[0][1] == outs[1][1]
    assert bool(outs[1][1]) == (off == 2)
