"""Top-p sampling: hostile logits and sampling settings, the exact float64 decision, and a check that
accepts another token only where the reference's own decision sits within DELTA of a boundary."""
import numpy as np

#: How far (in probability mass, the row's total being 1) a float32 kernel's cumulative sums may
#: stray from the exact ones. A tree or blocked float32 sum of 128256 probabilities is off by about
#: 1e-6; 1e-5 leaves room and still admits only the neighbours of a boundary.
DELTA = 1e-5


def _logits(rng, R: int, V: int, dist: str) -> np.ndarray:
    if dist == "llm":
        # Language-model-like rows: a broad normal body, a few strong candidates, a per-row offset
        # (softmax ignores it; a kernel that forgets the max does not) and some masked tokens.
        x = rng.normal(0.0, 2.5, (R, V)) + rng.uniform(-30.0, 30.0, (R, 1))
        for r in range(R):
            top = rng.choice(V, size=min(V, 5), replace=False)
            x[r, top] += rng.uniform(3.0, 9.0, top.size)
        x[rng.random((R, V)) < 0.02] = -np.inf
    elif dist == "ties":
        # A coarse grid: the largest logit and the logits at the nucleus's edge are shared by many
        # tokens, so the order among equal logits (lower index first) decides the token.
        x = np.round(rng.normal(0.0, 1.5, (R, V)) * 2.0) / 2.0
    elif dist == "huge":
        # Logits near +-1e4 with mixed signs: exp without the max overflows, and the float bits of
        # negative logits order backwards unless all of them are flipped.
        x = rng.normal(0.0, 3.0, (R, V)) + rng.choice([-1.0e4, 1.0e4], (R, 1))
        x[rng.random((R, V)) < 0.05] = -np.inf
    elif dist == "flat":
        # Nearly uniform rows: the nucleus holds most of the vocabulary, so the inverse CDF walks far.
        x = rng.uniform(-0.05, 0.05, (R, V)) - 1.0
    else:
        raise ValueError(f"unknown dist {dist!r}")
    finite = np.isfinite(x).any(axis=1)
    x[~finite, 0] = 0.0  # every row keeps at least one finite logit
    return x.astype(np.float32)


