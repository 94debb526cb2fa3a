"""LayerNorm forward: hostile rows (a huge mean over a tiny spread among them), the float64 result,
8RC + 8R compulsory bytes, and the float32 error scale of a two-pass or Welford kernel."""
import math

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)


def generate(rng: np.random.Generator, R: int, C: int, dist: str = "normal", **_) -> dict:
    if dist == "normal":
        # A different offset and spread per row, spreads over three decades: a kernel that mixes
        # rows, or normalises by the wrong statistic, is off by far more than the tolerance.
        offset = rng.uniform(-5.0, 5.0, (R, 1))
        spread = 10.0 ** rng.uniform(-2.0, 1.0, (R, 1))
        x = offset + spread * rng.normal(0.0, 1.0, (R, C))
    elif dist == "shifted":
        # |mean| of 1000-3000 and a standard deviation 3000-6000 times smaller: E[x^2] - E[x]^2 in
        # float32 loses every digit of the variance (its rounding error, eps * mean^2, exceeds the
        # variance itself), while the mean of the deviations squared keeps them.
        sign = np.where(np.arange(R) % 2 == 0, 1.0, -1.0)[:, None]
        mean = sign * rng.uniform(1000.0, 3000.0, (R, 1))
        x = mean + (np.abs(mean) / rng.uniform(3000.0, 6000.0, (R, 1))) * rng.normal(0.0, 1.0, (R, C))
    elif dist == "spiky":
        # Small values plus a few elements 50-200 times larger, one always in the last column: the
        # variance is dominated by a handful of elements anywhere in the row.
        x = rng.normal(0.3, 1.0, (R, C))
        spikes = rng.random((R, C)) < 0.01
        x[spikes] *= rng.uniform(50.0, 200.0, int(spikes.sum()))
        x[:, -1] += 100.0
    else:
        raise ValueError(f"unknown dist {dist!r}")
    # gamma of both signs around 1, beta not zero: a kernel that swaps or drops them fails.
    gamma = rng.normal(1.0, 0.5, C)
    beta = rng.normal(0.0, 1.0, C)
    return {"x": x.astype(np.float32), "gamma": gamma.astype(np.float32),
            "beta": beta.astype(np.float32), "eps": float(np.float32(1e-5))}


def _stats(inputs: dict, R: int, C: int):
    x = inputs["x"].astype(np.float64).reshape(R, C)
    mean = x.mean(axis=1, keepdims=True)
    var = np.square(x - mean).mean(axis=1, keepdims=True)  # biased, as torch.layer_norm
    return x, mean, 1.0 / np.sqrt(var + float(inputs["eps"]))


def reference(inputs: dict, R: int, C: int, **_) -> dict:
    x, mean, rstd = _stats(inputs, R, C)
    gamma = inputs["gamma"].astype(np.float64)
    beta = inputs["beta"].astype(np.float64)
    return {"y": (x - mean) * rstd * gamma + beta, "mean": mean[:, 0], "rstd": rstd[:, 0]}


def cost(R: int, C: int, **_) -> dict:
    # Read x and write y once, write mean and rstd, read gamma and beta; ~8 FLOPs per element.
    return {"bytes": 8 * R * C + 8 * R + 8 * C, "flops": 8 * R * C}


def error_scale(inputs: dict, R: int, C: int, expected: dict | None = None, **_) -> dict:
    """In units of c * eps32 per element. S = sqrt(C) + 2: the float32 rounding errors of a C-term
    sum, in any order, add like a random walk. The mean is then off by about eps * S * mean|x|,
    i.e. kappa = S * mean|x| * rstd times eps in units of the row's standard deviation; that error
    squared is the variance's error (the deviations' sum of squares grows by C * (mean error)^2),
    so rstd may be off by S + eps * kappa^2 eps relative. y inherits both through gamma."""
    if expected is not None:  # the reference's own mean and rstd: no second variance pass
        x = inputs["x"].astype(np.float64).reshape(R, C)
        mean = np.asarray(expected["mean"], np.float64).reshape(R, 1)
        rstd = np.asarray(expected["rstd"], np.float64).reshape(R, 1)
    else:
        x, mean, rstd = _stats(inputs, R, C)
    gamma = np.abs(inputs["gamma"].astype(np.float64))
    beta = np.abs(inputs["beta"].astype(np.float64))
    s = math.sqrt(C) + 2.0
    mean_abs = np.abs(x).mean(axis=1, keepdims=True)
    kappa = s * mean_abs * rstd
    rel_rstd = s + EPS32 * kappa * kappa
    normalized = np.abs(x - mean) * rstd
    y = gamma * (kappa + normalized * (rel_rstd + 3.0)) + beta
    return {"y": y, "mean": (s * mean_abs)[:, 0], "rstd": (rel_rstd * rstd)[:, 0]}


def baseline(torch, inputs: dict, R: int, C: int, **_):
    # torch's fused kernel also computes the mean and rstd it would save for the backward.
    x = inputs["x"].reshape(R, C)
    gamma, beta, eps = inputs["gamma"], inputs["beta"], float(inputs["eps"])
    return lambda: torch.nn.functional.layer_norm(x, (C,), gamma, beta, eps)
