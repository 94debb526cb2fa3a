"""The vector-add kata's reference: the float32 sum bit for bit, and inputs where a wrong element shows."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("vector-add")
ref = KATA.reference


@pytest.mark.parametrize("dist", ["mixed", "cancel"])
def test_reference_is_the_float32_sum(dist):
    inputs = ref.generate(np.random.default_rng(0), n=4099, dist=dist)
    a, b = inputs["a"], inputs["b"]
    assert a.dtype == b.dtype == np.float32 and a.shape == (4099,)
    c = ref.reference(inputs, n=4099)["c"]
    assert c.dtype == np.float32 and np.array_equal(c, a + b)


@pytest.mark.parametrize("dist", ["mixed", "cancel"])
def test_a_neighbours_sum_or_one_operand_is_wrong(dist):
    inputs = ref.generate(np.random.default_rng(1), n=1000, dist=dist)
    a, b = inputs["a"], inputs["b"]
    c = ref.reference(inputs, n=1000)["c"]
    # c = a, c = b or a neighbour's a may match an element by chance, never more than a few in 1000.
    for wrong in (a, b, np.roll(a, 1) + b):
        assert np.mean(wrong == c) < 0.005


def test_kata_is_a_warm_up_with_the_edges_of_the_contract():
    assert KATA.level == "warm-up"
    sizes = {case["n"] for case in KATA.public}
    assert {1, 3, 255, 257} <= sizes and any(n % 4 for n in sizes if n > 1000)
