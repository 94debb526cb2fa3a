"""The attention kata's reference: causal masking, stability of the shifted case, and the tolerance's reach."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("attention")


def _float32_attention(inputs, B, H, S, D, causal):
    q, k, v = (inputs[n].reshape(B, H, S, D) for n in ("Q", "K", "V"))
    logits = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(D))
    if causal:
        logits = np.where(np.tril(np.ones((S, S), bool)), logits, np.float32(-np.inf))
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.parametrize("dist", ["normal", "peaked", "shifted"])
@pytest.mark.parametrize("causal", [0, 1])
def test_float32_attention_passes_unscaled_fails(kata, dist, causal):
    params = {"B": 1, "H": 2, "S": 37, "D": 64, "causal": causal, "dist": dist}
    inputs = kata.reference.generate(np.random.default_rng(5), **params)
    expected = kata.reference.reference(inputs, **params)["O"]
    assert np.all(np.isfinite(expected))
    bound = kata.tolerance.c * EPS32 * kata.reference.error_scale(inputs, **params)["O"]
    got = _float32_attention(inputs, 1, 2, 37, 64, causal)
    assert got.dtype == np.float32 and np.all(np.abs(got - expected) <= bound)
    wrong = dict(inputs, Q=(inputs["Q"] * 8).astype(np.float32))  # forgetting 1/sqrt(64)
    assert np.any(np.abs(_float32_attention(wrong, 1, 2, 37, 64, causal) - expected) > bound)


def test_causal_row_zero_is_v_row_zero(kata):
    params = {"B": 1, "H": 1, "S": 5, "D": 32, "causal": 1}
    inputs = kata.reference.generate(np.random.default_rng(2), **params)
    out = kata.reference.reference(inputs, **params)["O"].reshape(5, 32)
    assert np.allclose(out[0], inputs["V"].reshape(5, 32)[0])


def test_cost_halves_with_the_mask(kata):
    full = kata.reference.cost(B=4, H=16, S=4096, D=64, causal=0)["flops"]
    assert full == 4 * 4 * 16 * 4096 ** 2 * 64
    assert kata.reference.cost(B=4, H=16, S=4096, D=64, causal=1)["flops"] * 2 == full
