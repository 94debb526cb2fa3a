"""Histogram: skewed samples, exact counts, the compulsory traffic."""
import numpy as np


def generate(rng: np.random.Generator, n: int, bins: int, dist: str = "skewed", **_) -> dict:
    if dist == "skewed":
        # Realistic data is never uniform: half the samples follow a power law over bins (ranked
        # in a random order, so the hot bins are not simply bin 0), a tenth pile on a few hot
        # bins, the rest are uniform. Hot bins are where atomics contend.
        perm = rng.permutation(bins).astype(np.int32)
        # Zipf (exponent 1.5) truncated to the bins, sampled by inverse CDF: fast at n = 2^28.
        cdf = np.cumsum(np.arange(1, bins + 1, dtype=np.float64) ** -1.5)
        ranks = np.searchsorted(cdf / cdf[-1], rng.random(n), side="right")
        s = perm[np.minimum(ranks, bins - 1)]
        part = rng.random(n, dtype=np.float32)
        uniform = part < 0.4
        s[uniform] = rng.integers(0, bins, int(uniform.sum()), dtype=np.int32)
        hot = part > 0.9
        s[hot] = rng.choice(perm[-3:], int(hot.sum()))
    elif dist == "one_bin":
        # Every sample in one bin (not bin 0): the worst case for contention.
        s = np.full(n, rng.integers(0, bins))
    elif dist == "uniform":
        s = rng.integers(0, bins, n)
    elif dist == "edges":
        # Only the first and the last bin: catches off-by-one bin ranges and a missed last bin.
        s = np.where(rng.random(n) < 0.5, 0, bins - 1)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"samples": s.astype(np.int32)}


def reference(inputs: dict, n: int, bins: int, **_) -> dict:
    return {"counts": np.bincount(inputs["samples"], minlength=bins).astype(np.uint32)}


def cost(n: int, bins: int, **_) -> dict:
    # Read every sample once; the bins are written once (negligible next to n).
    return {"bytes": 4 * n + 4 * bins, "flops": 0}


def baseline(torch, inputs: dict, bins: int, **_):
    s = inputs["samples"]
    return lambda: torch.bincount(s, minlength=bins)
