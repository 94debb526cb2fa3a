"""Attention: hostile Q, K, V, the float64 attention, 4BHS²D FLOPs, and the per-element error scale."""
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


def _probabilities(inputs: dict, B: int, H: int, S: int, D: int, causal: int) -> np.ndarray:
    q = inputs["Q"].astype(np.float64).reshape(B, H, S, D)
    k = inputs["K"].astype(np.float64).reshape(B, H, S, D)
    logits = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D)
    if causal:
        logits = np.where(np.tril(np.ones((S, S), bool)), logits, -np.inf)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def reference(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    v = inputs["V"].astype(np.float64).reshape(B, H, S, D)
    return {"O": _probabilities(inputs, B, H, S, D, causal) @ v}


def cost(B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # Q·Kᵀ and P·V are 2·S·S·D FLOPs each per head; a causal mask needs half of them. The
    # compulsory traffic is reading Q, K, V and writing O once.
    flops = 4 * B * H * S * S * D
    return {"bytes": 16 * B * H * S * D, "flops": flops // 2 if causal else flops}


def error_scale(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # O[i, d] = sum_j p_ij v_jd. float32 errors in the logits and in exp move each p_ij by a small
    # relative amount, so the error of O[i, d] scales with sum_j p_ij |v_jd| (the "row's scale"):
    # c = 1000 in kata.toml allows about 1.2e-4 of it.
    v = np.abs(inputs["V"].astype(np.float64).reshape(B, H, S, D))
    return {"O": _probabilities(inputs, B, H, S, D, causal) @ v}


def baseline(torch, inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_):
    # PyTorch's scaled_dot_product_attention on float32 tensors: the fp32 path a user would call.
    torch.backends.cuda.matmul.allow_tf32 = False
    q, k, v = (inputs[n].reshape(B, H, S, D) for n in ("Q", "K", "V"))
    sdpa = torch.nn.functional.scaled_dot_product_attention
    return lambda: sdpa(q, k, v, is_causal=bool(causal))
