"""The softmax kata's reference: hostile rows stay finite in float64, float32 softmax passes, naive exp does not."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("softmax")


def _bound(kata, inputs, params):
    ref = kata.reference.reference(inputs, **params)["y"]
    tol = kata.tolerance
    scale = kata.reference.error_scale(inputs, **params)["y"]
    return ref, tol.atol + tol.rtol * np.abs(ref) + tol.c * EPS32 * scale


@pytest.mark.parametrize("dist", ["normal", "large", "spiky"])
def test_stable_float32_softmax_passes(kata, dist):
    params = {"R": 3, "C": 1025, "dist": dist}
    inputs = kata.reference.generate(np.random.default_rng(3), **params)
    ref, bound = _bound(kata, inputs, params)
    assert np.all(np.isfinite(ref)) and np.allclose(ref.sum(axis=1), 1.0)
    x = inputs["x"]
    e = np.exp(x - x.max(axis=1, keepdims=True))
    y32 = e / e.sum(axis=1, keepdims=True, dtype=np.float32)
    assert y32.dtype == np.float32
    assert np.all(np.abs(y32 - ref) <= bound)


def test_large_inputs_break_naive_exp(kata):
    params = {"R": 2, "C": 64, "dist": "large"}
    x = kata.reference.generate(np.random.default_rng(0), **params)["x"]
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    assert not np.all(np.isfinite(naive))


def test_dropping_the_last_column_fails(kata):
    params = {"R": 2, "C": 33, "dist": "spiky"}
    inputs = kata.reference.generate(np.random.default_rng(1), **params)
    ref, bound = _bound(kata, inputs, params)
    x = inputs["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    short = e / e[:, :-1].sum(axis=1, keepdims=True)
    assert np.any(np.abs(short - ref) > bound)
