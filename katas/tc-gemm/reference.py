"""tc-gemm: bf16 inputs (as their 16-bit patterns), the float64 product of their exact values,
2MNK FLOPs, and the scale of a float32 accumulation's error."""
import math

import numpy as np


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float values -> bf16 bit patterns (as int16), rounded to nearest even like __float2bfloat16."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).view(np.int16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns -> their exact values in float64."""
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def generate(rng: np.random.Generator, M: int, N: int, K: int, dist: str = "mixed", **_) -> dict:
    if dist == "mixed":
        # Mixed signs around a non-zero mean, row scales of A and column scales of B spanning four
        # decades: a value taken from the wrong row or column is off by orders of magnitude.
        a = rng.normal(0.3, 1.0, (M, K)) * (10.0 ** rng.uniform(-2, 2, (M, 1)))
        b = rng.normal(-0.2, 1.0, (K, N)) * (10.0 ** rng.uniform(-2, 2, (1, N)))
    elif dist == "offset":
        # Every product positive and near 10^4 (bf16 keeps 8 bits: values 96..104 in steps of
        # 0.5): a dropped or doubled k term moves C by about 1/K.
        a = 100.0 + rng.uniform(-4.0, 4.0, (M, K))
        b = 100.0 + rng.uniform(-4.0, 4.0, (K, N))
    elif dist == "cancel":
        # Rows of A that nearly sum to zero against a B with a large common part.
        a = rng.normal(0.0, 1.0, (M, K))
        a -= a.mean(axis=1, keepdims=True) * 0.999
        b = 50.0 + rng.normal(0.0, 1.0, (K, N))
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"A": to_bf16(a), "B": to_bf16(b)}


def reference(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    a = bf16_values(inputs["A"]).reshape(M, K)
    b = bf16_values(inputs["B"]).reshape(K, N)
    return {"C": a @ b}


def cost(M: int, N: int, K: int, **_) -> dict:
    # Compulsory traffic: read A and B once (2 bytes an element), write C once (4 bytes).
    return {"bytes": 2 * (M * K + K * N) + 4 * M * N, "flops": 2 * M * N * K}


def error_scale(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    # Products of bf16 values are exact in float32 (8 + 8 significant bits), so all the error is
    # the float32 accumulation's: rounding errors relative to partial sums bounded by
    # sum_k |a_ik||b_kj|, adding up like a random walk over K terms in any order (tiles, split-K,
    # a tensor core's internal adders).
    a = np.abs(bf16_values(inputs["A"]).reshape(M, K))
    b = np.abs(bf16_values(inputs["B"]).reshape(K, N))
    return {"C": math.sqrt(max(K, 1)) * (a @ b)}


def baseline(torch, inputs: dict, M: int, N: int, K: int, **_):
    # cuBLAS bf16 GEMM (tensor cores, float32 accumulation); it writes C in bf16, half the bytes of
    # the kata's float32 C, which at this shape is a rounding error of its time.
    a = inputs["A"].view(torch.bfloat16).reshape(M, K)
    b = inputs["B"].view(torch.bfloat16).reshape(K, N)
    return lambda: torch.matmul(a, b)
