"""fp8-gemm: e4m3 operands with DeepSeek-V3's block scales (1×128 groups of A, 128×128 blocks of
B), the float64 product of their exact values, a bf16 output checked within bf16's rounding plus the
error of fp8 tensor-core sums promoted every 128 k (check)."""
import math

import numpy as np


def _e4m3_table() -> np.ndarray:
    code = np.arange(256)
    e, m = (code >> 3) & 0xF, code & 7
    mag = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7.0))
    v = np.where(code & 0x80, -mag, mag)
    v[(code & 0x7F) == 0x7F] = np.nan
    return v


E4M3 = _e4m3_table()  # code -> value


def to_e4m3(x: np.ndarray) -> np.ndarray:
    """float values (|x| <= 448) -> e4m3 codes, round to nearest even. On the float64 bits: a
    normal value's mantissa rounded to e4m3's 3 bits (a carry moves the exponent, as it should),
    then the exponent rebiased (1023 -> 7); below 2^-6 the multiples of 2^-9 (subnormals). The same
    codes as searching the table of values (tests/grader/catalog/test_fp8_gemm.py), 12x faster,
    which the 4096³ bench inputs the CPU model makes feel."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    u = a.view(np.uint64)
    r = (u + np.uint64((1 << 48) - 1) + ((u >> np.uint64(49)) & np.uint64(1))) >> np.uint64(49)
    code = r.astype(np.int64) - ((1023 - 7) << 3)
    small = a < 2.0 ** -6
    code[small] = np.rint(a[small] * 512.0).astype(np.int64)
    np.minimum(code, 0x7E, out=code)  # 448, the largest finite value
    return (code | np.where(np.signbit(x), 0x80, 0)).astype(np.uint8)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    return (np.ascontiguousarray(bits).view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _quantise(x: np.ndarray, block_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """DeepSeek-V3's recipe: per block (block_rows × 128), scale = amax / 448, codes = x / scale."""
    R, K = x.shape
    g = K // 128
    rb = -(-R // block_rows)
    pad = np.zeros((rb * block_rows, K))
    pad[:R] = x
    blocks = np.abs(pad).reshape(rb, block_rows, g, 128).max(axis=(1, 3))
    scale = np.where(blocks > 0, blocks / 448.0, 1.0).astype(np.float32)
    full = np.repeat(np.repeat(scale.astype(np.float64), block_rows, 0)[:R], 128, 1)
    return to_e4m3(x / full), scale


def generate(rng: np.random.Generator, M: int, N: int, K: int, dist: str = "mixed", **_) -> dict:
    if dist == "mixed":
        # Activations with outlier rows and per-group magnitudes over four decades (what 1×128
        # scaling is for), weights with block magnitudes over two: a scale from the wrong group,
        # row or block is off by orders of magnitude.
        a = rng.standard_normal((M, K)) * 10.0 ** rng.uniform(-2, 2, (M, K // 128)).repeat(128, 1)
        b = rng.standard_normal((N, K)) * 10.0 ** rng.uniform(-1, 1, (-(-N // 128), K // 128)).repeat(
            128, 0)[:N].repeat(128, 1)
    elif dist == "offset":
        # Every product positive: a dropped or doubled k group moves C by about 1/groups.
        a = 4.0 + rng.uniform(-1.0, 1.0, (M, K))
        b = 2.0 + rng.uniform(-1.0, 1.0, (N, K))
    elif dist == "cancel":
        # Each 128 group of a row of A sums to about zero against a B with a large common part.
        a = rng.standard_normal((M, K))
        a -= a.reshape(M, K // 128, 128).mean(axis=2).repeat(128, 1) * 0.99
        b = 8.0 + rng.standard_normal((N, K))
    else:
        raise ValueError(f"unknown dist {dist!r}")
    A, As = _quantise(a, 1)
    B, Bs = _quantise(b, 128)
    return {"A": A, "As": As, "B": B, "Bs": Bs}


def _operands(inputs: dict, M: int, N: int, K: int):
    g = K // 128
    a = E4M3[inputs["A"].reshape(M, K).astype(np.int64)] * np.repeat(inputs["As"].reshape(M, g).astype(np.float64), 128, 1)
    bs = inputs["Bs"].reshape(-(-N // 128), g).astype(np.float64)
    b = E4M3[inputs["B"].reshape(N, K).astype(np.int64)] * np.repeat(np.repeat(bs, 128, 0)[:N], 128, 1)
    return a, b


def reference(inputs: dict, M: int, N: int, K: int, **_) -> dict:
    a, b = _operands(inputs, M, N, K)
    return {"C": a @ b.T}


def cost(M: int, N: int, K: int, **_) -> dict:
    # Compulsory traffic: A and B once (1 byte an element), their scales, C once (bf16).
    return {"bytes": M * K + N * K + 4 * (M * (K // 128) + -(-N // 128) * (K // 128)) + 2 * M * N,
            "flops": 2 * M * N * K}


def check(inputs: dict, outputs: dict, expected: dict, M: int, N: int, K: int, **_) -> list[str]:
    """bf16 C within the tensor cores' accumulation error, err = 2^-11 sum_k |a_ik||b_jk|, plus half a
    bf16 ulp at |exact| + err (between 2^-9 and 2^-8 of it). Hopper's fp8 wgmma keeps 13 mantissa bits of its
    sum (FP22, cut toward zero), so each of a 128-group's four k32 steps may lose 2^-13 of the
    group's magnitude before the group is promoted into float32 (DeepSeek-V3's recipe); float32's
    own error over the groups, 4 eps32 sqrt(K) sum |a||b|, is far below that."""
    a, b = _operands(inputs, M, N, K)
    got = bf16_values(np.asarray(outputs["C"]).reshape(M, N))
    want = np.asarray(expected["C"]).reshape(M, N)
    err = (2.0 ** -11 + 4 * 2.0 ** -23 * math.sqrt(K)) * (np.abs(a) @ np.abs(b).T)  # the float sum's error
    # bf16's rounding of that sum: half an ulp (8 significant bits) at |exact| + err, at most 2^-8 |exact|
    bound = err + np.ldexp(0.5, np.frexp(np.abs(want) + err)[1] - 8) + 1e-30
    bad = ~(np.abs(got - want) <= bound)  # NaN (an unwritten element) is bad
    if not bad.any():
        return []
    i, j = (int(v) for v in np.argwhere(bad)[0])
    return [(f"C[{i}][{j}] = {got[i, j]!r}, expected {want[i, j]!r} (within {bound[i, j]:.3g}); "
             f"{int(bad.sum())} of {M * N} elements are off")]


def baseline(torch, inputs: dict, M: int, N: int, K: int, **_):
    # What a user without an fp8 block-scaled kernel runs: the operands dequantised once to bf16
    # (outside the timing, as weights would be), then cuBLAS's bf16 GEMM at the same shape.
    g = K // 128
    a = inputs["A"].view(torch.float8_e4m3fn).reshape(M, K).to(torch.float32)
    a = (a * inputs["As"].reshape(M, g).repeat_interleave(128, 1)).to(torch.bfloat16)
    bs = inputs["Bs"].reshape(-(-N // 128), g).repeat_interleave(128, 0)[:N].repeat_interleave(128, 1)
    b = (inputs["B"].view(torch.float8_e4m3fn).reshape(N, K).to(torch.float32) * bs).to(torch.bfloat16)
    return lambda: torch.matmul(a, b.t())
