"""RMSNorm: hostile rows, the float64 h and y, 16RC compulsory bytes, the float32 error scale."""
import math

import numpy as np


def generate(rng: np.random.Generator, R: int, C: int, dist: str = "normal", eps: float = 1e-5, **_) -> dict:
    def normal(mean: float, sd: float) -> np.ndarray:  # float32 draws: 2^27-element bench rows stay cheap
        return rng.standard_normal((R, C), dtype=np.float32) * np.float32(sd) + np.float32(mean)

    if dist == "normal":
        # Row scales over four decades (a kernel that mixes rows, or normalises by the wrong count,
        # is off by far more than the tolerance) and a residual with an offset of its own.
        scale = (10.0 ** rng.uniform(-2.0, 2.0, (R, 1))).astype(np.float32)
        x = normal(0.0, 1.0) * scale
        r = normal(0.3, 0.5) * scale
    elif dist == "tiny":
        # |h| ~ 1e-4: mean(h^2) ~ 1e-8 is far below eps, so eps decides y; a kernel that drops it,
        # or adds it outside the square root, is wrong everywhere. Row 0 is h = 0 exactly
        # (r = -x): only eps keeps rsqrt finite there (0 * inf is NaN).
        x = normal(0.0, 1e-4)
        r = normal(0.0, 1e-4)
        r[0] = -x[0]
    elif dist == "offset":
        # Near 1e3 with a small spread: the mean of h^2 (not its variance) sets the scale.
        x = normal(1.0e3, 1.0)
        r = rng.uniform(-5.0, 5.0, (R, C)).astype(np.float32)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    # gamma has mixed signs and scales, and its last element is large, so a dropped tail column
    # of y shows.
    gamma = rng.normal(1.0, 0.5, C) * rng.choice([0.1, 1.0, 3.0], C)
    gamma[-1] = 4.0
    return {"x": x, "r": r, "gamma": gamma.astype(np.float32), "eps": np.float32(eps)}


def reference(inputs: dict, R: int, C: int, **_) -> dict:
    h = inputs["x"].reshape(R, C).astype(np.float64)
    h += inputs["r"].reshape(R, C)  # exact: the sum of two float32 values fits in float64
    ms = np.einsum("ij,ij->i", h, h) / C
    y = h * (1.0 / np.sqrt(ms + float(inputs["eps"])))[:, None]
    y *= inputs["gamma"].astype(np.float64)
    return {"h": h, "y": y}


def cost(R: int, C: int, **_) -> dict:
    # Read x and r, write h and y, read gamma once; an add, a square, an add and two multiplies
    # per element.
    return {"bytes": 16 * R * C + 4 * C, "flops": 5 * R * C}


def error_scale(inputs: dict, R: int, C: int, **_) -> dict:
    # h is one rounded add (half an ulp of |h|). y inherits the float32 sum of C squares, whose
    # rounding errors add like a random walk (sqrt(C) of them, relative to the sum, halved by the
    # square root), plus a few ulps from rsqrt and the two multiplies.
    out = reference(inputs, R=R, C=C)
    return {"h": np.abs(out["h"]), "y": (math.sqrt(max(C, 1)) + 4.0) * np.abs(out["y"])}


def baseline(torch, inputs: dict, R: int, C: int, **_):
    x, r, g = inputs["x"].reshape(R, C), inputs["r"].reshape(R, C), inputs["gamma"]
    eps = float(inputs["eps"])

    def unfused():
        h = x + r
        return h, h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * g

    return unfused
