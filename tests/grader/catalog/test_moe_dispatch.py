"""The moe-dispatch kata's reference: the stable grouping exactly, and routings with the promised edges."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("moe-dispatch")
ref = KATA.reference


def _case(dist, N=300, E=16, D=3, seed=0):
    params = {"N": N, "E": E, "D": D, "dist": dist}
    inputs = ref.generate(np.random.default_rng(seed), **params)
    return inputs, ref.reference(inputs, **params)


@pytest.mark.parametrize("dist", ["uniform", "skewed", "empty", "one_expert"])
def test_reference_is_the_stable_grouping(dist):
    inputs, out = _case(dist)
    ids = inputs["topk_ids"]
    assert ids.dtype == np.int32 and ids.shape == (300, 2) and np.all(ids[:, 0] != ids[:, 1])
    flat = ids.reshape(-1)
    by_expert = [s for e in range(16) for s in range(flat.size) if flat[s] == e]  # stable by definition
    assert out["perm"].tolist() == by_expert
    assert out["counts"].sum() == 600 and out["offsets"][0] == 0
    assert np.array_equal(out["offsets"][1:], np.cumsum(out["counts"])[:-1])
    assert np.array_equal(out["gathered"], inputs["x"][out["perm"] // 2])


def test_edges_empty_experts_one_hot_expert_and_a_single_expert():
    assert (_case("empty")[1]["counts"] == 0).sum() >= 8
    assert _case("one_expert")[1]["counts"].max() == 300
    inputs, out = _case("skewed", N=1, E=1, D=2)
    assert inputs["topk_ids"].tolist() == [[0, 0]] and out["counts"].tolist() == [2]
    assert out["perm"].tolist() == [0, 1] and np.array_equal(out["gathered"], np.repeat(inputs["x"], 2, 0))


def test_hot_expert_sits_in_either_slot_and_rows_are_distinct():
    inputs, out = _case("one_expert")
    hot = int(np.argmax(out["counts"]))
    ids = inputs["topk_ids"]
    assert 0 < (ids[:, 0] == hot).sum() < 300
    assert np.unique(inputs["x"][:, 0]).size == 300
