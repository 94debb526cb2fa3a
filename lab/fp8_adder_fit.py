"""Which adder gives the H200's fp8 wgmma sums? A search over candidates on the zoo's
wgmma_fp8:128B:fp22 case (accumulators near 4096, two k32 steps), against what the H200 returned
(lab/results/2026-12-02-h200-session4-call4/hopper_zoo/zoo.txt): 887 of 1024 sums differ from the
exact sum cut to 13 mantissa bits, the first four (in the case's lane order) 4064, 4041.5, 4141 and
4108.5. Candidates: each product cut (toward zero, down, to nearest) to 2^(e - F), e the exponent
of the largest term of a group of G products and the accumulator, the sum cut to 13 bits after each
group or at the end. Prints the best; the one that matches both is harness/emulator/ops_wgmma.py's
_fp8_sum (F = 13, toward zero, a group of the whole k32 step).

    python lab/fp8_adder_fit.py
"""
import itertools
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness" / "emulator" / "zoo"))
import cases_hopper as ch
from harness.emulator.ops_fp8 import VALUES, encode
name, size = 'wgmma_tile', 'wgmma_fp8:128B:fp22'
rng = np.random.default_rng(zlib.crc32(f"{name}-{size}".encode()))
kernel, layout = ch.WG_CASES[size]
kind, K, esize, mn = ch.WG_KERNELS[kernel]
N = 16
abytes, A = ch._wg_values(rng, kind, (64, 2 * K))
bbytes, B = ch._wg_values(rng, kind, (N, 2 * K))
bbytes = encode(B, "e5m2", True)[..., None]
B = VALUES["e5m2"][bbytes[..., 0].astype(np.int64)]
C = rng.integers(-8, 9, (64, N)).astype(np.float32) + np.float32(4096.0)
lane = np.arange(128)
w_, g, t4 = lane // 32, (lane % 32) // 4, lane % 4
e = np.arange(8)[None, :]
rows, cols = 16 * w_[:, None] + g[:, None] + 8 * ((e % 4) // 2), 8 * (e // 4) + 2 * t4[:, None] + e % 2


def cut(x):
    """The exact sum cut toward zero to 13 mantissa bits."""
    e = np.floor(np.log2(np.where(x != 0, np.abs(x), 1.0)))
    return np.trunc(x / 2.0 ** (e - 13)) * 2.0 ** (e - 13)


W = cut(A[:, K:] @ B[:, K:].T + cut(A[:, :K] @ B[:, :K].T + C))
w = W[rows, cols].ravel()
target = np.array([4064.0, 4041.5, 4141.0, 4108.5])
target_bad = 887

def trunc(x, q, mode):
    if mode == 'zero':
        return np.trunc(x / q) * q
    if mode == 'floor':
        return np.floor(x / q) * q
    return np.round(x / q) * q

def step(acc, a, b, F, pmode, fmode, group):
    # acc (64,N), a (64,K), b (N,K): products p[m,n,k]
    p = a[:, None, :] * b[None, :, :]
    out = acc.copy()
    for s in range(0, p.shape[2], group):
        terms = p[:, :, s:s + group]
        mx = np.maximum(np.abs(out), np.abs(terms).max(axis=2))
        ex = np.floor(np.log2(np.where(mx > 0, mx, 1)))
        q = 2.0 ** (ex - F)
        tsum = trunc(terms, q[..., None], pmode).sum(axis=2)
        out = out + tsum
        if fmode == 'each':
            out = cut(out)
    return out

res = []
for F, pmode, fmode, group in itertools.product(range(10, 26), ['zero', 'floor', 'round'], ['each', 'end'], [4, 8, 16, 32]):
    acc = C.astype(np.float64)
    for s in range(2):
        acc = step(acc, A[:, s*K:(s+1)*K], B[:, s*K:(s+1)*K], F, pmode, fmode, group)
        if fmode == 'end':
            acc = cut(acc)
    m = acc[rows, cols].ravel()
    bad = m != w
    first = m[bad][:4]
    score = int(bad.sum())
    ok = len(first) == 4 and np.allclose(first, target)
    res.append((ok, abs(score - target_bad), F, pmode, fmode, group, score, first.tolist()))
res.sort(key=lambda r: (not r[0], r[1]))
for r in res[:12]:
    print(r)
