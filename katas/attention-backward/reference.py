"""Attention backward: hostile Q, K, V, dO with the forward's O and LSE, the float64 dQ, dK, dV,
10·BHS²D FLOPs, and the per-element error scales."""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def _heads(B: int, H: int, S: int, work) -> None:
    """work(i) for every (batch, head) i, one at a time per thread: a bench shape's S×S float64
    matrices are 32 MB per head and several per head are live, so all heads at once would need
    tens of GB; numpy releases the GIL in exp and matmul, so the heads run in parallel."""
    if B * H * S * S < 1 << 22:  # small cases (the correctness stage's): threads cost more than they save
        for i in range(B * H):
            work(i)
    else:
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            list(pool.map(work, range(B * H)))


def _probs(q, k, D: int, causal: int):
    """(P, LSE) in float64 for one head: P = exp(QKᵀ/sqrt(D) - LSE), keys after the query masked."""
    s = q @ k.T / np.sqrt(D)
    if causal:
        s[~np.tril(np.ones(s.shape, bool))] = -np.inf
    m = s.max(axis=1, keepdims=True)
    lse = m + np.log(np.exp(s - m).sum(axis=1, keepdims=True))
    return np.exp(s - lse), lse[:, 0]


def generate(rng: np.random.Generator, B: int, H: int, S: int, D: int, causal: int = 0,
             dist: str = "normal", **_) -> dict:
    shape = (B, H, S, D)
    # V and dO have non-zero means and a different scale per head: a kernel that mixes heads, drops
    # a key or a query, or forgets a term is off by far more than the tolerance.
    v = rng.normal(0.5, 1.0, shape) * rng.uniform(0.5, 4.0, (B, H, 1, 1))
    do = rng.normal(-0.3, 1.0, shape) * rng.uniform(0.5, 4.0, (B, H, 1, 1))
    if dist == "normal":
        q = rng.normal(0.2, 1.0, shape)
        k = rng.normal(-0.1, 1.0, shape)
    elif dist == "peaked":
        # Scores spread over tens of units: each row is dominated by a few keys, anywhere in it.
        q = rng.normal(0.0, 2.5, shape)
        k = rng.normal(0.0, 2.5, shape)
    elif dist == "shifted":
        # Every key carries a common vector worth ~100 in each score: LSE is near 100 and
        # exp(score) overflows float32 unless LSE is subtracted first.
        q = rng.normal(1.0, 0.5, shape)
        k = rng.normal(0.0, 1.0, shape) + 100.0 / np.sqrt(D)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    q, k, v, do = (a.astype(np.float32) for a in (q, k, v, do))
    # The forward's outputs, as a float32 forward would hand them over: O and the natural-log LSE.
    o = np.empty(shape, np.float32)
    lse = np.empty((B, H, S), np.float32)
    qf, kf, vf = (a.reshape(B * H, S, D) for a in (q, k, v))
    of, lf = o.reshape(B * H, S, D), lse.reshape(B * H, S)

    def head(i: int) -> None:
        p, l_ = _probs(qf[i].astype(np.float64), kf[i].astype(np.float64), D, causal)
        of[i] = p @ vf[i].astype(np.float64)
        lf[i] = l_

    _heads(B, H, S, head)
    return {"Q": q, "K": k, "V": v, "O": o, "dO": do, "LSE": lse}


def _backward(inputs: dict, B: int, H: int, S: int, D: int, causal: int, scales: bool) -> dict:
    """dQ, dK, dV in float64 (scales=False), or the magnitudes their float32 errors scale with."""
    names = ("Q", "K", "V", "O", "dO")
    q, k, v, o, do = (inputs[n].reshape(B * H, S, D) for n in names)
    out = {n: np.empty((B, H, S, D)) for n in ("dQ", "dK", "dV")}
    flat = {n: a.reshape(B * H, S, D) for n, a in out.items()}
    r = 1.0 / np.sqrt(D)

    def head(i: int) -> None:
        qi, ki, vi, oi, doi = (a[i].astype(np.float64) for a in (q, k, v, o, do))
        p, _ = _probs(qi, ki, D, causal)
        if not scales:
            dp = doi @ vi.T
            ds = p * (dp - (doi * oi).sum(axis=1, keepdims=True))
            flat["dV"][i] = p.T @ doi
            flat["dQ"][i] = r * (ds @ ki)
            flat["dK"][i] = r * (ds.T @ qi)
            return
        # dS = P ∘ (dP - rowsum(dO∘O)): float32 errs in P (relative, a few ulps of the score),
        # in dP (bounded by sum_d |dO||V|) and in rowsum(dO∘O) (bounded by sum_d |dO||O|), so
        # a = |dO||V|ᵀ + sum|dO||O| bounds |dP - D| and its error; each product sums |terms|.
        a = np.abs(doi) @ np.abs(vi).T + (np.abs(doi) * np.abs(oi)).sum(axis=1, keepdims=True)
        pa = p * a
        flat["dV"][i] = p.T @ np.abs(doi)
        flat["dQ"][i] = r * (pa @ np.abs(ki))
        flat["dK"][i] = r * (pa.T @ np.abs(qi))

    _heads(B, H, S, head)
    return out


def reference(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    return _backward(inputs, B, H, S, D, causal, scales=False)


def cost(B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # Five S×S×D products per head (QKᵀ recomputed, dP = dO·Vᵀ, dV = Pᵀ·dO, dQ = dS·K, dK = dSᵀ·Q),
    # 2S²D FLOPs each: 2.5 times the forward; a causal mask needs half. Compulsory traffic: read Q,
    # K, V, O, dO and LSE once, write dQ, dK, dV once.
    flops = 10 * B * H * S * S * D
    return {"bytes": 4 * (8 * B * H * S * D + B * H * S), "flops": flops // 2 if causal else flops}


def error_scale(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # Per element, the sum of the magnitudes of its terms (see _backward): c = 1000 in kata.toml
    # allows about 1.2e-4 of it, room for float32 recomputation of P from a float32 LSE near 100.
    return _backward(inputs, B, H, S, D, causal, scales=True)


def baseline(torch, inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_):
    # PyTorch's scaled_dot_product_attention on float32 tensors, forward once, backward timed: the
    # fp32 path a user would call (the memory-efficient kernel recomputes P, as this kata does).
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v = (inputs[n].reshape(B, H, S, D).detach().requires_grad_(True) for n in ("Q", "K", "V"))
    do = inputs["dO"].reshape(B, H, S, D)
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    def step():
        q.grad = k.grad = v.grad = None
        torch.autograd.backward(out, do, retain_graph=True)
        return q.grad, k.grad, v.grad

    return step
