"""The rmsnorm kata's reference: float32 kernels pass its bound, the classic slips do not."""
import numpy as np
import pytest

from grader import catalog

KATA = catalog.load("rmsnorm")
ref = KATA.reference
EPS32 = float(np.finfo(np.float32).eps)


def _case(dist, R=4, C=4096, seed=0):
    params = {"R": R, "C": C, "dist": dist}
    inputs = ref.generate(np.random.default_rng(seed), **params)
    return params, inputs


def _fails(inputs, params, name, got):
    want = ref.reference(inputs, **params)[name]
    tol = KATA.tolerance
    bound = tol.atol + tol.rtol * np.abs(want) + tol.c * EPS32 * ref.error_scale(inputs, **params)[name]
    with np.errstate(invalid="ignore"):
        return not np.all(np.abs(got - want) <= bound)


def _float32_rmsnorm(inputs, R, C, count=None, eps_inside=True):
    """What a float32 kernel computes, with a sequential (worst-ordered) float32 sum of squares."""
    h = inputs["x"].reshape(R, C) + inputs["r"].reshape(R, C)
    ss = np.cumsum(h * h, axis=1, dtype=np.float32)[:, -1:]
    eps = np.float32(inputs["eps"])
    ms = ss / np.float32(count or C)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = 1 / np.sqrt(ms + eps) if eps_inside else 1 / np.sqrt(ms) + eps
        return h, (h * s.astype(np.float32)) * inputs["gamma"]


@pytest.mark.parametrize("dist", ["normal", "tiny", "offset"])
@pytest.mark.parametrize("C", [33, 8192])
def test_float32_rmsnorm_passes(dist, C):
    params, inputs = _case(dist, C=C)
    h, y = _float32_rmsnorm(inputs, 4, C)
    assert h.dtype == y.dtype == np.float32
    assert not _fails(inputs, params, "h", h) and not _fails(inputs, params, "y", y)


def test_tiny_rows_need_eps_inside_the_root_and_row_zero_is_zero():
    params, inputs = _case("tiny")
    assert not np.any(inputs["x"][0] + inputs["r"][0])
    _, y = _float32_rmsnorm(inputs, 4, 4096, eps_inside=False)
    assert np.isnan(y[0]).all() and _fails(inputs, params, "y", y)


@pytest.mark.parametrize("dist", ["normal", "offset"])
def test_mean_over_the_float4_count_fails(dist):
    params, inputs = _case(dist)
    _, y = _float32_rmsnorm(inputs, 4, 4096, count=1024)
    assert _fails(inputs, params, "y", y)
