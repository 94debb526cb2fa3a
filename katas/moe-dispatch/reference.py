"""MoE dispatch: hostile routings, the exact stable grouping, the compulsory bytes, the torch baseline."""
import numpy as np


def _top2(rng: np.random.Generator, logits: np.ndarray, N: int) -> np.ndarray:
    # Gumbel top-2: two distinct experts per token, drawn without replacement in proportion to
    # exp(logits), the larger first (so either slot may hold any expert).
    g = logits[None, :] + rng.gumbel(size=(N, logits.size))
    top = np.argpartition(-g, 1, axis=1)[:, :2]
    first = np.take_along_axis(g, top, axis=1)
    return np.take_along_axis(top, np.argsort(-first, axis=1), axis=1)


def generate(rng: np.random.Generator, N: int, E: int, D: int, dist: str = "uniform", **_) -> dict:
    if E == 1:
        ids = np.zeros((N, 2), np.int64)  # top-2 of one expert: both slots go to it
    elif dist == "uniform":
        ids = _top2(rng, np.zeros(E), N)
    elif dist == "skewed":
        # Power-law popularity over a random order of the experts: a few hot ones, a long tail
        # that receives few or no tokens.
        ids = _top2(rng, -1.5 * np.log1p(rng.permutation(E).astype(np.float64)), N)
    elif dist == "empty":
        # Only about a third of the experts (at least two) receive tokens; the others' counts are 0.
        live = rng.permutation(E)[: max(2, E // 3)]
        logits = np.full(E, -np.inf)
        logits[live] = 0.0
        ids = _top2(rng, logits, N)
    elif dist == "one_expert":
        # Every token has expert `hot` among its two, in a random slot: that expert gets N rows.
        hot = int(rng.integers(E))
        other = (hot + rng.integers(1, E, N)) % E
        ids = np.stack([np.full(N, hot), other], axis=1)
        swap = rng.random(N) < 0.5
        ids[swap] = ids[swap][:, ::-1]
    else:
        raise ValueError(f"unknown dist {dist!r}")
    # Rows of distinct values, so a row copied from the wrong token (or the wrong slot's token)
    # never matches.
    x = rng.standard_normal((N, D), dtype=np.float32)
    return {"topk_ids": np.ascontiguousarray(ids, np.int32), "x": x}


def reference(inputs: dict, N: int, E: int, D: int, **_) -> dict:
    flat = inputs["topk_ids"].reshape(-1).astype(np.int64)
    order = np.argsort(flat, kind="stable")  # the stable order: by expert, then by s
    counts = np.bincount(flat, minlength=E)
    return {"counts": counts.astype(np.int32), "offsets": (np.cumsum(counts) - counts).astype(np.int32),
            "perm": order.astype(np.int32), "gathered": inputs["x"].reshape(N, D)[order // 2]}


def cost(N: int, E: int, D: int, **_) -> dict:
    # Each row of x read once and written twice; the ids read, perm written, counts and offsets.
    return {"bytes": 12 * N * D + 16 * N + 8 * E, "flops": 0}


def baseline(torch, inputs: dict, N: int, E: int, D: int, **_):
    ids = inputs["topk_ids"].reshape(-1).long()  # int64 once, outside the timed call
    x = inputs["x"].reshape(N, D)

    def dispatch():
        order = torch.argsort(ids, stable=True)
        counts = torch.bincount(ids, minlength=E)
        offsets = torch.cumsum(counts, 0) - counts
        return counts, offsets, order, x.index_select(0, order // 2)

    return dispatch
