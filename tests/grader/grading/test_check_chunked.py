"""check._compare_one works in blocks without full-size copies; its answer (mismatch count, the
worst-first mismatches with their indices and allowed errors, NaN first) must be exactly the one
the whole-array version gave. That version is kept below, verbatim, as the oracle."""
import types

import numpy as np
import pytest

from grader.grading import check
from grader.catalog import Tolerance
from grader.grading.check import MAX_MISMATCHES, Mismatch


def old_compare_one(kata, name: str, want: np.ndarray, got, scale):
    """grader/grading/check.py's _compare_one before blocks (commit 9eb6e9e), less the error branches."""
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


def kata(kind="bound", rtol=0.0, atol=0.0, c=2.0):
    return types.SimpleNamespace(tolerance=Tolerance(kind, rtol, atol, c), file=lambda name: name)


def same(a, b):
    """Mismatch lists equal, NaN values included (NaN != NaN would fail a plain ==)."""
    (ma, na), (mb, nb) = a, b
    assert na == nb
    assert len(ma) == len(mb)
    for x, y in zip(ma, mb):
        assert (x.output, x.index, x.note) == (y.output, y.index, y.note), (x, y)
        for u, v in ((x.got, y.got), (x.expected, y.expected), (x.allowed, y.allowed)):
            assert u == v or (u != u and v != v), (x, y)
            assert type(u) is type(v)


SHAPES = [(), (1,), (37,), (1000,), (13, 17), (4, 5, 6), (3, 1, 41), (2, 3, 4, 5)]


def planted(rng, shape, dtype, *, nans=0, errs=0, ties=0, scale=1e-3):
    want = rng.standard_normal(shape).astype(np.float64)
    got = (want + rng.standard_normal(shape) * 1e-9).astype(dtype)
    flat = got.reshape(-1)
    n = flat.size
    if n:
        for i in rng.integers(0, n, errs):
            flat[i] += rng.choice([-1, 1]) * rng.uniform(scale, 10 * scale)
        for i in rng.integers(0, n, ties):
            flat[i] = want.reshape(-1)[i] + 0.5  # the same error at many places: index order decides
        for i in rng.integers(0, n, nans):
            flat[i] = np.nan
        if n > 3 and rng.random() < 0.3:
            flat[rng.integers(0, n)] = np.inf
    return want, got


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 22])
@pytest.mark.parametrize("seed", range(4))
def test_float_outputs_match_the_whole_array_version(monkeypatch, chunk, seed):
    monkeypatch.setattr(check, "CHUNK", chunk)
    rng = np.random.default_rng(seed)
    for shape in SHAPES:
        for dtype in (np.float32, np.float64):
            want, got = planted(rng, shape, dtype, nans=int(rng.integers(0, 4)), errs=int(rng.integers(0, 20)),
                                ties=int(rng.integers(0, 12)))
            if rng.random() < 0.3:
                want = want.astype(np.float32)
            scales = [None, 3.0, np.abs(want) + 1, np.float32(7.5)]
            if len(shape) >= 1:
                scales += [np.ones(1), np.abs(rng.standard_normal(shape[-1:]))]
            if len(shape) >= 2:
                scales += [np.abs(rng.standard_normal((shape[0],) + (1,) * (len(shape) - 1))) * 1e3,
                           np.abs(rng.standard_normal(shape)).astype(np.float32)]
            for tol in (kata(), kata(rtol=1e-5, atol=1e-12), kata(c=0.0, rtol=1e-3)):
                for scale in scales:
                    same(check._compare_one(tol, "y", want, got.reshape(-1), scale),
                         old_compare_one(tol, "y", want, got.reshape(-1), scale))


