"""Reduce: inputs, the float64 sum, the compulsory traffic, and the scale of the float32 error."""
import math
import weakref

import numpy as np


_SCALES = np.array([0.01, 0.01, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0], np.float32)


def generate(rng: np.random.Generator, n: int, dist: str = "mixed", **_) -> dict:
    if dist == "offset":
        # Large offsets: a float32 running sum loses the low digits of every addend.
        x = 1.0e4 + rng.uniform(-1.0, 1.0, n)
    elif dist == "negative":
        x = -(rng.exponential(1.0, n) + 0.1)
    elif dist == "mixed":
        # Mixed signs and scales around a non-zero mean, so dropping elements changes the sum.
        # Scale 0.01 / 1 / 10 with probability 0.2 / 0.7 / 0.1, from one int8 draw into a table of
        # ten: rng.choice with p took 20 s at the bench's 2^28 elements, most of a first GPU grade.
        x = rng.standard_normal(n, dtype=np.float32) * np.float32(2.0) + np.float32(0.75)
        x *= _SCALES[rng.integers(0, 10, n, dtype=np.int8)]
    else:
        raise ValueError(f"unknown dist {dist!r}")
    if dist != "offset":
        # Spikes ~100x the typical magnitude at the first element, the last four (the n % 4 tail a
        # float4 loop leaves) and a few random places: the bound scales with sum|x| and log2(n), so
        # without them a kernel that drops one ordinary element of a large input would pass.
        spots = np.unique(np.concatenate(([0], np.arange(max(n - 4, 0), n), rng.integers(0, n, 3))))
        sign = -1.0 if dist == "negative" else rng.choice([-1.0, 1.0], spots.size)
        x[spots] = sign * rng.uniform(100.0, 300.0, spots.size)
    return {"x": x.astype(np.float32)}


#: (the input, weakly held, n, sum |x| in float64) of the last reference: error_scale uses it only
#: for the very same array, still alive; replaced whole (one reference's, never a mix)
_LAST = None


def reference(inputs: dict, n: int, **_) -> dict:
    global _LAST
    x64 = inputs["x"].astype(np.float64)
    total = x64.sum()
    # sum |x| from the same float64 copy: the error scale's, without a second 2 GiB conversion at 2^28
    _LAST = (weakref.ref(inputs["x"]), n, float(np.abs(x64, out=x64).sum())) if isinstance(
        inputs["x"], np.ndarray) else None
    return {"out": np.array([total])}


def cost(n: int, **_) -> dict:
    return {"bytes": 4 * n + 4, "flops": n}


def order_bound(inputs: dict, n: int, **_) -> dict:
    # What any summation order can err by, a sequential running sum included (n terms and the
    # zero the accumulator starts from): within it a kernel is correct, only less accurate.
    return {"out": np.array([float(_gamma(n + 1)) * float(np.abs(inputs["x"].astype(np.float64)).sum())])}


def _gamma(terms):
    """gamma(k) = k u / (1 - k u), u = 2^-24: the error bound, relative to the sum of magnitudes, of
    a float32 sum of k + 1 terms in any order (Higham, section 4.2)."""
    k = np.maximum(np.asarray(terms, np.float64) - 1.0, 0.0) * 2.0 ** -24
    return k / np.maximum(1.0 - k, 1e-300)


def error_scale(inputs: dict, n: int, **_) -> dict:
    # Tree and atomic sums err by O(log2 n) roundings, each relative to the magnitudes summed.
    last = _LAST
    if last is not None and last[1] == n and last[0]() is inputs["x"]:
        magnitudes = last[2]
    else:
        magnitudes = float(np.abs(inputs["x"].astype(np.float64)).sum())
    return {"out": np.array([math.log2(max(n, 2)) * magnitudes])}


def baseline(torch, inputs: dict, **_):
    x = inputs["x"]
    return lambda: torch.sum(x)
