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


def error_scales(kata: Kata, inputs: dict, params: dict) -> dict:
    """{output: scale} that a "bound" tolerance multiplies by c * eps (reference.error_scale); {}
    for other tolerances. It depends only on the inputs and params, like the expected outputs, so
    grader/bench_inputs.py caches it beside them and compare() takes it precomputed."""
    if kata.tolerance.kind == "bound" and kata.tolerance.c and hasattr(kata.reference, "error_scale"):
        return dict(kata.reference.error_scale(inputs, **params) or {})
    return {}


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
            scales = error_scales(kata, inputs, params)
        for name, want in expected.items():
            got = outputs.get(name)
            found, n = _compare_one(kata, name, np.asarray(want), got, scales.get(name))
            mismatches.extend(found)
            count += n
        mismatches = mismatches[:MAX_MISMATCHES]
    ok = count == 0 and not changed_inputs
    return CheckResult(ok, tuple(mismatches), count, tuple(changed_inputs))


def _compare_one(kata: Kata, name: str, want: np.ndarray, got, scale) -> tuple[list[Mismatch], int]:
    if got is None:
        return [Mismatch(name, (), None, None, 0.0, f"{name} was not produced")], 1
    got = np.asarray(got)
    if got.size != want.size:
        raise CatalogError(f"{kata.file('reference.py')}: reference() returned {name} with {want.size} "
                           f"elements but the output buffer has {got.size}")
    got = got.reshape(want.shape)
    if got.dtype.kind in "iub" and want.dtype.kind in "iub" or kata.tolerance.kind == "exact":
        if got.dtype.kind == "f":
            bad = ~(got == want)  # NaN equals nothing, so an unwritten (poisoned) element fails
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
        bad = ~(err <= allowed)  # NaN compares false, so NaN always fails
        flat = np.flatnonzero(bad.reshape(-1))
        # NaN first (unwritten elements), then the largest errors.
        key = np.where(np.isnan(err.reshape(-1)[flat]), np.inf, err.reshape(-1)[flat])
        order = flat[np.argsort(-key, kind="stable")]
    allowed = np.broadcast_to(allowed, want.shape)
    out = []
    for flat_index in order[:MAX_MISMATCHES]:
        idx = np.unravel_index(flat_index, want.shape)
        out.append(Mismatch(name, tuple(int(i) for i in idx), got[idx].item(), want[idx].item(),
                            float(allowed[idx])))
    return out, int(order.size)
