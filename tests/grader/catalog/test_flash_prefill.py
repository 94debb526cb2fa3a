"""The flash-prefill kata's reference: the bf16 check passes O rounded from the exact attention
and one computed FlashAttention's way (probabilities rounded to bf16), and fails a causal mask
that hides the diagonal and a softmax over zero-padded keys."""
import math

import numpy as np
import pytest

from grader import catalog


@pytest.fixture(scope="module")
def ref():
    return catalog.load("flash-prefill").reference


def _attention(ref, inputs, S, D, causal, pad=0, diagonal=True):
    q, k, v = (ref.bf16_values(inputs[n]).reshape(S, D) for n in ("Q", "K", "V"))
    k, v = np.vstack([k, np.zeros((pad, D))]), np.vstack([v, np.zeros((pad, D))])
    s = q @ k.T / math.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones(s.shape, bool), 0 if diagonal else -1), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p = ref.bf16_values(ref.to_bf16(p))  # FlashAttention's P·V takes bf16 probabilities
    return p @ v


@pytest.mark.parametrize("dist", ["normal", "peaked", "shifted"])
def test_flash_rounding_passes_and_mistakes_fail(ref, dist):
    S, D = 70, 64
    params = {"B": 1, "H": 1, "S": S, "D": D}
    for causal in (0, 1):
        inputs = ref.generate(np.random.default_rng(5), causal=causal, dist=dist, **params)
        want = ref.reference(inputs, causal=causal, **params)
        ok = ref.to_bf16(_attention(ref, inputs, S, D, causal))
        assert ref.check(inputs, {"O": ok}, want, causal=causal, **params) == []
        if not causal and dist == "normal":  # (peaked and shifted scores dwarf a zero score;
            # a causal mask hides the padding keys anyway)
            padded = ref.to_bf16(_attention(ref, inputs, S, D, causal, pad=58))  # keys to 128, unmasked
            assert ref.check(inputs, {"O": padded}, want, causal=causal, **params)
    inputs = ref.generate(np.random.default_rng(5), causal=1, dist=dist, **params)
    want = ref.reference(inputs, causal=1, **params)
    with np.errstate(invalid="ignore"):
        hidden = ref.to_bf16(_attention(ref, inputs, S, D, 1, diagonal=False))
    assert ref.check(inputs, {"O": hidden}, want, causal=1, **params)
