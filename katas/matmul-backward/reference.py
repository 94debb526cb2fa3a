"""Matmul backward: hostile X, W, dY, the float64 dX and dW, 4MNK FLOPs, and the scale of the float32 error."""
import math

import numpy as np


def generate(rng: np.random.Generator, M: int, N: int, K: int, dist: str = "mixed", **_) -> dict:
    if dist == "mixed":
        # Mixed signs around a non-zero mean, with scales spanning four decades per row of X and dY
        # (tokens) and per column of W: an element built from the wrong row or column is far off.
        x = rng.normal(0.3, 1.0, (M, K)) * (10.0 ** rng.uniform(-2, 2, (M, 1)))
        w = rng.normal(-0.2, 1.0, (K, N)) * (10.0 ** rng.uniform(-2, 2, (1, N)))
        dy = rng.normal(0.1, 1.0, (M, N)) * (10.0 ** rng.uniform(-1, 1, (M, 1)))
    elif dist == "offset":
        # Every product is positive and near 100: a dropped or doubled term moves a sum by ~1/L.
        x = 10.0 + rng.uniform(-1.0, 1.0, (M, K))
        w = 10.0 + rng.uniform(-1.0, 1.0, (K, N))
        dy = 10.0 + rng.uniform(-1.0, 1.0, (M, N))
    elif dist == "cancel":
        # Columns of dY nearly sum to zero over the tokens against an X with a large common part:
        # dW is small against sum |x||dy|, the bound is relative to the latter, a wrong token shows.
        x = 50.0 + rng.normal(0.0, 1.0, (M, K))
        dy = rng.normal(0.0, 1.0, (M, N))
        dy -= dy.mean(axis=0, keepdims=True) * 0.999
        w = rng.normal(0.0, 1.0, (K, N))
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"X": x.astype(np.float32), "W": w.astype(np.float32), "dY": dy.astype(np.float32)}


def _mats(inputs: dict, M: int, N: int, K: int, absolute: bool = False):
    out = []
    for name, shape in (("X", (M, K)), ("W", (K, N)), ("dY", (M, N))):
        a = inputs[name].astype(np.float64).reshape(shape)
        out.append(np.abs(a) if absolute else a)
    return out


def reference(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    x, w, dy = _mats(inputs, M, N, K)
    return {"dX": dy @ w.T, "dW": x.T @ dy}


def cost(M: int, N: int, K: int, **_) -> dict:
    # Two products of 2MNK FLOPs; compulsory traffic: read X, W, dY once, write dX and dW once.
    return {"bytes": 4 * (2 * M * K + 2 * K * N + M * N), "flops": 4 * M * N * K}


def error_scale(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    # A float32 dot product of length L errs by rounding errors relative to its partial sums, which
    # are bounded by sum |a||b|; in any order (tiled, split-K partials added later) they add like a
    # random walk: sqrt(L) of them. dX sums over N, dW over M.
    x, w, dy = _mats(inputs, M, N, K, absolute=True)
    return {"dX": math.sqrt(max(N, 1)) * (dy @ w.T), "dW": math.sqrt(max(M, 1)) * (x.T @ dy)}


def baseline(torch, inputs: dict, M: int, N: int, K: int, **_):
    # What autograd runs for Y = X @ W: two cuBLAS SGEMMs (dY·Wᵀ and Xᵀ·dY), full fp32.
    torch.backends.cuda.matmul.allow_tf32 = False
    x = inputs["X"].reshape(M, K).detach().requires_grad_(True)
    w = inputs["W"].reshape(K, N).detach().requires_grad_(True)
    dy = inputs["dY"].reshape(M, N)
    y = x @ w

    def step():
        x.grad = w.grad = None
        torch.autograd.backward(y, dy, retain_graph=True)
        return x.grad, w.grad

    return step
