"""LayerNorm backward: dx, dgamma, dbeta from dy, x and the forward's saved mean and rstd. Hostile
rows (the forward kata's, including a huge mean over a tiny spread), gradients with a per-column
offset (dbeta adds same-sign terms over every row), the float64 result, and the float32 error
scale of any summation order."""
import math

import numpy as np

EPS = 1e-5  # the forward's eps, folded into the saved rstd


def generate(rng: np.random.Generator, R: int, C: int, dist: str = "normal", **_) -> dict:
    if dist == "normal":
        x = rng.uniform(-5.0, 5.0, (R, 1)) + 10.0 ** rng.uniform(-2.0, 1.0, (R, 1)) * rng.normal(0.0, 1.0, (R, C))
    elif dist == "shifted":
        # The forward's trap: |mean| 1000-3000, standard deviation thousands of times smaller. The
        # saved statistics carry it; a kernel that recomputes them in float32 can lose it.
        sign = np.where(np.arange(R) % 2 == 0, 1.0, -1.0)[:, None]
        mean = sign * rng.uniform(1000.0, 3000.0, (R, 1))
        x = mean + (np.abs(mean) / rng.uniform(3000.0, 6000.0, (R, 1))) * rng.normal(0.0, 1.0, (R, C))
    elif dist == "spiky":
        x = rng.normal(0.3, 1.0, (R, C))
        spikes = rng.random((R, C)) < 0.01
        x[spikes] *= rng.uniform(50.0, 200.0, int(spikes.sum()))
        x[:, -1] += 100.0
    else:
        raise ValueError(f"unknown dist {dist!r}")
    x = x.astype(np.float32)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    rstd = 1.0 / np.sqrt(np.square(x64 - mean[:, None]).mean(axis=1) + EPS)
    # dy: a per-column offset (so dbeta and dgamma sum same-sign terms over all rows) plus noise
    # whose scale differs per row; gamma of both signs around 1.
    dy = rng.normal(0.0, 0.5, (1, C)) + 10.0 ** rng.uniform(-1.0, 0.5, (R, 1)) * rng.normal(0.0, 1.0, (R, C))
    return {"dy": dy.astype(np.float32), "x": x, "mean": mean.astype(np.float32),
            "rstd": rstd.astype(np.float32), "gamma": rng.normal(1.0, 0.5, C).astype(np.float32)}


def _terms(inputs: dict, R: int, C: int):
    dy = inputs["dy"].astype(np.float64).reshape(R, C)
    x = inputs["x"].astype(np.float64).reshape(R, C)
    mean = inputs["mean"].astype(np.float64)[:, None]
    rstd = inputs["rstd"].astype(np.float64)[:, None]
    xhat = (x - mean) * rstd  # with the saved statistics, as torch's backward uses them
    gdy = inputs["gamma"].astype(np.float64) * dy
    return dy, xhat, gdy, rstd


def reference(inputs: dict, R: int, C: int, **_) -> dict:
    dy, xhat, gdy, rstd = _terms(inputs, R, C)
    a = gdy.mean(axis=1, keepdims=True)
    b = (gdy * xhat).mean(axis=1, keepdims=True)
    return {"dx": rstd * (gdy - a - xhat * b), "dgamma": (dy * xhat).sum(axis=0), "dbeta": dy.sum(axis=0)}


def cost(R: int, C: int, **_) -> dict:
    # Read dy and x, write dx (12RC), read mean and rstd (8R), read gamma, write dgamma and dbeta
    # (12C); about 11 FLOPs per element.
    return {"bytes": 12 * R * C + 8 * R + 12 * C, "flops": 11 * R * C}


def error_scale(inputs: dict, R: int, C: int, **_) -> dict:
    """In units of c * eps32 per element. A float32 sum of n terms in any order (a tree, a loop,
    atomics arriving in any order) loses about sqrt(n) + 2 roundings of the sum of the terms'
    magnitudes: n = C for dx's two row sums, n = R for dgamma and dbeta's column sums. The other
    terms are a few roundings of each product."""
    dy, xhat, gdy, rstd = _terms(inputs, R, C)
    s_c, s_r = math.sqrt(C) + 2.0, math.sqrt(R) + 2.0
    a_abs = np.abs(gdy).mean(axis=1, keepdims=True)
    b_abs = np.abs(gdy * xhat).mean(axis=1, keepdims=True)
    dx = rstd * (3.0 * np.abs(gdy) + (s_c + 2.0) * a_abs + np.abs(xhat) * (s_c + 4.0) * b_abs)
    return {"dx": dx, "dgamma": (s_r + 3.0) * np.abs(dy * xhat).sum(axis=0), "dbeta": s_r * np.abs(dy).sum(axis=0)}


def baseline(torch, inputs: dict, R: int, C: int, **_):
    # What autograd runs for layer_norm's backward: the fused native kernel, given the saved stats.
    dy, x = inputs["dy"].reshape(R, C), inputs["x"].reshape(R, C)
    mean, rstd = inputs["mean"].reshape(R, 1), inputs["rstd"].reshape(R, 1)
    gamma = inputs["gamma"]
    beta = torch.zeros_like(gamma)
    return lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [C], mean, rstd, gamma, beta, [True, True, True])
