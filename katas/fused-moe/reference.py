"""fused-moe: a mixture-of-experts MLP layer. Each token goes to its top-k experts; each expert is
a SwiGLU MLP, y = (silu(x·Wg) * (x·Wu))·Wd; the token's output is the routing-weighted sum over
its experts. The float64 answer, the FLOPs of the routed work, and a float32 error scale."""
import math

import numpy as np


def generate(rng: np.random.Generator, T: int, H: int, I: int, E: int, k: int, dist: str = "uniform", **_) -> dict:
    x = rng.normal(0.0, 1.0, (T, H))
    w1 = rng.normal(0.0, 1.0, (E, H, 2 * I)) / math.sqrt(H)  # [gate | up] along the last axis
    w2 = rng.normal(0.0, 1.0, (E, I, H)) / math.sqrt(I)
    if dist == "uniform":
        logits = rng.normal(0.0, 1.0, (T, E))
    elif dist == "skewed":
        # Most tokens pick the same few experts (a hot expert with hundreds of rows, cold ones
        # with none): the grouped GEMM's per-expert row counts range from 0 to T.
        logits = rng.normal(0.0, 1.0, (T, E)) + np.linspace(4.0, -4.0, E)[None, :]
    else:
        raise ValueError(f"unknown dist {dist!r}")
    ids = np.argsort(-logits, axis=1)[:, :k]
    top = np.take_along_axis(logits, ids, axis=1)
    w = np.exp(top - top.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return {"X": x.astype(np.float32), "ids": ids.astype(np.int32), "weights": w.astype(np.float32),
            "W1": w1.astype(np.float32), "W2": w2.astype(np.float32)}


def _expert(x, w1, w2, I):
    h = x @ w1
    gate, up = h[:, :I], h[:, I:]
    return (gate / (1.0 + np.exp(-gate)) * up) @ w2, np.abs(x) @ np.abs(w1)


def reference(inputs: dict, T: int, H: int, I: int, E: int, k: int, **_) -> dict:
    x = inputs["X"].astype(np.float64).reshape(T, H)
    ids, w = inputs["ids"].reshape(T, k), inputs["weights"].astype(np.float64).reshape(T, k)
    w1, w2 = inputs["W1"].astype(np.float64).reshape(E, H, 2 * I), inputs["W2"].astype(np.float64).reshape(E, I, H)
    y = np.zeros((T, H))
    for e in range(E):
        t, s = np.nonzero(ids == e)
        if t.size:
            y[t] += w[t, s][:, None] * _expert(x[t], w1[e], w2[e], I)[0]
    return {"Y": y}


def cost(T: int, H: int, I: int, E: int, k: int, **_) -> dict:
    # Every expert's weights read once (the routed experts of a large batch are all of them),
    # X read and Y written once; 2·(2I)·H + 2·I·H FLOPs per (token, expert) pair.
    return {"bytes": 4 * (E * 3 * H * I + 2 * T * H + 2 * T * k), "flops": 6 * T * k * H * I}


def error_scale(inputs: dict, T: int, H: int, I: int, E: int, k: int, **_) -> dict:
    # Each pair's output errs like two float32 GEMMs in a row: sqrt(H) of |x||w1| through SwiGLU's
    # slope (|up| and |silu(gate)| bound it), then sqrt(I) of |h||w2|; weighted by the routing
    # weight and summed over the token's k experts.
    x = np.abs(inputs["X"].astype(np.float64).reshape(T, H))
    ids, w = inputs["ids"].reshape(T, k), inputs["weights"].astype(np.float64).reshape(T, k)
    w1, w2 = inputs["W1"].astype(np.float64).reshape(E, H, 2 * I), inputs["W2"].astype(np.float64).reshape(E, I, H)
    scale = np.zeros((T, H))
    for e in range(E):
        t, s = np.nonzero(ids == e)
        if not t.size:
            continue
        h = inputs["X"].astype(np.float64).reshape(T, H)[t] @ w1[e]
        a = x[t] @ np.abs(w1[e])
        g, u = h[:, :I], h[:, I:]
        dh = math.sqrt(H) * (a[:, :I] * np.abs(u) * 1.1 + a[:, I:] * np.abs(g)) + np.abs(g * u)
        scale[t] += w[t, s][:, None] * (dh @ np.abs(w2[e]) + math.sqrt(I) * (np.abs(g * u) @ np.abs(w2[e])))
    return {"Y": scale + 1e-30}


def baseline(torch, inputs: dict, T: int, H: int, I: int, E: int, k: int, **_):
    # The torch loop over experts a user writes: gather each expert's tokens, two matmuls with
    # SwiGLU between, scale and index_add back.
    torch.backends.cuda.matmul.allow_tf32 = False
    x = inputs["X"].reshape(T, H)
    ids, w = inputs["ids"].reshape(T, k).long(), inputs["weights"].reshape(T, k)
    w1, w2 = inputs["W1"].reshape(E, H, 2 * I), inputs["W2"].reshape(E, I, H)

    def run():
        y = torch.zeros_like(x)
        for e in range(E):
            t, s = torch.nonzero(ids == e, as_tuple=True)
            h = x[t] @ w1[e]
            y.index_add_(0, t, (torch.nn.functional.silu(h[:, :I]) * h[:, I:]) @ w2[e] * w[t, s][:, None])
        return y
    return run
