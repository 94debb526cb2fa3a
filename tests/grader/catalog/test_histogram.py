"""The histogram kata's reference: exact counts, skew that makes atomics contend, every bin in range."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("histogram")
ref = KATA.reference


@pytest.mark.parametrize("dist", ["skewed", "one_bin", "uniform", "edges"])
@pytest.mark.parametrize("bins", [1, 2, 256, 4096])
def test_samples_in_range_and_counts_exact(dist, bins):
    params = {"n": 3001, "bins": bins, "dist": dist}
    s = ref.generate(np.random.default_rng(bins), **params)["samples"]
    assert s.dtype == np.int32 and s.min() >= 0 and s.max() < bins
    counts = ref.reference({"samples": s}, **params)["counts"]
    assert counts.dtype == np.uint32 and counts.shape == (bins,) and counts.sum() == 3001


def test_skewed_has_hot_bins_away_from_zero():
    params = {"n": 100_000, "bins": 256, "dist": "skewed"}
    counts = ref.reference(ref.generate(np.random.default_rng(0), **params), **params)["counts"]
    assert counts.max() > 10 * counts.mean(), "a hot bin is what makes atomics contend"
    assert counts[0] < counts.max()


def test_every_public_and_hidden_case_generates():
    for case in KATA.public + KATA.hidden:
        s = ref.generate(np.random.default_rng(1), **case)["samples"]
        assert s.size == case["n"] and s.max() < case["bins"]
