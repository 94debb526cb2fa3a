"""The matmul kata's reference: the tolerance admits float32 products and rejects a dropped term."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("matmul")


@pytest.mark.parametrize("dist", ["mixed", "offset", "cancel"])
def test_float32_product_passes_and_dropped_term_fails(kata, dist):
    ref = kata.reference
    params = {"M": 17, "N": 33, "K": 257, "dist": dist}
    inputs = ref.generate(np.random.default_rng(7), **params)
    assert inputs["A"].dtype == np.float32 and inputs["A"].shape == (17, 257)
    assert np.count_nonzero(inputs["A"]) > 0 and np.count_nonzero(inputs["B"]) > 0
    expected = ref.reference(inputs, **params)["C"]
    bound = kata.tolerance.c * EPS32 * ref.error_scale(inputs, **params)["C"]
    float32 = inputs["A"] @ inputs["B"]
    assert np.all(np.abs(float32 - expected) <= bound)
    dropped = inputs["A"][:, :-1] @ inputs["B"][:-1, :]
    assert np.any(np.abs(dropped - expected) > bound)


def test_cost_counts_2mnk(kata):
    assert kata.reference.cost(M=4096, N=4096, K=4096)["flops"] == 2 * 4096 ** 3
