"""A float32 model of solutions/top-p's decisions at the bench shape, checked by the kata's own check.

Why: the check accepts a token other than the reference's only within DELTA = 1e-5 of a boundary;
this shows that the solution's float32 masses (exp, shared-memory atomics in a random order,
prefix sums) stay inside it on the two 256 x 128256 bench cases, with no GPU. It models the
kernel's radix selects digit for digit (11/11/10 bits, positive-mass digits only, the fallback to
the smallest digit with mass), not its thread layout.

    KATA_HOME=... python bench/top_p_float32_model.py [SEED]     (about a minute per case)
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grader.performance import bench_inputs
from grader import catalog
from grader.grading import check

KATA = catalog.load("top-p")
RNG = np.random.default_rng(0)


def keys_of(x):
    u = (x + np.float32(0)).view(np.uint32)  # -0.0 + 0.0 = +0.0, as in the kernel
    return np.where(u & 0x80000000, ~u, u | 0x80000000).astype(np.uint32)


def hist(digits, w, bins=2048):
    h = np.zeros(bins, np.float32)
    order = RNG.permutation(digits.size)
    np.add.at(h, digits[order], w[order])  # sequential float32 adds in a random order, like atomics
    return h


def find(h, above, thr, strict):
    """(digit, mass above it): the largest digit with mass whose running sum reaches thr."""
    c = np.float32(above)
    for d in range(h.size - 1, -1, -1):
        before, c = c, np.float32(c + h[d])
        if h[d] > 0 and (c > thr if strict else c >= thr):
            return d, before
    d = int(np.flatnonzero(h > 0).min())
    return d, np.float32(min(np.float32(above + h[d + 1:].sum(dtype=np.float32)), thr))


def select(keys, w, first, thr, strict):
    d, above = find(first, 0, thr, strict)
    prefix, mask = np.uint32(d) << 21, np.uint32(0xFFE00000)
    for shift, bits in ((10, 2047), (0, 1023)):
        sel = (keys & mask) == prefix
        d, above = find(hist(((keys[sel] >> shift) & bits).astype(np.int64), w[sel]), above, thr, strict)
        prefix |= np.uint32(d) << shift
        mask |= np.uint32(bits) << shift
    eq = np.flatnonzero(keys == prefix)
    return prefix, above, eq


def sample(x, t, p, u):
    w = np.exp((x - x.max()) * (np.float32(1) / t)).astype(np.float32)
    keys = keys_of(x)
    first = hist((keys >> 21).astype(np.int64), w)
    thr = np.float32(p * first.sum(dtype=np.float32))
    theta, above_t, eq_t = select(keys, w, first, thr, False)
    w_t = w[eq_t[0]]
    n = int(min(max(np.ceil((thr - above_t) / w_t), 1), eq_t.size))
    target = np.float32(u * np.float32(above_t + np.float32(n) * w_t))
    kappa, above_k, eq_k = select(keys, w, first, target, True)
    if kappa <= theta:  # at the nucleus's edge: only its first n equal logits
        above_k, eq_k = above_t, eq_t[:n]
    i = int(min(max(np.floor((target - above_k) / w[eq_k[0]]), 0), eq_k.size - 1))
    return int(eq_k[i])


def main(seed: int) -> None:
    for case in KATA.bench.cases:
        data = bench_inputs.bench_data(KATA, case, seed)
        R, V = case["R"], case["V"]
        x = data.inputs["logits"].reshape(R, V)
        s = data.inputs
        tok = np.array([sample(x[r], s["temperature"][r], s["top_p"][r], s["u"][r]) for r in range(R)], np.int32)
        res = check.compare(KATA, s, {"token": tok}, data.expected, dict(case))
        print(f"{case}: {int((tok != data.expected['token']).sum())} of {R} tokens differ from the "
              f"reference's; check {'passes' if res.ok else 'fails: ' + res.headline()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 12345)
