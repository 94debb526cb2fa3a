"""Cross-entropy: hostile logits and targets with ignored rows, the float64 loss and dlogits, 8NV
compulsory bytes, and the float32 error scale of each output."""
import math

import numpy as np

#: rows per block of the float64 reference: a bench shape's N×V float64 arrays are 4 GB each, so
#: the reference works through them a few hundred MB at a time
_ROWS = 256


def _ignore_index(ignore: str) -> int:
    if ignore == "negative":
        return -100  # torch's default
    if ignore == "zero":
        return 0  # a class index: rows whose target is class 0 are the ignored ones
    raise ValueError(f"unknown ignore {ignore!r}")


def generate(rng: np.random.Generator, N: int, V: int, dist: str = "normal", ignore: str = "negative",
             mostly_ignored: int = 0, **_) -> dict:
    if dist == "normal":
        # A different offset per row (the loss ignores it; a kernel that mixes rows does not) and a
        # spread of a few units, so many classes matter to the sum.
        x = rng.uniform(-50.0, 50.0, (N, 1)) + rng.normal(0.0, 3.0, (N, V))
    elif dist == "large":
        # Rows near +1e4 and -1e4: exp without the max subtracted overflows to inf or underflows to 0.
        sign = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)[:, None]
        x = sign * 1.0e4 + rng.normal(0.0, 2.0, (N, V))
    elif dist == "peaked":
        # A wide spread (exp of most classes underflows float32) with the target far above the rest
        # (set below): p_t = 1 - 1e-9, so the loss is tiny and 1 - p_t cancels.
        x = rng.normal(0.0, 15.0, (N, V))
    else:
        raise ValueError(f"unknown dist {dist!r}")

    ii = _ignore_index(ignore)
    if ignore == "zero" and V == 1:
        ii = -100  # with one class and ignore_index 0 every row would be ignored
    low = 1 if ii == 0 else 0  # valid targets are never the ignore_index
    t = rng.integers(low, V, N) if V > low else np.zeros(N, np.int64)
    t[-1] = V - 1  # the last class, at the row's tail: a kernel that drops the tail misses it
    ignored = rng.random(N) < (0.9 if mostly_ignored else 0.25)
    if N >= 3:
        ignored[0] = True  # row 0 ignored: reading logits[row * V + t] with t = -100 is out of bounds
    ignored[-1] = False  # at least one valid row, so N_valid >= 1
    t[ignored] = ii
    if ii == 0 and V > 1:
        x[:, 0] += 5.0  # class 0 stands out, so the ignored rows' "target" has a sizeable p
    if dist == "peaked":
        x[np.arange(N), np.clip(t, 0, V - 1)] = x.max(axis=1) + rng.uniform(20.0, 40.0, N)
    return {"logits": x.astype(np.float32), "targets": t.astype(np.int32), "ignore_index": ii}


def _rows(inputs: dict, N: int, V: int):
    """(rows, x (float64), t, valid, m, s) per block of rows: m the row max, s = sum exp(x - m)."""
    logits = inputs["logits"].reshape(N, V)
    targets = inputs["targets"].astype(np.int64)
    ii = int(inputs["ignore_index"])
    for a in range(0, N, _ROWS):
        b = min(N, a + _ROWS)
        x = logits[a:b].astype(np.float64)
        t = targets[a:b]
        valid = t != ii
        m = x.max(axis=1, keepdims=True)
        s = np.exp(x - m).sum(axis=1, keepdims=True)
        yield slice(a, b), x, np.where(valid, t, 0), valid, m, s


def _n_valid(inputs: dict) -> int:
    return int(np.count_nonzero(inputs["targets"] != int(inputs["ignore_index"])))


def reference(inputs: dict, N: int, V: int, **_) -> dict:
    loss = np.zeros(N)
    d = np.zeros((N, V))
    nv = _n_valid(inputs)
    for rows, x, t, valid, m, s in _rows(inputs, N, V):
        ar = np.arange(x.shape[0])
        lse = m + np.log(s)
        loss[rows] = np.where(valid, lse[:, 0] - x[ar, t], 0.0)
        g = np.exp(x - lse)
        g[ar, t] -= 1.0
        g /= nv  # torch's reduction="mean" divides by the number of rows that are not ignored
        g[~valid] = 0.0
        d[rows] = g
    return {"loss": loss, "dlogits": d}


def cost(N: int, V: int, **_) -> dict:
    # Read the logits once and write dlogits once; targets and loss are 4 bytes per row. Per
    # element: a max, a subtract, an exp and an add for the statistics, an exp and a multiply for
    # the gradient.
    return {"bytes": 8 * N * V + 8 * N, "flops": 6 * N * V}


def error_scale(inputs: dict, N: int, V: int, **_) -> dict:
    # loss = (m - x_t) + log s. float32 errs by a few ulps of the largest quantity formed on the
    # way: m and x_t (up to 1e4, where lse = m + log s rounds by 5e-4), plus log s, whose relative
    # error is that of the float32 sum of V terms (a random walk: sqrt(V) rounding errors).
    # dlogits = (p - onehot) / N_valid with p = exp(x - lse): exp turns the absolute error of its
    # argument (that same scale) into a relative error of p; p_t - 1 adds an ulp of 1 at the target.
    # Ignored rows have scale 0: their loss and dlogits must be 0.
    loss = np.zeros(N)
    d = np.zeros((N, V))
    nv = _n_valid(inputs)
    root = math.sqrt(max(V, 1))
    for rows, x, t, valid, m, s in _rows(inputs, N, V):
        ar = np.arange(x.shape[0])
        loss[rows] = np.where(valid, np.abs(m[:, 0]) + np.abs(x[ar, t]) + root + 1.0, 0.0)
        g = np.exp(x - m) / s * (np.abs(x) + np.abs(m) + root + 1.0)
        g[ar, t] += 1.0
        g /= nv
        g[~valid] = 0.0
        d[rows] = g
    return {"loss": loss, "dlogits": d}


def baseline(torch, inputs: dict, N: int, V: int, **_):
    # What a training step calls: the mean cross-entropy (torch divides by the rows not ignored)
    # and its backward into the logits' .grad; the int64 targets torch wants are made once, outside.
    x = inputs["logits"].reshape(N, V).detach().requires_grad_(True)
    t = inputs["targets"].reshape(N).long()
    ii = int(inputs["ignore_index"])
    ce = torch.nn.functional.cross_entropy

    def step():
        x.grad = None
        ce(x, t, ignore_index=ii).backward()
        return x.grad

    return step