def _settings(rng, R: int, sampling: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row temperature, top_p and uniform. "mixed" puts the extremes in one batch."""
    t = np.exp(rng.uniform(np.log(0.3), np.log(2.0), R))
    p = rng.uniform(0.5, 0.99, R)
    u = rng.random(R)
    if sampling == "mixed":
        kind = rng.integers(0, 6, R)
        p = np.where(kind == 1, 1.0, p)  # the whole distribution
        p = np.where(kind == 2, 1e-6, p)  # argmax
        t = np.where(kind == 3, 1e-3, t)  # cold: nearly greedy
        t = np.where(kind == 4, 50.0, t)  # hot: nearly uniform
        u = np.where(kind == 5, rng.choice([0.0, np.nextafter(np.float32(1), np.float32(0))], R), u)
    elif sampling == "greedy":
        p = np.full(R, 1e-7)
    elif sampling == "full":
        p = np.ones(R)
    elif sampling == "cold":
        t = np.full(R, 1e-4)
    elif sampling == "hot":
        t = np.full(R, 100.0)
    elif sampling != "typical":
        raise ValueError(f"unknown sampling {sampling!r}")
    return t.astype(np.float32), p.astype(np.float32), u.astype(np.float32)


def generate(rng: np.random.Generator, R: int, V: int, dist: str = "llm", sampling: str = "mixed", **_) -> dict:
    t, p, u = _settings(rng, R, sampling)
    return {"logits": _logits(rng, R, V, dist), "temperature": t, "top_p": p, "u": u}


def _order(x: np.ndarray) -> np.ndarray:
    """Descending logit, lower index first among equal logits (a stable sort of -x)."""
    return np.argsort(-x.astype(np.float64), axis=-1, kind="stable")


def _cdf(inputs: dict, r: int, V: int):
    """Row r: (order, c) with c[k] the exact mass of the k most likely tokens, c[0] = 0."""
    x = inputs["logits"].reshape(-1, V)[r].astype(np.float64)
    z = x / float(inputs["temperature"][r])
    w = np.exp(z - z.max())  # -inf logits get mass 0
    order = _order(x)
    c = np.concatenate(([0.0], np.cumsum(w[order]))) / w.sum()
    return order, c


def _decide(c: np.ndarray, p: float, u: float) -> tuple[int, int]:
    """(K, j): the nucleus is the K most likely tokens, the smallest prefix with mass >= p (all V
    if rounding keeps every prefix below p); the sample is position j, the first whose cumulative
    mass exceeds u * c[K]."""
    V = c.size - 1
    K = min(int(np.searchsorted(c[1:], p, side="left")) + 1, V)
    j = min(int(np.searchsorted(c[1:], u * c[K], side="right")), K - 1)
    return K, j


def reference(inputs: dict, R: int, V: int, **_) -> dict:
    token = np.empty(R, np.int32)
    for r in range(R):
        order, c = _cdf(inputs, r, V)
        _, j = _decide(c, float(inputs["top_p"][r]), float(inputs["u"][r]))
        token[r] = order[j]
    return {"token": token}


def verdict(inputs: dict, r: int, t: int, V: int) -> tuple[str, str]:
    """Row r's token t against the exact decision: ("exact" | "cdf-boundary" | "nucleus-boundary" |
    "wrong", a sentence). Accepted besides the reference's own token: a token the decision would
    pick were each cumulative mass it compares moved by at most DELTA."""
    order, c = _cdf(inputs, r, V)
    p, u = float(inputs["top_p"][r]), float(inputs["u"][r])
    K, j = _decide(c, p, u)
    want = int(order[j])
    if t == want:
        return "exact", ""
    if not 0 <= t < V:
        return "wrong", f"row {r}: token = {t} is outside [0, {V}); expected {want}"
    rank = int(np.flatnonzero(order == t)[0])
    # Nucleus sizes the decision admits under DELTA: c[K'-1] < p + DELTA and c[K'] >= p - DELTA.
    k_lo = min(int(np.searchsorted(c[1:], p - DELTA, side="left")) + 1, V)
    k_hi = min(int(np.searchsorted(c[1:], p + DELTA, side="left")) + 1, V)

    def hits(k: int) -> bool:
        target = u * c[k]
        return rank < k and c[rank] - DELTA <= target < c[rank + 1] + DELTA

    if hits(K):
        return "cdf-boundary", ""
    # Over the admitted sizes the target u * c[K'] sweeps [u * c[k_lo], u * c[k_hi]].
    if rank < k_hi and c[rank] - DELTA <= u * c[k_hi] and u * c[k_lo] < c[rank + 1] + DELTA:
        return "nucleus-boundary", ""
    where = (f"the {K} most likely tokens hold mass {c[K]:.9g} >= top_p = {p:.9g}, "
             f"u * mass = {u * c[K]:.9g} falls at rank {j + 1} (token {want}, interval "
             f"[{c[j]:.9g}, {c[j + 1]:.9g}))")
    near = f"; that decision is not within {DELTA:g} of a boundary, so only token {want} is accepted"
    if k_lo != k_hi or c[j] + DELTA > u * c[K] or u * c[K] > c[j + 1] - DELTA:
        near = f"; that decision is within {DELTA:g} of a boundary, but your token is not among those it admits"
    mine = (f"outside the nucleus (rank {rank + 1} > {K})" if rank >= k_hi
            else f"at rank {rank + 1}, interval [{c[rank]:.9g}, {c[rank + 1]:.9g})")
    return "wrong", f"row {r}: token = {t} is {mine}; expected {want}: {where}{near}"


def check(inputs: dict, outputs: dict, expected: dict, R: int, V: int, **_) -> list[str]:
    """Exact token, or one a decision within DELTA of a boundary admits; rows whose token equals
    the reference's are not examined further (the bench case has 256 rows of 128256)."""
    got = np.asarray(outputs["token"]).reshape(R).astype(np.int64)
    want = np.asarray(expected["token"]).reshape(R)
    problems = []
    for r in np.flatnonzero(got != want):
        kind, message = verdict(inputs, int(r), int(got[r]), V)
        if kind == "wrong":
            problems.append(message)
    return problems


def cost(R: int, V: int, **_) -> dict:
    # Read the logits once, the three settings, write one token per row.
    return {"bytes": 4 * R * V + 16 * R, "flops": 0}


def baseline(torch, inputs: dict, R: int, V: int, **_):
    # What a user writes in PyTorch: softmax at the temperature, a full sort, a cumulative sum,
    # and the inverse CDF by binary search (no torch.multinomial: the uniform is given).
    x = inputs["logits"].reshape(R, V)
    t = inputs["temperature"].reshape(R, 1)
    p = inputs["top_p"].reshape(R, 1)
    u = inputs["u"].reshape(R, 1)

    def run():
        probs = torch.softmax(x / t, dim=1)
        sorted_p, idx = torch.sort(probs, dim=1, descending=True, stable=True)
        c = torch.cumsum(sorted_p, dim=1)
        k = (torch.searchsorted(c, p) + 1).clamp_(max=V)
        j = torch.searchsorted(c, u * c.gather(1, k - 1), right=True)
        return idx.gather(1, torch.minimum(j, k - 1))

    return run
