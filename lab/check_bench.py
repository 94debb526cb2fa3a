"""How long grader.grading.check's elementwise compare takes on bench-size outputs, before and after it
worked in blocks (the perf stage runs it on every bench case's output).

    python lab/check_bench.py [--log2n 26] [--repeat 3]

Cases: a float32 output against a float64 reference under a "bound" tolerance with a full-shape
error scale (softmax's shape of check), the same with a one-element scale (reduce, spmv-like), and
a uint32 output against a uint32 reference (scan, exact). "before" is the whole-array version of
commit 9eb6e9e, kept here verbatim; "after" is grader.grading.check._compare_one. Results are asserted equal.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grader.grading import check  # noqa: E402
from grader.catalog import Tolerance  # noqa: E402
from grader.grading.check import MAX_MISMATCHES, Mismatch  # noqa: E402


def before(kata, name: str, want: np.ndarray, got, scale):
    got = np.asarray(got)
    got = got.reshape(want.shape)
    if got.dtype.kind in "iub" and want.dtype.kind in "iub" or kata.tolerance.kind == "exact":
        if got.dtype.kind == "f":
            bad = ~(got == want)
        else:
            bad = got.astype(np.int64) != want.astype(np.int64)
        allowed = np.zeros(want.shape)
        order = np.flatnonzero(bad.reshape(-1))
    else:
        tol = kata.tolerance
        eps = np.finfo(got.dtype if got.dtype.kind == "f" else np.float32).eps
        ref = want.astype(np.float64)
        err = np.abs(got.astype(np.float64) - ref)
        allowed = tol.atol + tol.rtol * np.abs(ref)
        if scale is not None:
            allowed = allowed + tol.c * eps * np.broadcast_to(np.asarray(scale, np.float64), ref.shape)
        bad = ~(err <= allowed)
        flat = np.flatnonzero(bad.reshape(-1))
        key = np.where(np.isnan(err.reshape(-1)[flat]), np.inf, err.reshape(-1)[flat])
        order = flat[np.argsort(-key, kind="stable")]
    allowed = np.broadcast_to(allowed, want.shape)
    out = []
    for flat_index in order[:MAX_MISMATCHES]:
        idx = np.unravel_index(flat_index, want.shape)
        out.append(Mismatch(name, tuple(int(i) for i in idx), got[idx].item(), want[idx].item(),
                            float(allowed[idx])))
    return out, int(order.size)


def best_of(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2n", type=int, default=26)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    bound = types.SimpleNamespace(tolerance=Tolerance("bound", 1e-5, 1e-12, 2.0), file=str)
    exact = types.SimpleNamespace(tolerance=Tolerance("exact", 0.0, 0.0, 0.0), file=str)
    ref = rng.random(n)  # float64, like a reference() output
    got = ref.astype(np.float32)
    got[rng.integers(0, n, 5)] += 1.0  # a few planted mismatches, so the report path runs too
    scale = np.sqrt(1024.0) * ref
    ints = rng.integers(0, 1 << 32, n, dtype=np.uint32)
    got_i = ints.copy()
    got_i[rng.integers(0, n, 5)] ^= 0x5A
    cases = [("float32 vs float64, full-shape scale", bound, ref, got, scale),
             ("float32 vs float64, one-element scale", bound, ref, got, np.ones(1)),
             ("uint32 vs uint32 (exact)", exact, ints, got_i, None)]
    print(f"# grader.grading.check._compare_one at n = 2^{args.log2n} ({n:,} elements), best of {args.repeat}")
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
          f"block {check.CHUNK:,} elements")
    print("| case | before | after | speed-up |")
    print("|---|---|---|---|")
    for label, kata, want, have, sc in cases:
        t_old, r_old = best_of(lambda: before(kata, "y", want, have, sc), args.repeat)
        t_new, r_new = best_of(lambda: check._compare_one(kata, "y", want, have, sc), args.repeat)
        assert r_old == r_new, (label, r_old, r_new)
        print(f"| {label} | {t_old:.3f} s | {t_new:.3f} s | {t_old / t_new:.1f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
