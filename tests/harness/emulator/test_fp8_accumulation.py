"""The emulator's fp8 wgmma sums as the H200 did. On 2026-12-02 the H200 ran the zoo's
wgmma_fp8:128B:fp22 case (accumulators near 4096, two k32 steps): 887 of its 1024 sums differed
from the exact sum cut to 13 mantissa bits, the first four (in the case's lane order) being 4064,
4041.5, 4141 and 4108.5 (lab/results/2026-12-02-h200-session4-call4/hopper_zoo/zoo.txt). The
emulator, run on the same inputs, must differ from that cut in the same places by the same values."""
import sys
import zlib
from pathlib import Path

import numpy as np

ZOO = Path(__file__).parent / "zoo"
sys.path.insert(0, str(ZOO))

import _zoo  # noqa: E402
import cases_hopper  # noqa: E402


def _cut13(x):
    e = np.floor(np.log2(np.where(x != 0, np.abs(x), 1.0)))
    q = 2.0 ** (e - 13)
    return np.trunc(x / q) * q


def test_fp8_wgmma_sums_as_the_h200_did():
    name, size = "wgmma_tile", "wgmma_fp8:128B:fp22"
    captured = {}
    real = cases_hopper._fp22_step

    def spy(a, b, c):  # the case's own steps: their inputs are the exact operands
        captured.setdefault("steps", []).append((a.copy(), b.copy(), c.copy()))
        return real(a, b, c)

    cases_hopper._fp22_step = spy
    try:
        rng = np.random.default_rng(zlib.crc32(f"{name}-{size}".encode()))
        got = cases_hopper.wgmma_tile(_zoo.Device("hopper_wgmma"), size, rng)["D"].ravel()
    finally:
        cases_hopper._fp22_step = real
    (a0, b0, c), (a1, b1, _) = captured["steps"]
    exact_cut = _cut13(a1 @ b1.T + _cut13(a0 @ b0.T + c))
    lane = np.arange(128)
    w, g, t4 = lane // 32, (lane % 32) // 4, lane % 4
    e = np.arange(8)[None, :]
    rows, cols = 16 * w[:, None] + g[:, None] + 8 * ((e % 4) // 2), 8 * (e // 4) + 2 * t4[:, None] + e % 2
    plain = exact_cut[rows, cols].ravel()
    differ = got != plain
    assert int(differ.sum()) == 887
    assert got[differ][:4].tolist() == [4064.0, 4041.5, 4141.0, 4108.5]
