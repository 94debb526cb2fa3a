"""Softmax: hostile rows, the float64 softmax, 8RC compulsory bytes, and the float32 error scale."""
import math

import numpy as np


def generate(rng: np.random.Generator, R: int, C: int, dist: str = "normal", **_) -> dict:
    if dist == "normal":
        # A different offset per row (softmax ignores it; a kernel that mixes rows does not) and a
        # spread of a few units, so many elements matter to the sum, not just the largest.
        x = rng.uniform(-50.0, 50.0, (R, 1)) + rng.normal(0.0, 3.0, (R, C))
    elif dist == "large":
        # Rows near +1e4 and -1e4: exp without the max subtracted overflows to inf (or underflows
        # every term to 0), and 0/0 or inf/inf is NaN.
        sign = np.where(np.arange(R) % 2 == 0, 1.0, -1.0)[:, None]
        x = sign * 1.0e4 + rng.normal(0.0, 2.0, (R, C))
    elif dist == "spiky":
        # Mostly small values plus a few spikes 20 to 40 above them, some tied: the sum is dominated
        # by a handful of elements anywhere in the row, including its last one.
        x = rng.normal(0.0, 1.0, (R, C))
        spikes = rng.random((R, C)) < 0.01
        x[spikes] += rng.choice([20.0, 30.0, 40.0], int(spikes.sum()))
        x[:, -1] += 30.0
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"x": x.astype(np.float32)}


def reference(inputs: dict, R: int, C: int, **_) -> dict:
    x = inputs["x"].astype(np.float64).reshape(R, C)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": e / e.sum(axis=1, keepdims=True)}


def cost(R: int, C: int, **_) -> dict:
    # Read x once, write y once; a subtract, an exp, an add and a multiply per element.
    return {"bytes": 8 * R * C, "flops": 4 * R * C}


def error_scale(inputs: dict, R: int, C: int, expected: dict | None = None, **_) -> dict:
    # Each output is exp(x - max) / sum: a few ulps from exp, plus the float32 sum of C positive
    # terms, whose rounding errors add like a random walk (sqrt(C) of them, relative to the sum).
    # expected: the reference's outputs, when the grader has them (no second float64 softmax).
    y = expected["y"] if expected is not None else reference(inputs, R=R, C=C)["y"]
    return {"y": math.sqrt(max(C, 1)) * np.asarray(y, np.float64)}


def baseline(torch, inputs: dict, R: int, C: int, **_):
    x = inputs["x"].reshape(R, C)
    return lambda: torch.softmax(x, dim=-1)
