"""The layernorm kata's reference: a float32 two-pass kernel passes on every kind of row, the
one-pass variance E[x^2] - E[x]^2 fails on the shifted rows, and C = 1 gives beta."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)
F32 = np.float32


@pytest.fixture(scope="module")
def kata():
    return catalog.load("layernorm")


def _float32_layernorm(inputs, R, C, one_pass=False):
    x = inputs["x"].reshape(R, C)
    mean = x.sum(axis=1, dtype=F32) / F32(C)
    if one_pass:
        var = (x * x).sum(axis=1, dtype=F32) / F32(C) - mean * mean
    else:
        d = x - mean[:, None]
        var = (d * d).sum(axis=1, dtype=F32) / F32(C)
    with np.errstate(invalid="ignore"):
        rstd = F32(1) / np.sqrt(var + F32(inputs["eps"]))
    y = (x - mean[:, None]) * rstd[:, None] * inputs["gamma"] + inputs["beta"]
    return {"y": y, "mean": mean, "rstd": rstd}


def _fails(kata, inputs, params, got):
    expected = kata.reference.reference(inputs, **params)
    scale = kata.reference.error_scale(inputs, **params)
    for name, want in expected.items():
        bound = kata.tolerance.c * EPS32 * scale[name]
        with np.errstate(invalid="ignore"):
            if not np.all(np.abs(got[name].reshape(want.shape) - want) <= bound):
                return True
    return False


@pytest.mark.parametrize("dist", ["normal", "shifted", "spiky"])
def test_two_pass_float32_passes(kata, dist):
    params = {"R": 6, "C": 4096, "dist": dist}
    inputs = kata.reference.generate(np.random.default_rng(4), **params)
    assert not _fails(kata, inputs, params, _float32_layernorm(inputs, 6, 4096))


def test_one_pass_variance_fails_on_shifted_rows(kata):
    params = {"R": 4, "C": 333, "dist": "shifted"}
    inputs = kata.reference.generate(np.random.default_rng(0), **params)
    assert _fails(kata, inputs, params, _float32_layernorm(inputs, 4, 333, one_pass=True))


def test_one_column_gives_beta(kata):
    params = {"R": 3, "C": 1, "dist": "shifted"}
    inputs = kata.reference.generate(np.random.default_rng(1), **params)
    out = kata.reference.reference(inputs, **params)
    assert np.all(out["y"][:, 0] == float(inputs["beta"][0]))
    assert np.allclose(out["rstd"], 1 / np.sqrt(inputs["eps"]))
