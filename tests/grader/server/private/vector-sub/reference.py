"""Vector subtract: the exactly rounded difference, 12n compulsory bytes."""
import numpy as np


def generate(rng: np.random.Generator, n: int, **_) -> dict:
    a = rng.standard_normal(n, dtype=np.float32) * np.float32(100.0)
    b = rng.standard_normal(n, dtype=np.float32)
    return {"a": a, "b": b}


def reference(inputs: dict, **_) -> dict:
    # the float64 difference of two float32 values rounded to float32 is the float32 difference
    return {"c": (inputs["a"].astype(np.float64) - inputs["b"].astype(np.float64)).astype(np.float32)}


def cost(n: int, **_) -> dict:
    return {"bytes": 12 * n, "flops": n}