@pytest.mark.parametrize("chunk", [1, 7, 1 << 22])
def test_integer_outputs_same_and_mixed_types(monkeypatch, chunk):
    monkeypatch.setattr(check, "CHUNK", chunk)
    rng = np.random.default_rng(1)
    pairs = [(np.uint32, np.uint32), (np.int32, np.int32), (np.int32, np.int64), (np.uint32, np.int64),
             (np.int64, np.uint32), (np.uint8, np.int16), (np.bool_, np.bool_), (np.uint64, np.uint64),
             (np.int64, np.uint64), (np.uint64, np.int64), (np.int8, np.uint8)]
    for shape in SHAPES:
        for g_t, w_t in pairs:
            info = np.iinfo(w_t) if w_t is not np.bool_ else None
            if info is None:
                want = rng.random(shape) < 0.5
            else:
                want = rng.integers(max(info.min, -(1 << 62)), min(info.max, 1 << 62), shape, dtype=w_t,
                                    endpoint=True)
            got = want.astype(g_t)  # wraps where the type is narrower, as a kernel's store would
            flat = got.reshape(-1)
            for i in rng.integers(0, max(flat.size, 1), int(rng.integers(0, 15))) if flat.size else []:
                flat[i] = ~flat[i] if g_t is np.bool_ else flat[i] ^ g_t(0x5A)
            for tol in (kata("exact"), kata()):
                same(check._compare_one(tol, "out", want, flat, None), old_compare_one(tol, "out", want, flat, None))


@pytest.mark.parametrize("chunk", [3, 1 << 22])
def test_exact_tolerance_on_floats_and_int_outputs_of_float_references(monkeypatch, chunk):
    monkeypatch.setattr(check, "CHUNK", chunk)
    rng = np.random.default_rng(2)
    for shape in SHAPES:
        want, got = planted(rng, shape, np.float32, nans=2, errs=3)
        same(check._compare_one(kata("exact"), "v", want, got, None), old_compare_one(kata("exact"), "v", want, got, None))
        want_i = rng.integers(-100, 100, shape).astype(np.float64)  # an exact kata whose reference is float
        got_i = want_i.astype(np.int32)
        if got_i.size:
            got_i.reshape(-1)[0] += 1
        same(check._compare_one(kata("exact"), "v", want_i, got_i, None),
             old_compare_one(kata("exact"), "v", want_i, got_i, None))


def test_all_unwritten_reports_nan_first_in_index_order(monkeypatch):
    monkeypatch.setattr(check, "CHUNK", 1000)
    want = np.linspace(-1, 1, 10_000)
    got = np.full(10_000, np.nan, np.float32)
    got[5000:] = want[5000:]
    got[9000] = 99.0  # a huge error still comes after every NaN
    found, n = check._compare_one(kata(), "y", want, got, np.ones(1))
    assert n == 5001 and [m.index for m in found] == [(i,) for i in range(8)]
    same((found, n), old_compare_one(kata(), "y", want, got, np.ones(1)))


def test_blocks_tile_the_array_in_order():
    for shape in [(), (0,), (5, 0), (0, 9), (10,), (4, 9), (3, 4, 5), (2, 1, 7, 3)]:
        for chunk in (1, 2, 5, 12, 1000):
            a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
            seen = []
            for index, offset, size in check._blocks(shape, chunk):
                block = a[index].reshape(-1)
                assert block.size == size and (size == 0 or block[0] == offset)
                assert np.array_equal(block, np.arange(offset, offset + size))
                seen.append(block)
            assert np.array_equal(np.concatenate(seen) if seen else np.zeros(0), np.arange(a.size))


def test_the_check_makes_no_full_size_copies_of_a_float64_reference(monkeypatch):
    # memory-mapped float64 references are read in blocks: asarray, not astype
    monkeypatch.setattr(check, "CHUNK", 1 << 10)
    want = np.linspace(0, 1, 1 << 14)
    calls = []
    real = np.ndarray.astype

    class Spy(np.ndarray):
        def astype(self, *a, **k):
            calls.append(self.size)
            return real(self, *a, **k)

    found, n = check._compare_one(kata(), "y", want.view(Spy), want.astype(np.float32), np.ones(1))
    assert n == 0 and found == [] and all(c <= 1 << 10 for c in calls)
