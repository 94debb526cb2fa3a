"""The top-p kata's reference and check: the exact decision, float32 kernels accepted, boundary
tolerance only at boundaries, and messages that say where the decision fell."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("top-p")
ref = KATA.reference


def _case(dist="llm", sampling="mixed", R=4, V=3000, seed=0):
    params = {"R": R, "V": V, "dist": dist, "sampling": sampling}
    inputs = ref.generate(np.random.default_rng(seed), **params)
    return params, inputs, ref.reference(inputs, **params)


def _float32_sampler(inputs, R, V, lower_index_first=True, renormalise=True):
    """The decision as a float32 kernel would make it (sorted, float32 cumulative sums)."""
    x = inputs["logits"].reshape(R, V)
    out = np.empty(R, np.int32)
    for r in range(R):
        order = np.argsort(-x[r], kind="stable")
        if not lower_index_first:  # ties by higher index: reverse, sort stably, map back
            order = V - 1 - np.argsort(-x[r][::-1], kind="stable")
        w = np.exp((x[r][order] - x[r].max()) / inputs["temperature"][r]).astype(np.float32)
        c = np.cumsum(w, dtype=np.float32)
        K = min(int(np.searchsorted(c, inputs["top_p"][r] * c[-1])) + 1, V)
        mass = c[K - 1] if renormalise else c[-1]
        j = min(int(np.searchsorted(c, inputs["u"][r] * mass, side="right")), K - 1)
        out[r] = order[j]
    return {"token": out}


@pytest.mark.parametrize("dist", ["llm", "ties", "huge", "flat"])
def test_a_float32_sampler_passes_the_check(dist):
    params, inputs, expected = _case(dist, V=20000)
    assert ref.check(inputs, expected, expected, **params) == []
    assert ref.check(inputs, _float32_sampler(inputs, 4, 20000), expected, **params) == []


def test_greedy_is_the_lowest_index_among_equal_maxima():
    _params, inputs, expected = _case("ties", "greedy", R=4, V=1000)
    x = inputs["logits"].reshape(4, 1000)
    assert list(expected["token"]) == [int(np.flatnonzero(row == row.max())[0]) for row in x]
    assert any((row == row.max()).sum() > 1 for row in x)


@pytest.mark.parametrize("mistake", ["higher_index_first", "not_renormalised"])
def test_classic_mistakes_fail(mistake):
    dist = "ties" if mistake == "higher_index_first" else "llm"
    params, inputs, expected = _case(dist, "typical", V=2000, seed=3)
    got = _float32_sampler(inputs, 4, 2000, lower_index_first=mistake != "higher_index_first",
                           renormalise=mistake != "not_renormalised")
    assert ref.check(inputs, got, expected, **params)


def _boundary(where):
    """One row whose decision sits exactly on a boundary: the target on a CDF edge, or p on c_K."""
    params, inputs, _expected = _case("llm", "typical", R=1, V=500, seed=7)
    order, c = ref._cdf(inputs, 0, 500)
    inputs = dict(inputs)
    if where == "cdf":
        inputs["top_p"] = np.array([1.0], np.float32)
        K, _ = ref._decide(c, 1.0, 0.5)
        inputs["u"] = np.array([c[3] / c[K]], np.float32)  # the target is rank 4's lower edge
        return inputs, params, order[2], order[3]
    inputs["top_p"] = np.array([c[3]], np.float32)  # the nucleus is 3 or 4 tokens, by rounding
    inputs["u"] = np.array([np.nextafter(np.float32(1), np.float32(0))], np.float32)
    return inputs, params, order[2], order[3]


@pytest.mark.parametrize("where", ["cdf", "nucleus"])
def test_both_sides_of_a_boundary_are_accepted_and_named(where):
    inputs, params, left, right = _boundary(where)
    kinds = {ref.verdict(inputs, 0, int(t), 500)[0] for t in (left, right)}
    assert "exact" in kinds and kinds <= {"exact", f"{where}-boundary"} and len(kinds) == 2
    expected = ref.reference(inputs, **params)
    for t in (left, right):
        assert ref.check(inputs, {"token": np.array([t], np.int32)}, expected, **params) == []


def test_a_wrong_token_says_where_the_decision_fell():
    params, inputs, expected = _case("llm", "typical", R=2, V=500)
    order, _c = ref._cdf(inputs, 0, 500)
    far = np.array([order[-1], expected["token"][1]], np.int32)  # row 0: the least likely token
    (message,) = ref.check(inputs, {"token": far}, expected, **params)
    assert message.startswith(f"row 0: token = {order[-1]} is outside the nucleus")
    assert f"expected {expected['token'][0]}" in message
    assert message.endswith(f"not within 1e-05 of a boundary, so only token {expected['token'][0]} is accepted")
    poison = np.array([-1, expected["token"][1]], np.int32)
    assert ref.check(inputs, {"token": poison}, expected, **params)[0].startswith("row 0: token = -1 is outside [0, 500)")


def test_a_token_past_the_boundarys_neighbours_fails_and_says_the_decision_was_near():
    inputs, params, _left, _right = _boundary("cdf")
    order, _c = ref._cdf(inputs, 0, 500)
    expected = ref.reference(inputs, **params)
    (message,) = ref.check(inputs, {"token": np.array([order[6]], np.int32)}, expected, **params)
    assert message.startswith(f"row 0: token = {order[6]} is at rank 7")
    assert message.endswith("within 1e-05 of a boundary, but your token is not among those it admits")
