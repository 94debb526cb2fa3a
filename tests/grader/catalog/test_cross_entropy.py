"""The cross-entropy kata's reference: float32 kernels pass (at a bench vocabulary too), the
N_valid normalisation and ignored rows are what the bound demands, naive exp overflows."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("cross-entropy")


def _float32(inputs, N, V, divide_by=None, via_lse=False):
    """A float32 kernel's arithmetic: (m - x_t) + log s, or lse = m + log s rounded first."""
    x = inputs["logits"].reshape(N, V)
    t = inputs["targets"]
    valid = t != inputs["ignore_index"]
    tt = np.where(valid, t, 0)
    m = x.max(axis=1, keepdims=True)
    s = np.exp(x - m).sum(axis=1, keepdims=True, dtype=np.float32)
    n = np.float32(divide_by or np.count_nonzero(valid))
    if via_lse:
        lse = m + np.log(s)
        loss, p = lse[:, 0] - x[np.arange(N), tt], np.exp(x - lse)
    else:
        loss, p = (m[:, 0] - x[np.arange(N), tt]) + np.log(s[:, 0]), np.exp(x - m) / s
    p[np.arange(N), tt] -= np.float32(1)
    d = p / n
    d[~valid] = 0
    return {"loss": np.where(valid, loss, np.float32(0)), "dlogits": d}


def _ok(kata, inputs, params, got):
    ref = kata.reference.reference(inputs, **params)
    scale = kata.reference.error_scale(inputs, **params)
    tol = kata.tolerance
    return all(np.all(np.abs(got[k].astype(np.float64) - ref[k])
                      <= tol.atol + tol.rtol * np.abs(ref[k]) + tol.c * EPS32 * scale[k]) for k in ref)


@pytest.mark.parametrize("dist,ignore", [("normal", "negative"), ("large", "zero"), ("peaked", "negative")])
def test_float32_passes_and_dividing_by_n_fails(kata, dist, ignore):
    params = {"N": 8, "V": 1027, "dist": dist, "ignore": ignore}
    inputs = kata.reference.generate(np.random.default_rng(4), **params)
    assert inputs["logits"].dtype == np.float32 and inputs["targets"].dtype == np.int32
    nv = np.count_nonzero(inputs["targets"] != inputs["ignore_index"])
    assert 1 <= nv < 8
    for via_lse in (False, True):
        assert _ok(kata, inputs, params, _float32(inputs, 8, 1027, via_lse=via_lse))
    assert not _ok(kata, inputs, params, _float32(inputs, 8, 1027, divide_by=8))


def test_bench_vocabulary_passes_in_float32(kata):
    params = {"N": 2, "V": 128256, "dist": "large"}
    inputs = kata.reference.generate(np.random.default_rng(0), **params)
    assert _ok(kata, inputs, params, _float32(inputs, 2, 128256, via_lse=True))


def test_ignored_rows_are_zero_and_gradients_sum_to_zero(kata):
    params = {"N": 5, "V": 64, "ignore": "zero"}
    inputs = kata.reference.generate(np.random.default_rng(1), **params)
    ref = kata.reference.reference(inputs, **params)
    ignored = inputs["targets"] == 0
    assert ignored[0] and not ignored[-1]
    assert np.all(ref["loss"][ignored] == 0) and np.all(ref["dlogits"][ignored] == 0)
    assert np.allclose(ref["dlogits"].sum(axis=1), 0.0, atol=1e-12)
    assert np.all(ref["loss"][~ignored] > 0)


def test_large_logits_break_naive_exp(kata):
    x = kata.reference.generate(np.random.default_rng(0), N=2, V=64, dist="large")["logits"]
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(np.exp(x).sum(axis=1)))
