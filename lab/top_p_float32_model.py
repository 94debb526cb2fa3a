"""A model of solutions/top-p's decisions at the bench shape, checked by the kata's own check.

Why: the check accepts a token other than the reference's only within DELTA = 1e-5 of a boundary;
this shows that the solution's float32 masses (exp in float32, rounded to 2^-40 fixed point and
summed exactly) and its selection logic stay inside it on the two 256 x 128256 bench cases, with
no GPU. It follows the kernel step for step (the linear first digit over the row's range, the
refinement over the bits that vary inside the bin, positive-mass digits only), not its threads.

    KATA_HOME=... python lab/top_p_float32_model.py [SEED]     (about a minute per case)
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grader.performance import bench_inputs
from grader import catalog
from grader.grading import check

KATA = catalog.load("top-p")
LBINS = 1024


def keys_of(x):
    u = (x + np.float32(0)).view(np.uint32)  # -0.0 + 0.0 = +0.0, as in the kernel
    return np.where(u & 0x80000000, ~u, u | 0x80000000).astype(np.uint32)


def find(hist: np.ndarray, above: int, thr: int, strict: bool) -> tuple[int, int]:
    """(digit, mass above it): the largest digit with mass whose running sum reaches thr, else the
    smallest digit with mass."""
    c = above
    for d in range(hist.size - 1, -1, -1):
        before, c = c, c + int(hist[d])
        if hist[d] and (c > thr if strict else c >= thr):
            return d, before
    d = int(np.flatnonzero(hist).min())
    return d, above + int(hist[d + 1:].sum())


def select(keys, q, lin, first, thr, strict):
    D, above = find(first, 0, thr, strict)
    inbin = (lin == D) & (q > 0)
    lo, hi = int(keys[inbin].min()), int(keys[inbin].max())
    nb = 1 if lo == hi else (lo ^ hi).bit_length()
    widths = [nb] if nb <= 10 else ([nb - 10, 10] if nb <= 21 else [nb - 21, 11, 10])
    prefix, shift = (lo >> nb) << nb, nb
    sel = (keys >= lo) & (keys <= hi)
    for width in widths:
        shift -= width
        match = sel & ((keys >> (shift + width)) == (prefix >> (shift + width)))
        hist = np.zeros(1 << width, np.int64)  # exact: masses <= 2^40, sums < 2^58
        np.add.at(hist, (keys[match] >> shift) & ((1 << width) - 1), q[match])
        d, above = find(hist, above, thr, strict)
        prefix |= d << shift
    return prefix, above, np.flatnonzero(keys == prefix)


def sample(x, t, p, u):
    inv_t = np.float32(1) / t
    m = x.max()
    q = np.rint(np.exp((x - m) * inv_t).astype(np.float32) * np.float32(2.0 ** 40)).astype(np.int64)
    finite = x[np.isfinite(x)]
    rng = min(np.float32((m - finite.min()) * inv_t), np.float32(28.5))
    k = np.float32(LBINS - 1) / rng * inv_t if rng > 0 else np.float32(0)
    with np.errstate(invalid="ignore"):
        z = (m - x) * k
    lin = LBINS - 1 - np.where(z < LBINS - 1, np.nan_to_num(z, nan=LBINS - 1), LBINS - 1).astype(np.int64)
    keys = keys_of(x).astype(np.int64)
    first = np.zeros(LBINS, np.int64)
    np.add.at(first, lin[q > 0], q[q > 0])
    total = int(first.sum())
    thr = int(np.ceil(float(p) * total))
    theta, above_t, eq_t = select(keys, q, lin, first, thr, False)
    w_t = int(q[eq_t[0]])
    n = int(min(max(-(-(thr - above_t) // w_t), 1), eq_t.size))
    nucleus = above_t + n * w_t
    target = int(float(u) * nucleus)
    kappa, above_k, eq_k = select(keys, q, lin, first, target, True)
    if kappa <= theta:  # at the nucleus's edge: only its first n equal logits
        above_k, eq_k = above_t, eq_t[:n]
    i = min(max(target - above_k, 0) // int(q[eq_k[0]]), eq_k.size - 1)
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
