"""The emulator's fp8 wgmma sums as the H200 did. On 2026-12-02 the H200 ran the zoo's
wgmma_fp8:128B:fp22 case (accumulators near 4096, two k32 steps): 887 of its 1024 sums differed
from the exact sum cut to 13 mantissa bits, the first four (in the case's lane order) being 4064,
4041.5, 4141 and 4108.5 (lab/results/2026-12-02-h200-session4-call4/hopper_zoo/zoo.txt). The
emulator, run on the same inputs, must differ from that cut in the same places by the same values."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent / "zoo"))

import cases_hopper  # noqa: E402


def _cut13(x):
    e = np.floor(np.log2(np.where(x != 0, np.abs(x), 1.0)))
    q = 2.0 ** (e - 13)
    return np.trunc(x / q) * q


def test_fp8_wgmma_sums_as_the_h200_did():
    ((a0, b0, c), (a1, b1, _)), got = cases_hopper.fp22_operands()
    rows, cols = cases_hopper.d_fragment()
    plain = _cut13(a1 @ b1.T + _cut13(a0 @ b0.T + c))[rows, cols].ravel()
    got = got.ravel()
    differ = got != plain
    assert int(differ.sum()) == 887
    assert got[differ][:4].tolist() == [4064.0, 4041.5, 4141.0, 4108.5]
