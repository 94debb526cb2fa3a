"""The spmv kata's reference: CSR shapes, a float32 row sum within the per-row bound, one dropped
non-zero outside it."""
import numpy as np
import pytest

from grader import catalog
from grader.grading.check import compare

KATA = catalog.load("spmv")
ref = KATA.reference


def _float32_spmv(inputs, m):
    y = np.zeros(m, np.float32)
    rp, ci, v, x = inputs["row_ptr"], inputs["col_idx"], inputs["vals"], inputs["x"]
    for r in range(m):
        acc = np.float32(0)
        for j in range(rp[r], rp[r + 1]):  # sequential: the worst summation order
            acc = np.float32(acc + v[j] * x[ci[j]])
        y[r] = acc
    return y


@pytest.mark.parametrize("dist", ["powerlaw", "uniform", "banded", "dense_row"])
def test_csr_is_valid_and_float32_passes(dist):
    params = {"m": 200, "k": 300, "avg": 9, "dist": dist}
    inputs = ref.generate(np.random.default_rng(2), **params)
    rp = inputs["row_ptr"]
    assert rp[0] == 0 and rp[-1] == inputs["nnz"] and (np.diff(rp) >= 0).all()
    assert inputs["col_idx"].min(initial=0) >= 0 and inputs["col_idx"].max(initial=0) < 300
    expected = ref.reference(inputs, **params)
    ok = compare(KATA, inputs, {"y": _float32_spmv(inputs, 200)}, expected, params)
    assert ok.ok, ok.mismatches


def test_dropping_one_nonzero_fails():
    params = {"m": 200, "k": 300, "avg": 9, "dist": "powerlaw"}
    inputs = ref.generate(np.random.default_rng(3), **params)
    expected = ref.reference(inputs, **params)
    short = dict(inputs, row_ptr=inputs["row_ptr"].copy())
    y = _float32_spmv(inputs, 200)
    r = int(np.argmax(np.diff(inputs["row_ptr"])))
    j = int(inputs["row_ptr"][r + 1]) - 1
    y[r] -= inputs["vals"][j] * inputs["x"][inputs["col_idx"][j]]
    assert not compare(KATA, short, {"y": y}, expected, params).ok


def test_dense_row_holds_most_nonzeros_and_rows_can_be_empty():
    params = {"m": 500, "k": 1000, "avg": 6, "dist": "dense_row"}
    inputs = ref.generate(np.random.default_rng(4), **params)
    lengths = np.diff(inputs["row_ptr"])
    assert lengths.max() > inputs["nnz"] / 2 and (lengths == 0).any()
