"""The fp8-gemm kata's reference: e4m3 codes agree with the emulator's conversion, DeepSeek-V3's
block quantisation keeps every block within e4m3's range, and the bf16 check passes a rounded
exact product and fails the classic mistakes (a missing weight scale, group 0's scales for all)."""
import numpy as np
import pytest

from grader import catalog
from harness.emulator.ops_fp8 import VALUES, encode


@pytest.fixture(scope="module")
def ref():
    return catalog.load("fp8-gemm").reference


def _bf16(x):
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).view(np.int16)


def test_e4m3_codes_are_the_emulators(ref):
    x = np.random.default_rng(1).uniform(-448, 448, 5000)
    np.testing.assert_array_equal(ref.to_e4m3(x), encode(x, "e4m3", True))
    # every value, every midpoint (ties to the even code), a hair either side, subnormals, 448
    v = ref.E4M3[:0x7F]
    mids = (v[1:] + v[:-1]) / 2
    edges = np.concatenate([v, mids, np.nextafter(mids, 0), np.nextafter(mids, 500), [0.0, 448.0, 2.0**-10]])
    for x in (edges, -edges, np.random.default_rng(2).standard_normal(20000) * 10.0 ** np.linspace(-4, 2.6, 20000)):
        x = np.clip(x, -448, 448)
        np.testing.assert_array_equal(ref.to_e4m3(x), encode(x, "e4m3", True))
    np.testing.assert_array_equal(np.nan_to_num(ref.E4M3), np.nan_to_num(VALUES["e4m3"]))


@pytest.mark.parametrize("dist", ["mixed", "offset", "cancel"])
def test_the_rounded_product_passes_and_mistakes_fail(ref, dist):
    M, N, K = 9, 130, 384
    inputs = ref.generate(np.random.default_rng(3), M=M, N=N, K=K, dist=dist)
    assert inputs["As"].shape == (M, 3) and inputs["Bs"].shape == (2, 3) and inputs["A"].dtype == np.uint8
    assert np.abs(ref.E4M3[inputs["A"].astype(int)]).max() <= 448
    want = ref.reference(inputs, M=M, N=N, K=K)
    assert ref.check(inputs, {"C": _bf16(want["C"])}, want, M=M, N=N, K=K) == []
    no_b = dict(inputs, Bs=np.ones_like(inputs["Bs"]))
    first = dict(inputs, As=np.repeat(inputs["As"][:, :1], 3, 1), Bs=np.repeat(inputs["Bs"][:, :1], 3, 1))
    for wrong in (no_b, first):
        got = _bf16(ref.reference(wrong, M=M, N=N, K=K)["C"])
        if dist == "mixed" or wrong is no_b:
            assert ref.check(inputs, {"C": got}, want, M=M, N=N, K=K)
    poisoned = np.full((M, N), -1, np.int16)  # 0xFFFF: a bf16 NaN, what an unwritten C holds
    assert "are off" in ref.check(inputs, {"C": poisoned}, want, M=M, N=N, K=K)[0]
