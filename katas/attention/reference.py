"""Attention: hostile Q, K, V, the float64 attention, 4BHS²D FLOPs, and the per-element error scale."""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def generate(rng: np.random.Generator, B: int, H: int, S: int, D: int, causal: int = 0,
             dist: str = "normal", **_) -> dict:
    shape = (B, H, S, D)
    # V has a non-zero mean and a different scale per head: a kernel that mixes heads, drops a key
    # or forgets to divide by the sum is off by far more than the tolerance.
    v = rng.normal(0.5, 1.0, shape) * rng.uniform(0.5, 4.0, (B, H, 1, 1))
    if dist == "normal":
        q = rng.normal(0.2, 1.0, shape)
        k = rng.normal(-0.1, 1.0, shape)
    elif dist == "peaked":
        # Logits spread over tens of units: each row is dominated by a few keys, anywhere in it.
        q = rng.normal(0.0, 2.5, shape)
        k = rng.normal(0.0, 2.5, shape)
    elif dist == "shifted":
        # Every key carries a common vector worth ~100 in each logit: softmax ignores it, but
        # exp(100) overflows float32 unless the running maximum is subtracted.
        q = rng.normal(1.0, 0.5, shape)
        k = rng.normal(0.0, 1.0, shape) + 100.0 / np.sqrt(D)
    else:
        raise ValueError(f"unknown dist {dist!r}")
    return {"Q": q.astype(np.float32), "K": k.astype(np.float32), "V": v.astype(np.float32)}


def _per_head(inputs: dict, B: int, H: int, S: int, D: int, causal: int, v, out: np.ndarray) -> np.ndarray:
    """out[b, h] = P[b, h] @ v[b, h] in float64, where P is the softmax of Q Kᵀ / sqrt(D) (causal:
    keys after the query masked). One (batch, head) at a time per thread: a bench shape's S x S
    probabilities are 128 MB per head, so all heads at once would need tens of GB, and numpy
    releases the GIL in exp and matmul, so the heads run in parallel."""
    q = inputs["Q"].reshape(B * H, S, D)
    k = inputs["K"].reshape(B * H, S, D)
    v = np.asarray(v).reshape(B * H, S, D)
    flat = out.reshape(B * H, S, D)
    above = ~np.tril(np.ones((S, S), bool)) if causal else None

    def head(i: int) -> None:
        logits = q[i].astype(np.float64) @ k[i].astype(np.float64).T / np.sqrt(D)
        if above is not None:
            logits[above] = -np.inf
        logits -= logits.max(axis=1, keepdims=True)
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        flat[i] = logits @ v[i].astype(np.float64)

    if B * H * S * S < 1 << 22:  # small cases (the correctness stage's): threads cost more than they save
        for i in range(B * H):
            head(i)
    else:
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            list(pool.map(head, range(B * H)))
    return out


def reference(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    return {"O": _per_head(inputs, B, H, S, D, causal, inputs["V"], np.empty((B, H, S, D)))}


def cost(B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # Q·Kᵀ and P·V are 2·S·S·D FLOPs each per head; a causal mask needs half of them. The
    # compulsory traffic is reading Q, K, V and writing O once.
    flops = 4 * B * H * S * S * D
    return {"bytes": 16 * B * H * S * D, "flops": flops // 2 if causal else flops}


def error_scale(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # O[i, d] = sum_j p_ij v_jd. float32 errors in the logits and in exp move each p_ij by a small
    # relative amount, so the error of O[i, d] scales with sum_j p_ij |v_jd| (the "row's scale"):
    # c = 1000 in kata.toml allows about 1.2e-4 of it.
    return {"O": _per_head(inputs, B, H, S, D, causal, np.abs(inputs["V"]), np.empty((B, H, S, D)))}


def baseline(torch, inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_):
    # PyTorch's scaled_dot_product_attention on float32 tensors: the fp32 path a user would call.
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v = (inputs[n].reshape(B, H, S, D) for n in ("Q", "K", "V"))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return lambda: sdpa(q, k, v, is_causal=bool(causal))
