"""Matmul: hostile inputs, the float64 product, 2MNK FLOPs, and the scale of the float32 error."""
import math

import numpy as np


def generate(rng: np.random.Generator, M: int, N: int, K: int, dist: str = "mixed", **_) -> dict:
    if dist == "mixed":
        # Mixed signs around a non-zero mean, with row scales of A and column scales of B spanning
        # four decades: an element computed from the wrong row or column is off by orders of magnitude.
        a = rng.normal(0.3, 1.0, (M, K)) * (10.0 ** rng.uniform(-2, 2, (M, 1)))
        b = rng.normal(-0.2, 1.0, (K, N)) * (10.0 ** rng.uniform(-2, 2, (1, N)))
    elif dist == "offset":
        # Every product is positive and near 10^4: a dropped or doubled k term moves C by ~1/K.
        a = 100.0 + rng.uniform(-1.0, 1.0, (M, K))
        b = 100.0 + rng.uniform(-1.0, 1.0, (K, N))
    elif dist == "cancel":
        # Rows of A that nearly sum to zero against a B with a large common part: the exact C is
        # small against sum |a||b|, the bound is relative to the latter, and a wrong k still shows.
        a = rng.normal(0.0, 1.0, (M, K))
        a -= a.mean(axis=1, keepdims=True) * 0.999
        b = 50.0 + rng.normal(0.0, 1.0, (K, N))
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"A": a.astype(np.float32), "B": b.astype(np.float32)}


def reference(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    a = inputs["A"].astype(np.float64).reshape(M, K)
    b = inputs["B"].astype(np.float64).reshape(K, N)
    return {"C": a @ b}


def cost(M: int, N: int, K: int, **_) -> dict:
    # Compulsory traffic: read A and B once, write C once.
    return {"bytes": 4 * (M * K + K * N + M * N), "flops": 2 * M * N * K}


def order_bound(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    # Any order of a length-K float32 dot product (products rounded, or fused): gamma(K + 1) of the
    # magnitudes; within it a kernel is correct, only less accurate than a blocked sum.
    a = np.abs(inputs["A"].astype(np.float64).reshape(M, K))
    b = np.abs(inputs["B"].astype(np.float64).reshape(K, N))
    return {"C": float(_gamma(K + 1)) * (a @ b)}


def _gamma(terms):
    """gamma(k) = k u / (1 - k u), u = 2^-24: the error bound, relative to the sum of magnitudes, of
    a float32 sum of k + 1 terms in any order (Higham, section 4.2)."""
    k = np.maximum(np.asarray(terms, np.float64) - 1.0, 0.0) * 2.0 ** -24
    return k / np.maximum(1.0 - k, 1e-300)


def error_scale(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    # A float32 dot product of length K errs by rounding errors relative to the partial sums,
    # which are bounded by sum_k |a_ik||b_kj|; in any summation order (sequential, tiled, split-K)
    # they add up like a random walk, so sqrt(K) of them (c = 2 in kata.toml leaves a wide margin).
    a = np.abs(inputs["A"].astype(np.float64).reshape(M, K))
    b = np.abs(inputs["B"].astype(np.float64).reshape(K, N))
    return {"C": math.sqrt(max(K, 1)) * (a @ b)}


def baseline(torch, inputs: dict, M: int, N: int, K: int, **_):
    # cuBLAS SGEMM in full fp32: TF32 would trade 10 mantissa bits for tensor-core speed.
    torch.backends.cuda.matmul.allow_tf32 = False
    a = inputs["A"].reshape(M, K)
    b = inputs["B"].reshape(K, N)
    return lambda: torch.matmul(a, b)
