"""qgemv: int4 weights packed eight to an int32 with an fp16 scale per 128 along K, an fp16 x, the
float64 product of the dequantised weights, and the scale of a float32 accumulation's error.

Layout: W is N×K; row n occupies ceil(K/8) int32 words, nibble j (bits 4j..4j+3, low first) of
word w holding W[n][8w + j] as a signed 4-bit value (-8..7, symmetric: no zero point). Nibbles
past K in a row's last word are padding with random bits. scales is N × ceil(K/128) fp16; the
weight is nibble * scales[n][k / 128]."""
import math

import numpy as np

GROUP = 128


def words(K: int) -> int:
    return (K + 7) // 8


def groups(K: int) -> int:
    return (K + GROUP - 1) // GROUP


def unpack(Wq: np.ndarray, N: int, K: int) -> np.ndarray:
    """Packed words -> the signed nibbles (N, K) as int64."""
    w = np.asarray(Wq).reshape(N, words(K)).view(np.uint32).astype(np.int64)
    nib = (w[:, :, None] >> (4 * np.arange(8))) & 0xF
    return (np.where(nib >= 8, nib - 16, nib)).reshape(N, -1)[:, :K]


def dequantised(inputs: dict, N: int, K: int) -> np.ndarray:
    s = inputs["scales"].astype(np.float64).reshape(N, groups(K))
    return unpack(inputs["Wq"], N, K) * np.repeat(s, GROUP, axis=1)[:, :K]


def generate(rng: np.random.Generator, N: int, K: int, dist: str = "mixed", **_) -> dict:
    nib = rng.integers(-8, 8, (N, words(K) * 8))  # the padding past K is random too
    if dist == "negative":  # mostly negative nibbles: a kernel that forgets the sign is far off
        nib = np.where(rng.random(nib.shape) < 0.8, rng.integers(-8, 0, nib.shape), nib)
    u = (nib & 0xF).astype(np.uint64).reshape(N, -1, 8)
    packed = (u << (4 * np.arange(8, dtype=np.uint64))).sum(axis=2).astype(np.uint32).view(np.int32)
    # Scales spanning four decades, differing per group: the wrong group's scale shows.
    scales = (10.0 ** rng.uniform(-4, 0, (N, groups(K)))) * rng.choice([-1.0, 1.0], (N, groups(K)))
    x = rng.normal(0.5, 1.0, K) * (10.0 ** rng.uniform(-1, 1, K))
    return {"Wq": packed, "scales": scales.astype(np.float16), "x": x.astype(np.float16)}


def reference(inputs: dict, N: int, K: int, **_) -> dict:
    return {"y": dequantised(inputs, N, K) @ inputs["x"].astype(np.float64)}


def cost(N: int, K: int, **_) -> dict:
    # The packed weights dominate: 4 bits a weight, plus the scales, x and y.
    return {"bytes": 4 * N * words(K) + 2 * N * groups(K) + 2 * K + 4 * N, "flops": 2 * N * K}


def error_scale(inputs: dict, N: int, K: int, **_) -> dict:
    # nibble * scale is exact in float32 and its product with x rounds once; the float32 sum errs
    # like a random walk over K terms relative to sum_k |w_nk||x_k|, in any order or grouping.
    return {"y": math.sqrt(max(K, 1)) * (np.abs(dequantised(inputs, N, K)) @ np.abs(inputs["x"].astype(np.float64)))}


def baseline(torch, inputs: dict, N: int, K: int, **_):
    # What a user without a fused kernel runs: unpack the nibbles, scale, and one fp16 GEMV.
    w = inputs["Wq"].reshape(N, words(K))
    s = inputs["scales"].reshape(N, groups(K))
    x = inputs["x"]
    shifts = torch.arange(0, 32, 4, device=w.device, dtype=torch.int32)

    def run():
        nib = ((w.unsqueeze(-1) >> shifts) & 0xF).reshape(N, -1)[:, :K]
        wd = (nib - 16 * (nib >= 8).to(torch.int32)).to(torch.float16)
        wd = wd * s.repeat_interleave(GROUP, dim=1)[:, :K]
        return torch.mv(wd, x)
    return run
