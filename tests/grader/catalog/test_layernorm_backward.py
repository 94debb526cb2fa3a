"""The layernorm-backward kata's reference: it is the gradient of the forward (central
differences), a float32 kernel passes in the worst summation order (a sequential loop, as atomics
may land), and forgetting the mean term of dx fails."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)
F32 = np.float32


@pytest.fixture(scope="module")
def kata():
    return catalog.load("layernorm-backward")


def test_reference_is_the_gradient_of_the_forward(kata):
    R, C = 3, 7
    inputs = kata.reference.generate(np.random.default_rng(0), R=R, C=C)
    x0, dy = inputs["x"].astype(np.float64), inputs["dy"].astype(np.float64)
    gamma, beta = inputs["gamma"].astype(np.float64), np.linspace(-1.0, 1.0, C)

    def loss(x):
        mean = x.mean(axis=1, keepdims=True)
        rstd = 1.0 / np.sqrt(np.square(x - mean).mean(axis=1, keepdims=True) + 1e-5)
        return np.sum(((x - mean) * rstd * gamma + beta) * dy), np.sum((x - mean) * rstd * dy, axis=0)

    out = kata.reference.reference(inputs, R=R, C=C)
    h, rng = 1e-6, np.random.default_rng(1)
    for _ in range(3):
        u = rng.normal(size=(R, C))
        numeric = (loss(x0 + h * u)[0] - loss(x0 - h * u)[0]) / (2 * h)
        assert np.isclose(np.sum(out["dx"] * u), numeric, rtol=1e-4, atol=1e-6)
    assert np.allclose(out["dgamma"], loss(x0)[1], rtol=1e-3)  # the saved stats are float32-rounded
    assert np.allclose(out["dbeta"], dy.sum(axis=0))


def _float32_backward(inputs, R, C, drop_mean_term=False):
    dy, x = inputs["dy"].reshape(R, C), inputs["x"].reshape(R, C)
    xhat = (x - inputs["mean"][:, None]) * inputs["rstd"][:, None]
    gdy = inputs["gamma"] * dy
    seq = lambda a, axis: np.cumsum(a, axis=axis, dtype=F32).take(-1, axis=axis)  # one running sum
    a, b = seq(gdy, 1) / F32(C), seq(gdy * xhat, 1) / F32(C)
    dx = inputs["rstd"][:, None] * (gdy - (F32(0) if drop_mean_term else a[:, None]) - xhat * b[:, None])
    return {"dx": dx, "dgamma": seq(dy * xhat, 0), "dbeta": seq(dy, 0)}


def _fails(kata, inputs, params, got):
    expected = kata.reference.reference(inputs, **params)
    scale = kata.reference.error_scale(inputs, **params)
    return any(np.any(np.abs(got[k].reshape(expected[k].shape) - expected[k]) > kata.tolerance.c * EPS32 * scale[k])
               for k in expected)


@pytest.mark.parametrize("dist", ["normal", "shifted", "spiky"])
def test_sequential_float32_passes_and_the_missing_mean_term_fails(kata, dist):
    params = {"R": 4096, "C": 48, "dist": dist}
    inputs = kata.reference.generate(np.random.default_rng(3), **params)
    assert not _fails(kata, inputs, params, _float32_backward(inputs, 4096, 48))
    assert _fails(kata, inputs, params, _float32_backward(inputs, 4096, 48, drop_mean_term=True))
