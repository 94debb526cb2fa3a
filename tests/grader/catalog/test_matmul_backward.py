"""The matmul-backward kata's reference: float32 products (split over the tokens or not) pass, a
dropped token or a wrong stride of Wᵀ fails, and the cost counts both products."""
import numpy as np
import pytest

from grader import catalog

EPS32 = float(np.finfo(np.float32).eps)


@pytest.fixture(scope="module")
def kata():
    return catalog.load("matmul-backward")


def _within(kata, inputs, params, got):
    ref = kata.reference.reference(inputs, **params)
    scale = kata.reference.error_scale(inputs, **params)
    return {k: bool(np.all(np.abs(got[k] - ref[k]) <= kata.tolerance.c * EPS32 * scale[k])) for k in ref}


@pytest.mark.parametrize("dist", ["mixed", "offset", "cancel"])
def test_float32_split_k_passes_dropped_token_fails(kata, dist):
    M, N, K = 523, 33, 17
    params = {"M": M, "N": N, "K": K, "dist": dist}
    inputs = kata.reference.generate(np.random.default_rng(3), **params)
    x, w, dy = inputs["X"], inputs["W"], inputs["dY"]
    assert x.dtype == np.float32 and x.shape == (M, K) and w.shape == (K, N) and dy.shape == (M, N)
    split = sum(x[a:a + 136].T @ dy[a:a + 136] for a in range(0, M, 136))  # four float32 partials
    assert _within(kata, inputs, params, {"dX": dy @ w.T, "dW": split}) == {"dX": True, "dW": True}
    dropped = x[:-3].T @ dy[:-3]  # a split-K slicing that loses the last M % S tokens
    assert _within(kata, inputs, params, {"dX": dy @ w.T, "dW": dropped})["dW"] is False


def test_wrong_stride_of_w_transpose_fails(kata):
    M, N, K = 40, 24, 16
    params = {"M": M, "N": N, "K": K}
    inputs = kata.reference.generate(np.random.default_rng(1), **params)
    w = inputs["W"].reshape(-1)
    as_if_k_wide = np.array([[w[(k * K + n) % w.size] for n in range(N)] for k in range(K)], np.float32)
    got = {"dX": inputs["dY"] @ as_if_k_wide.T, "dW": inputs["X"].T @ inputs["dY"]}
    assert _within(kata, inputs, params, got) == {"dX": False, "dW": True}


def test_cost_counts_two_products(kata):
    assert kata.reference.cost(M=16384, N=1024, K=1024)["flops"] == 4 * 16384 * 1024 * 1024
