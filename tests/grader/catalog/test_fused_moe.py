"""The fused-moe kata's reference: it equals a per-token loop over each token's experts, routing
is a proper top-k (distinct experts, weights summing to 1), skewed routing leaves experts empty,
and the error scale passes a float32 evaluation and fails a missing routing weight."""
import numpy as np
import pytest

from grader import catalog


@pytest.fixture(scope="module")
def ref():
    return catalog.load("fused-moe").reference


def _per_token(inputs, T, H, I, E, k, dtype=np.float64, weighted=True):
    x = inputs["X"].astype(dtype).reshape(T, H)
    w1, w2 = inputs["W1"].astype(dtype).reshape(E, H, 2 * I), inputs["W2"].astype(dtype).reshape(E, I, H)
    y = np.zeros((T, H), dtype)
    for t in range(T):
        for s in range(k):
            e, w = inputs["ids"].reshape(T, k)[t, s], inputs["weights"].astype(dtype).reshape(T, k)[t, s]
            h = x[t] @ w1[e]
            g, u = h[:I], h[I:]
            y[t] += (w if weighted else 1) * ((g / (1 + np.exp(-g)) * u) @ w2[e])
    return y


@pytest.mark.parametrize("dist", ["uniform", "skewed"])
def test_reference_is_the_per_token_loop_and_the_bound_separates(ref, dist):
    P = {"T": 40, "H": 24, "I": 20, "E": 8, "k": 2}
    inputs = ref.generate(np.random.default_rng(2), dist=dist, **P)
    ids = inputs["ids"].reshape(40, 2)
    assert (ids[:, 0] != ids[:, 1]).all() and np.allclose(inputs["weights"].reshape(40, 2).sum(1), 1, atol=1e-6)
    want = ref.reference(inputs, **P)["Y"]
    np.testing.assert_allclose(want, _per_token(inputs, **P), rtol=1e-12, atol=1e-12)
    bound = 4 * 2.0 ** -23 * ref.error_scale(inputs, **P)["Y"]
    assert (np.abs(_per_token(inputs, dtype=np.float32, **P) - want) <= bound).all()
    assert (np.abs(_per_token(inputs, weighted=False, **P) - want) > bound).any()
    if dist == "skewed":
        assert len(np.unique(ids)) < 8  # some experts get no token
