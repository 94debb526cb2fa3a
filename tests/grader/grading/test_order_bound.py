"""Tolerance by algorithm class (grader/grading/order_bound.py): for every kata whose statement
promises any summation order, an error within what some order can produce passes with an accuracy
note, and one beyond every order's bound fails saying so; on outputs made to measure, so no kernel
runs, and once end to end with a sequential reduce on the emulator."""
import numpy as np
import pytest

from grader.catalog import load
from grader.grading.cases import Case, materialize
from grader.grading.check import compare, error_scales

CASES = {"reduce": {"n": 4096, "dist": "offset"}, "matmul": {"M": 8, "N": 8, "K": 300},
         "spmv": {"m": 1500, "k": 3000, "avg": 12, "dist": "dense_row"}}


def _data(kata_id):
    kata = load(kata_id)
    params = dict(CASES[kata_id])
    names = {p.name for p in kata.params}
    params = {k: v for k, v in params.items() if k in names}
    data = materialize(kata, Case(params, "requested", 0))
    env = {**data.case.params, **data.scalars}
    return kata, data, env


@pytest.mark.parametrize("kata_id", sorted(CASES))
@pytest.mark.parametrize("where, passes", [(0.5, True), (3.0, False)])
def test_between_the_tight_bound_and_every_orders_bound(kata_id, where, passes):
    kata, data, env = _data(kata_id)
    (name, want), = data.expected.items()
    tight = kata.tolerance.c * np.finfo(np.float32).eps * np.asarray(error_scales(kata, data.inputs, env)[name])
    loose = np.asarray(kata.reference.order_bound(data.inputs, **env)[name])
    # Elements whose any-order bound is the looser one (long sums; a short row's is tighter than the
    # kata's bound), off by `where` times it: beyond the tight bound either way. The rest exact.
    loose = np.broadcast_to(loose, np.shape(want))
    mask = loose > 2 * np.broadcast_to(tight, np.shape(want))
    assert mask.any()
    got = (np.asarray(want, np.float64) + where * loose * mask).astype(np.float32)
    result = compare(kata, data.inputs, {name: got}, data.expected, env)
    if passes:
        assert result.ok and result.notes and "within what a sequential float32 sum can produce" in result.notes[0]
    else:
        assert not result.ok and "beyond what any summation order can produce" in result.headline()


def test_a_dropped_term_in_a_short_sum_still_fails():
    """Near 10^4 each, 100 terms: every order errs by a few units at most, a dropped term by 10^4.
    (In a long sum of such values a sequential sum's worst case is as large as one term: that is
    why the public cases include short sums.)"""
    kata = load("reduce")
    data = materialize(kata, Case({"n": 100, "dist": "offset"}, "requested", 0))
    x = data.inputs["x"].astype(np.float64)
    got = np.array([x[:-1].sum()], np.float32)  # the last element skipped
    result = compare(kata, data.inputs, {"out": got}, data.expected, {"n": 100, "dist": "offset"})
    assert not result.ok and "beyond what any summation order can produce" in result.headline()


SEQUENTIAL = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += x[i];
        out[0] = s;
    }
}
'''


def test_a_sequential_reduce_passes_with_an_accuracy_note(tmp_path):
    from grader import pipeline

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kernel.cu").write_text(SEQUENTIAL)
    (ws / "launch.py").write_text(load("reduce").file("launch.py").read_text())
    r = pipeline.grade("reduce", ws, backend="cpu", case={"n": 100000, "dist": "offset"})
    assert r.verdict == "pass", r.headline
    assert any("within what a sequential float32 sum can produce" in n for n in r.notes)


@pytest.mark.parametrize("n, dist", [((1 << 23) + 1, "mixed"), ((1 << 23) + 1, "offset")])
def test_zero_is_no_reordered_sum_where_the_any_order_bound_admits_it(n, dist):
    """A skipped or cached launch leaves 0 (the plan's memset): where the any-order bound is as
    large as the answer (2^23 or more float32 terms, or a near-cancelling sum) it cannot excuse the error."""
    kata = load("reduce")
    data = materialize(kata, Case({"n": n, "dist": dist}, "requested", 0))
    env = {**data.case.params, **data.scalars}
    bound = kata.reference.order_bound(data.inputs, **env)["out"]
    assert bound[0] >= abs(float(data.expected["out"][0]))  # the old rule would have passed 0
    result = compare(kata, data.inputs, {"out": np.zeros(1, np.float32)}, data.expected, env)
    assert not result.ok and "as much as the answer itself, so kata cannot call it a rounding difference" \
        in result.headline(), result.headline()
    # and the exact answer, or one within the kata's tight bound, still passes
    assert compare(kata, data.inputs, {"out": data.expected["out"].astype(np.float32)}, data.expected, env).ok
