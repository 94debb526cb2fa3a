"""The scan kata's reference: exact int32 wrap-around, hostile values, every case materialises."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("scan")
ref = KATA.reference


def test_reference_wraps_like_int32_adds():
    x = np.array([2**31 - 1, 1, -5, 2**31 - 1], np.int32)
    y = ref.reference({"x": x}, n=4)["y"]
    assert y.dtype == np.int32
    assert y.tolist() == [2**31 - 1, -(2**31), 2**31 - 5, -6]


@pytest.mark.parametrize("dist", ["mixed", "overflow", "alternating"])
def test_generate_is_hostile(dist):
    x = ref.generate(np.random.default_rng(0), n=5000, dist=dist)["x"]
    assert x.dtype == np.int32 and x.shape == (5000,) and x[0] != 0
    wide = np.cumsum(x.astype(np.int64))
    assert (np.abs(wide) > 2**31).any(), "the running sum must overflow int32 somewhere"
    assert len(np.unique(x)) > 100


def test_exclusive_scan_fails_even_for_one_element():
    for dist in ("mixed", "overflow", "alternating"):
        x = ref.generate(np.random.default_rng(1), n=1, dist=dist)["x"]
        assert ref.reference({"x": x}, n=1)["y"][0] != 0
