"""gelu-linear: Y = GELU(X·W + bias) with the exact GELU; hostile inputs, the float64 answer, the
FLOPs and bytes of the fused operation, and the scale of a float32 GEMM's error through GELU."""
import math

import numpy as np
from scipy.special import erf


def generate(rng: np.random.Generator, M: int, N: int, K: int, dist: str = "mixed", **_) -> dict:
    if dist == "mixed":
        # Mixed signs, row scales of X over four decades: pre-activations from tiny (GELU ~ z/2)
        # to large (GELU ~ z or 0), so a missing bias, a tanh approximation or a wrong row shows.
        x = rng.normal(0.1, 1.0, (M, K)) * (10.0 ** rng.uniform(-2, 1, (M, 1)))
        w = rng.normal(0.0, 1.0, (K, N)) / math.sqrt(max(K, 1))
        b = rng.normal(0.0, 1.0, N)
    elif dist == "knee":
        # Pre-activations within a few units of zero, where GELU bends and its approximations differ
        # most; a bias large against the product, so forgetting it or adding it after GELU shows.
        x = rng.uniform(-1.0, 1.0, (M, K))
        w = rng.uniform(-1.0, 1.0, (K, N)) / math.sqrt(max(K, 1))
        b = rng.uniform(-3.0, 3.0, N)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"X": x.astype(np.float32), "W": w.astype(np.float32), "bias": b.astype(np.float32)}


def _pre(inputs, M, N, K):
    x = inputs["X"].astype(np.float64).reshape(M, K)
    w = inputs["W"].astype(np.float64).reshape(K, N)
    return x @ w + inputs["bias"].astype(np.float64)[None, :]


def reference(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    z = _pre(inputs, M, N, K)
    return {"Y": 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)))}


def cost(M: int, N: int, K: int, **_) -> dict:
    # Compulsory traffic of the fused kernel: X, W, bias read once, Y written once.
    return {"bytes": 4 * (M * K + K * N + N + M * N), "flops": 2 * M * N * K}


def error_scale(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    # The GEMM's float32 error (sqrt(K) sum |x||w|, as in matmul) passes through GELU, whose slope
    # is at most 1.13, plus the epilogue's own rounding (the add, erf's few ulps, the products):
    # a few ulps of |z|.
    x = np.abs(inputs["X"].astype(np.float64).reshape(M, K))
    w = np.abs(inputs["W"].astype(np.float64).reshape(K, N))
    z = np.abs(_pre(inputs, M, N, K))
    return {"Y": 1.2 * math.sqrt(max(K, 1)) * (x @ w) + 2.0 * z + 1e-30}


def baseline(torch, inputs: dict, M: int, N: int, K: int, **_):
    # What a user writes: nn.functional.linear's addmm (cuBLAS, fp32, TF32 off) then an exact gelu,
    # two kernels with the M×N pre-activation through memory between them.
    torch.backends.cuda.matmul.allow_tf32 = False
    x, w, b = inputs["X"].reshape(M, K), inputs["W"].reshape(K, N), inputs["bias"]
    return lambda: torch.nn.functional.gelu(torch.addmm(b, x, w))
