"""The topk kata's check: exact values, any order among ties, distinct in-range indices."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("topk")
ref = KATA.reference


def _case(dist, R=3, L=500, k=40, seed=0):
    params = {"R": R, "L": L, "k": k, "dist": dist}
    inputs = ref.generate(np.random.default_rng(seed), **params)
    return params, inputs, ref.reference(inputs, **params)


@pytest.mark.parametrize("dist", ["ties", "distinct", "negative", "constant"])
def test_reference_passes_its_own_check(dist):
    params, inputs, expected = _case(dist)
    assert ref.check(inputs, expected, expected, **params) == []


def test_another_order_among_ties_is_accepted():
    params, inputs, expected = _case("constant")
    other = {"values": expected["values"], "indices": expected["indices"][:, ::-1].copy()}
    assert ref.check(inputs, other, expected, **params) == []


def test_ties_at_the_threshold_are_present():
    params, inputs, expected = _case("ties", R=4, L=1000, k=64)
    x = inputs["x"]
    kth = expected["values"][:, -1]
    assert any((x[r] == kth[r]).sum() > 1 for r in range(4))
    assert np.isneginf(x).any()


@pytest.mark.parametrize("damage", ["duplicate", "out_of_range", "wrong_value", "unsorted", "poison"])
def test_broken_outputs_fail(damage):
    params, inputs, expected = _case("ties")
    v, i = expected["values"].copy(), expected["indices"].copy()
    if damage == "duplicate":
        i[0, 1] = i[0, 0]
        v[0, 1] = v[0, 0]
    elif damage == "out_of_range":
        i[1, 0] = params["L"]
    elif damage == "wrong_value":
        i[2, 0] = i[2, -1]
        i[2, -1] = expected["indices"][2, 0]
        v[2, 0], v[2, -1] = v[2, -1], v[2, 0]
    elif damage == "unsorted":
        v[0, [0, -1]] = v[0, [-1, 0]]
        i[0, [0, -1]] = i[0, [-1, 0]]
    else:
        v[1, 3] = np.nan
    assert ref.check(inputs, {"values": v, "indices": i}, expected, **params)
