"""The attention-backward kata's reference: it is the gradient (finite differences agree), a
float32 recomputation from the float32 O and LSE passes, dropping the D_i term or the 1/sqrt(D)
fails, and the cost counts five products."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("attention-backward")


def _float32_backward(inputs, S, D, causal, d_term=True, scale=True):
    """One head's dQ, dK, dV the way a float32 kernel computes them from the float32 LSE and O."""
    q, k, v, o, do = (inputs[n].reshape(S, D) for n in ("Q", "K", "V", "O", "dO"))
    r = np.float32(1 / np.sqrt(D)) if scale else np.float32(1)
    p = np.exp(q @ k.T * r - inputs["LSE"].reshape(S, 1))
    if causal:
        p = np.where(np.tril(np.ones((S, S), bool)), p, np.float32(0))
    dp = do @ v.T
    ds = p * (dp - (do * o).sum(axis=1, keepdims=True)) if d_term else p * dp
    return {"dQ": ds @ k * r, "dK": ds.T @ q * r, "dV": p.T @ do}


def _within(kata, inputs, params, got):
    ref = kata.reference.reference(inputs, **params)
    scale = kata.reference.error_scale(inputs, **params)
    return {n: bool(np.all(np.abs(got[n].reshape(ref[n].shape) - ref[n]) <= kata.tolerance.c * EPS32 * scale[n]))
            for n in ref}


@pytest.mark.parametrize("dist", ["normal", "peaked", "shifted"])
@pytest.mark.parametrize("causal", [0, 1])
def test_float32_passes_missing_terms_fail(kata, dist, causal):
    params = {"B": 1, "H": 1, "S": 150, "D": 64, "causal": causal, "dist": dist}
    inputs = kata.reference.generate(np.random.default_rng(6), **params)
    assert inputs["LSE"].shape == (1, 1, 150) and inputs["O"].dtype == np.float32
    ok = {"dQ": True, "dK": True, "dV": True}
    assert _within(kata, inputs, params, _float32_backward(inputs, 150, 64, causal)) == ok
    no_d = _within(kata, inputs, params, _float32_backward(inputs, 150, 64, causal, d_term=False))
    assert not no_d["dQ"] and not no_d["dK"] and no_d["dV"]
    with np.errstate(all="ignore"):  # unscaled shifted scores overflow exp: that is the point
        unscaled = _float32_backward(inputs, 150, 64, causal, scale=False)
    assert not any(_within(kata, inputs, params, unscaled).values())


def test_reference_is_the_gradient(kata):
    S, D = 6, 32
    params = {"B": 1, "H": 1, "S": S, "D": D, "causal": 1}
    inputs = kata.reference.generate(np.random.default_rng(2), **params)
    grads = kata.reference.reference(inputs, **params)
    q, k, v, do = (inputs[n].astype(np.float64).reshape(S, D) for n in ("Q", "K", "V", "dO"))

    def loss(q, k, v):  # sum(dO * O): its gradient is the backward pass given dO
        s = np.where(np.tril(np.ones((S, S), bool)), q @ k.T / np.sqrt(D), -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        return float(((p / p.sum(axis=1, keepdims=True) @ v) * do).sum())

    h = 1e-6
    for which, name in enumerate(("dQ", "dK", "dV")):
        for idx in [(0, 0), (3, 7), (5, 31)]:
            args = [q.copy(), k.copy(), v.copy()]
            args[which][idx] += h
            up = loss(*args)
            args[which][idx] -= 2 * h
            numeric = (up - loss(*args)) / (2 * h)
            assert numeric == pytest.approx(grads[name].reshape(S, D)[idx], rel=1e-5, abs=1e-6)


def test_cost_is_five_products_halved_by_the_mask(kata):
    full = kata.reference.cost(B=4, H=16, S=2048, D=64, causal=0)["flops"]
    assert full == 10 * 4 * 16 * 2048 ** 2 * 64
    assert kata.reference.cost(B=4, H=16, S=2048, D=64, causal=1)["flops"] * 2 == full
