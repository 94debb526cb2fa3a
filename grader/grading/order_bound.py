"""Tolerance by algorithm class: the second look at a float sum that missed the kata's bound.

The kata's bound (e.g. 2 eps log2(n) sum|x| for reduce) is what a tree or blockwise sum meets. A
sequential float32 accumulation (one atomicAdd per element, one running sum per thread) is still a
correct algorithm: any summation order of L terms errs by at most gamma(L-1) * sum|terms|, with
gamma(k) = k u / (1 - k u) and u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms,
section 4.2). Within that it passes, with a note that a tree is more accurate; beyond it no order of
summation explains the error, and the failure says so. A kata opts in with reference.order_bound().
"""
from __future__ import annotations

import dataclasses

import numpy as np

U32 = 2.0 ** -24  # float32's unit roundoff


def gamma(terms) -> np.ndarray:
    """gamma(L - 1) for L terms (elementwise): the relative error bound of any summation order."""
    k = np.maximum(np.asarray(terms, np.float64) - 1.0, 0.0) * U32
    return k / np.maximum(1.0 - k, 1e-300)


def reconsider(kata, inputs: dict, outputs: dict, expected: dict, params: dict, result, scales: dict | None = None):
    """result: the CheckResult of the kata's own bound. Returns it unchanged, passed with an accuracy
    note (within every order's bound), or with its headline saying no order explains the error."""
    ref = kata.reference
    if result.ok or result.changed_inputs or not hasattr(ref, "order_bound"):
        return result
    bounds = ref.order_bound(inputs, **params) or {}
    worst = {}
    for name, want in expected.items():
        got = outputs.get(name)
        if got is None or name not in bounds:
            return result
        got = np.asarray(got, np.float64).reshape(np.shape(want))
        err = np.abs(got - np.asarray(want, np.float64))
        bound = np.broadcast_to(np.asarray(bounds[name], np.float64), err.shape)
        beyond = ~(err <= bound)  # NaN is beyond
        if not np.isfinite(err[beyond]).all():
            return result  # an unwritten (poisoned) or infinite element: its own message says it
        if beyond.any():
            at = np.unravel_index(int(np.argmax(np.where(beyond, np.nan_to_num(err, nan=np.inf), -1.0))), err.shape)
            first = result.mismatches[0] if result.mismatches else None
            limit = max(float(bound[at]), first.allowed if first is not None else 0.0)
            return _failed(result, name, at, f"beyond what any summation order can produce (at most {limit:.3g} "
                           "here for float32), so not a rounding difference: a term is missing, doubled or wrong")
        # A bound that admits zero (or the opposite sign) proves nothing: a sequential float32 sum of
        # 2^23 or more terms can lose every digit (gamma >= 1), and so can one of fewer terms whose
        # sum nearly cancels. Where the kata's tight bound failed there, the failure stands: a cached
        # or skipped result (0 at the bench size) must not pass as a "reordered sum".
        empty = (bound >= np.abs(np.asarray(want, np.float64))) & ~(err <= _tight(kata, scales or {}, name, want))
        if empty.any():
            at = np.unravel_index(int(np.argmax(np.where(empty, err, -1.0))), err.shape)
            return _failed(result, name, at, f"beyond the kata's bound, and a float32 sum in the worst order could "
                           f"err by {float(bound[at]):.3g} here, as much as the answer itself, so kata cannot call "
                           "it a rounding difference: sum in a tree or per thread and block (a long sequential "
                           "float32 sum stops growing once its ulp outgrows the terms)")
        worst[name] = (float(np.max(err)), float(np.max(bound)))
    detail = "; ".join(f"{n}: error up to {e:.3g}, any-order bound {b:.3g}" for n, (e, b) in worst.items())
    note = (f"accuracy: outside the kata's tight bound on {result.mismatch_count} elements but within what a "
            f"sequential float32 sum can produce ({detail}): passes; a tree or blockwise sum is more accurate "
            "(and faster)")
    return dataclasses.replace(result, ok=True, mismatches=(), mismatch_count=0, notes=(note,))


def _failed(result, name: str, at, why: str):
    """result, still failed, its first mismatch's note saying `why` (the element `at` named when
    the kata's check listed none)."""
    first = result.mismatches[0] if result.mismatches else None
    shown = str(dataclasses.replace(first, note="")) if first is not None else f"{name}{list(at)}"
    mism = (dataclasses.replace(first, note=f"{shown}: {why}"),) + tuple(result.mismatches[1:]) if first else ()
    return dataclasses.replace(result, mismatches=mism)


def _tight(kata, scales: dict, name: str, want) -> np.ndarray:
    """The kata's own bound for `name` (what compare() allowed, from its error scales), elementwise."""
    tol = kata.tolerance
    allowed = (tol.c or 0.0) * float(np.finfo(np.float32).eps) * np.asarray(scales.get(name, 0.0), np.float64)
    return np.broadcast_to(allowed + tol.atol + tol.rtol * np.abs(np.asarray(want, np.float64)), np.shape(want))
