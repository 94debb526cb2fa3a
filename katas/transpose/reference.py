"""Transpose: inputs where every element is told apart, the exact transpose, 8RC bytes, the baseline."""
import numpy as np


def generate(rng: np.random.Generator, R: int, C: int, **_) -> dict:
    # Each element encodes its own position (r * C + c, plus 0.5 so none is zero) with a random
    # sign: below 2^23 elements (every CPU case) all values differ, so an element written to the
    # wrong place, or a tile copied without being transposed, never equals the one that belongs there.
    pos = np.arange(R * C, dtype=np.float32).reshape(R, C)
    pos += 0.5
    pos *= rng.choice(np.array([-1.0, 1.0], np.float32), (R, C))
    return {"A": pos}


def reference(inputs: dict, R: int, C: int, **_) -> dict:
    return {"B": np.ascontiguousarray(inputs["A"].reshape(R, C).T)}


def cost(R: int, C: int, **_) -> dict:
    return {"bytes": 8 * R * C, "flops": 0}


def baseline(torch, inputs: dict, R: int, C: int, **_):
    a = inputs["A"].reshape(R, C)  # device buffers arrive flat
    return lambda: a.t().contiguous()
