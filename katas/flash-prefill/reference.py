"""flash-prefill: bf16 Q, K, V (as their 16-bit patterns), softmax attention in float64 from their
exact values, a bf16 output checked within bf16's rounding of O and of the probabilities."""
import math

import numpy as np


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float values -> bf16 bit patterns (as int16), round to nearest even."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16).view(np.int16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def generate(rng: np.random.Generator, B: int, H: int, S: int, D: int, causal: int = 0, dist: str = "normal",
             **_) -> dict:
    shape = (B, H, S, D)
    q, k, v = rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(shape)
    if dist == "peaked":
        # Scores up to ~30 apart: one key dominates each row, so a softmax without its max
        # subtracted overflows and a missed rescale of the running sum shows.
        q *= 4.0
        k *= 4.0
    elif dist == "shifted":
        # Every score shifted by the same large amount and V far from zero: the max subtraction
        # and the final division by the row sum both matter.
        q += 3.0
        k += 3.0
        v += 10.0
    return {"Q": to_bf16(q), "K": to_bf16(k), "V": to_bf16(v)}


def _probabilities(inputs: dict, B: int, H: int, S: int, D: int, causal: int):
    q, k = (bf16_values(inputs[n]).reshape(B, H, S, D) for n in ("Q", "K"))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D)
    if causal:
        s = np.where(np.tril(np.ones((S, S), bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def reference(inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    p = _probabilities(inputs, B, H, S, D, causal)
    return {"O": p @ bf16_values(inputs["V"]).reshape(B, H, S, D)}


def cost(B: int, H: int, S: int, D: int, causal: int = 0, **_) -> dict:
    # Compulsory traffic: Q, K, V read once, O written once (bf16). FLOPs: QKᵀ and PV, 2·S·S·D
    # each per head; causal halves them.
    flops = 4 * B * H * S * S * D // (2 if causal else 1)
    return {"bytes": 2 * 4 * B * H * S * D, "flops": flops}


def check(inputs: dict, outputs: dict, expected: dict, B: int, H: int, S: int, D: int, causal: int = 0,
          **_) -> list[str]:
    """bf16 O within |O - exact| <= 2^-8 |exact| + 2^-7 sum_j p_j |v_j| + 1e-6 max|v|: O's own
    rounding, the probabilities rounded to bf16 for the P·V product, and float32 sums."""
    p = _probabilities(inputs, B, H, S, D, causal)
    v = np.abs(bf16_values(inputs["V"]).reshape(B, H, S, D))
    got = bf16_values(np.asarray(outputs["O"])).reshape(B, H, S, D)
    want = np.asarray(expected["O"]).reshape(B, H, S, D)
    bound = 2.0 ** -8 * np.abs(want) + 2.0 ** -7 * (p @ v) + 1e-6 * float(v.max(initial=1.0))
    bad = ~(np.abs(got - want) <= bound)
    if not bad.any():
        return []
    b, h, s, d = (int(x) for x in np.argwhere(bad)[0])
    return [(f"O[{b}][{h}][{s}][{d}] = {got[b, h, s, d]!r}, expected {want[b, h, s, d]!r} (within "
             f"{bound[b, h, s, d]:.3g}); {int(bad.sum())} of {bad.size} elements are off")]


def baseline(torch, inputs: dict, B: int, H: int, S: int, D: int, causal: int = 0, **_):
    # torch's scaled_dot_product_attention on bf16, restricted to its FlashAttention backend.
    q, k, v = (inputs[n].view(torch.bfloat16).reshape(B, H, S, D) for n in ("Q", "K", "V"))
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def run():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
    return run
