"""Outputs against the reference: exact for integers, the kata's tolerance rule for floats.

NaN never passes (outputs are poisoned with NaN before each run, so an unwritten element is NaN),
and the report shows a bounded list of mismatches, worst first, never a wall of numbers.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grader.catalog import Kata
from grader.errors import CatalogError

MAX_MISMATCHES = 8


@dataclass(frozen=True)
class Mismatch:
    output: str  # argument name
    index: tuple[int, ...]  # element index in the output's shape
    got: float | int | None  # None for custom-check messages
    expected: float | int | None
    allowed: float  # the tolerance at this element (0 for exact)
    note: str = ""  # a custom check's sentence

    def __str__(self) -> str:
        if self.note:
            return self.note
        idx = ", ".join(str(i) for i in self.index)
        text = f"{self.output}[{idx}] = {_fmt(self.got)}, expected {_fmt(self.expected)}"
        if self.allowed:
            text += f" (allowed error {self.allowed:.3g})"
        return text


@dataclass(frozen=True)
class CheckResult:
    ok: bool  # every output within tolerance and no input changed
    mismatches: tuple[Mismatch, ...]  # the first few (worst first for floats)
    mismatch_count: int  # elements (or custom messages) that failed, in total
    changed_inputs: tuple[str, ...]  # `in` arguments the kernel wrote to
    notes: tuple[str, ...] = ()  # e.g. an accuracy note (grader/grading/order_bound.py)

    def headline(self) -> str:
        if self.changed_inputs:
            return f"input {', '.join(self.changed_inputs)} was modified (inputs are read-only)"
        if not self.mismatches:
            return "outputs match"
        more = f" (and {self.mismatch_count - 1} more)" if self.mismatch_count > 1 else ""
        return f"{self.mismatches[0]}{more}"


def _fmt(value) -> str:
    if value is None:
        return "?"
    if isinstance(value, (float, np.floating)):
        return "NaN" if np.isnan(value) else f"{float(value):.9g}"
    return str(value)


def error_scales(kata: Kata, inputs: dict, params: dict, expected: dict | None = None) -> dict:
    """{output: scale} that a "bound" tolerance multiplies by c * eps (reference.error_scale); {}
    for other tolerances. It depends only on the inputs and params, like the expected outputs, so
    grader/performance/bench_inputs.py caches it beside them and compare() takes it precomputed.
    expected: the reference's outputs for these inputs, handed to an error_scale that takes an
    `expected` argument (softmax's scale is its output times a constant: no second reference)."""
    if kata.tolerance.kind == "bound" and kata.tolerance.c and hasattr(kata.reference, "error_scale"):
        fn = kata.reference.error_scale
        if expected is not None and _takes_expected(fn):
            return dict(fn(inputs, expected=expected, **params) or {})
        return dict(fn(inputs, **params) or {})
    return {}


def _takes_expected(fn) -> bool:
    import inspect

    try:
        return "expected" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def compare(kata: Kata, inputs: dict, outputs: dict, expected: dict, params: dict,
            changed_inputs: tuple[str, ...] = (), scales: dict | None = None) -> CheckResult:
    """Outputs against expected under the kata's tolerance. scales: error_scales(kata, inputs,
    params) when the caller has it already (the bench inputs' cache); None computes it here."""
    mismatches: list[Mismatch] = []
    count = 0
    if kata.tolerance.kind == "custom":
        messages = list(kata.reference.check(inputs, outputs, expected, **params) or [])
        mismatches = [Mismatch("", (), None, None, 0.0, str(m)) for m in messages[:MAX_MISMATCHES]]
        count = len(messages)
    else:
        if scales is None:
            scales = error_scales(kata, inputs, params, expected)
        for name, want in expected.items():
            got = outputs.get(name)
            found, n = _compare_one(kata, name, np.asarray(want), got, scales.get(name))
            mismatches.extend(found)
            count += n
        mismatches = mismatches[:MAX_MISMATCHES]
    ok = count == 0 and not changed_inputs
    result = CheckResult(ok, tuple(mismatches), count, tuple(changed_inputs))
    if not ok and kata.tolerance.kind == "bound":
        from grader.grading.order_bound import reconsider

        result = reconsider(kata, inputs, outputs, expected, params, result, scales)
    return result


#: elements per block of the elementwise check: its float64 temporaries (2 MB each) stay in cache
#: instead of streaming full-size copies of 2^28-element outputs through memory. 2^18 measured
#: best of 2^16..2^22 on a 2-core CPU (lab/check_bench.py, lab/results/check.md).
CHUNK = 1 << 18


def _blocks(shape: tuple[int, ...], chunk: int):
    """(index, flat offset, elements) of consecutive blocks that tile an array of `shape` in C order,
    each at most `chunk` elements unless one row of the innermost split axis is longer. `index`
    (ints, then a slice) is a basic index: it gives views of the array and of a broadcast scale."""
    if not shape:
        yield (Ellipsis,), 0, 1
        return
    k, inner = len(shape) - 1, 1  # split axis k: the first whose trailing block fits in `chunk`
    while k > 0 and inner * shape[k] <= chunk:
        inner *= shape[k]
        k -= 1
    if inner * shape[k] <= chunk:
        k, inner = -1, inner * shape[k]  # the whole array is one block
    if k < 0:
        yield (Ellipsis,), 0, inner
        return
    step = max(1, chunk // inner)
    for prefix in np.ndindex(*shape[:k]):
        base = int(np.ravel_multi_index(prefix, shape[:k])) * shape[k] * inner if k else 0
        for a in range(0, shape[k], step):
            b = min(a + step, shape[k])
            yield prefix + (slice(a, b),), base + a * inner, (b - a) * inner


def _flat(block) -> np.ndarray:
    return block.reshape(-1)  # a view for C-contiguous blocks; a block-sized copy otherwise


def _compare_one(kata: Kata, name: str, want: np.ndarray, got, scale) -> tuple[list[Mismatch], int]:
    if got is None:
        return [Mismatch(name, (), None, None, 0.0, f"{name} was not produced")], 1
    got = np.asarray(got)
    if got.size != want.size:
        raise CatalogError(f"{kata.file('reference.py')}: reference() returned {name} with {want.size} "
                           f"elements but the output buffer has {got.size}")
    got = got.reshape(want.shape)
    exact = got.dtype.kind in "iub" and want.dtype.kind in "iub" or kata.tolerance.kind == "exact"
    count = 0
    # Per block only the first MAX_MISMATCHES in report order can matter: (key, flat index, allowed).
    keys: list[np.ndarray] = []
    where: list[np.ndarray] = []
    allows: list[np.ndarray] = []
    work = _Scratch()
    if exact:
        for index, offset, size in _blocks(want.shape, CHUNK):
            g, w = _flat(got[index]), _flat(want[index])
            if got.dtype.kind == "f":
                bad = np.equal(g, w, out=work.get("bad", size, np.bool_))
                np.logical_not(bad, out=bad)  # NaN equals nothing, so an unwritten (poisoned) element fails
            elif g.dtype == w.dtype:  # the same integer type: int64 conversions would change nothing
                bad = np.not_equal(g, w, out=work.get("bad", size, np.bool_))
            else:
                bad = g.astype(np.int64) != w.astype(np.int64)  # mixed integer types, exactly as before
            flat = np.flatnonzero(bad)
            count += int(flat.size)
            if sum(a.size for a in where) < MAX_MISMATCHES:
                where.append(flat[:MAX_MISMATCHES] + offset)
        order = np.concatenate(where)[:MAX_MISMATCHES] if where else np.zeros(0, np.int64)
        allowed = np.zeros(order.size)
    else:
        tol = kata.tolerance
        eps = np.finfo(got.dtype if got.dtype.kind == "f" else np.float32).eps
        bound = None if scale is None else tol.c * eps  # the old allowed + (c * eps) * scale, same rounding
        sb = None if scale is None else np.broadcast_to(np.asarray(scale), want.shape)
        for index, offset, size in _blocks(want.shape, CHUNK):
            ref = np.asarray(_flat(want[index]), np.float64)  # no copy when the reference is float64
            err = work.get("err", size)
            np.subtract(_flat(got[index]), ref, out=err, dtype=np.float64)
            np.abs(err, out=err)
            allowed = work.get("allowed", size)
            np.abs(ref, out=allowed)
            allowed *= tol.rtol  # IEEE products and sums commute: atol + rtol * |ref|, bit for bit
            allowed += tol.atol
            if sb is not None:
                extra = work.get("extra", size)
                np.multiply(_flat(sb[index]), bound, out=extra, dtype=np.float64)
                allowed += extra
            ok = np.less_equal(err, allowed, out=work.get("ok", size, np.bool_))
            if ok.all():
                continue
            flat = np.flatnonzero(~ok)  # NaN compares false, so NaN always fails
            count += int(flat.size)
            # NaN first (unwritten elements), then the largest errors.
            key = err[flat]
            key[np.isnan(key)] = np.inf
            top = _top(key, MAX_MISMATCHES)
            keys.append(key[top])
            where.append(flat[top] + offset)
            allows.append(allowed[flat[top]])
        if where:
            key, flat, allowed = np.concatenate(keys), np.concatenate(where), np.concatenate(allows)
            pick = np.lexsort((flat, -key))[:MAX_MISMATCHES]  # worst first, ties in index order
            order, allowed = flat[pick], allowed[pick]
        else:
            order, allowed = np.zeros(0, np.int64), np.zeros(0)
    out = []
    for flat_index, allow in zip(order, allowed):
        idx = np.unravel_index(int(flat_index), want.shape)
        out.append(Mismatch(name, tuple(int(i) for i in idx), got[idx].item(), want[idx].item(), float(allow)))
    return out, count


class _Scratch:
    """Block-sized work arrays, allocated once per compare and reused for every block."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def get(self, name: str, size: int, dtype=np.float64) -> np.ndarray:
        a = self.arrays.get(name)
        if a is None or a.size < size:
            a = self.arrays[name] = np.empty(size, dtype)
        return a[:size]


def _top(key: np.ndarray, k: int) -> np.ndarray:
    """Positions of the first k of `key` sorted descending, ties in position order (a stable sort's
    first k), in O(n): everything above the k-th largest value, then the earliest of its ties."""
    if key.size <= k:
        return np.arange(key.size)
    kth = np.partition(key, key.size - k)[key.size - k]
    above = np.flatnonzero(key > kth)
    ties = np.flatnonzero(key == kth)[:k - above.size]
    return np.concatenate([above, ties])
