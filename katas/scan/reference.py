"""Scan: inputs, the exact wrapped prefix sum, the compulsory traffic."""
import numpy as np


def generate(rng: np.random.Generator, n: int, dist: str = "mixed", **_) -> dict:
    if dist == "mixed":
        # Small values of both signs around a non-zero mean, plus rare huge ones: every prefix
        # differs, and the huge ones make the running sum wrap around int32 in long inputs.
        x = rng.integers(-1000, 3000, n, dtype=np.int64)
        huge = rng.random(n) < 0.01
        x[huge] = rng.integers(-(2**31), 2**31 - 1, int(huge.sum()), dtype=np.int64)
    elif dist == "overflow":
        # Every value near the top of int32: the sum wraps on nearly every element, so a kernel
        # that saturates, widens to int64 and truncates late, or uses float gets it wrong.
        x = rng.integers(2**30, 2**31 - 1, n, dtype=np.int64)
    elif dist == "alternating":
        # +big, -big pairs: the prefix swings by ~2^31 each step while the total stays small.
        x = rng.integers(2**29, 2**31 - 1, n, dtype=np.int64)
        x[1::2] = -x[1::2] + rng.integers(-5, 6, n // 2)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    x[0] = x[0] if x[0] != 0 else 7  # a zero first element would let an exclusive scan pass y[0]
    return {"x": x.astype(np.int32)}


def reference(inputs: dict, n: int, **_) -> dict:
    # uint32 arithmetic wraps modulo 2^32 exactly as the GPU's 32-bit add does.
    y = np.cumsum(inputs["x"].view(np.uint32), dtype=np.uint32).view(np.int32)
    return {"y": y}


def cost(n: int, **_) -> dict:
    # Read x once, write y once; integer adds are not floating-point work.
    return {"bytes": 8 * n, "flops": 0}


def baseline(torch, inputs: dict, **_):
    x = inputs["x"]
    # dtype=int32 keeps torch from widening to int64 (which would also double the bytes written).
    return lambda: torch.cumsum(x, 0, dtype=torch.int32)
