"""Outputs are poisoned before every run with a value no correct kernel writes on purpose."""

import numpy as np
import pytest

from grader import catalog
from grader import pipeline
from harness.sandbox.isolation import poison_byte
from harness.sandbox.worker import _poison

BFS = catalog.load("bfs")


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint32"])
def test_integer_poison_is_not_minus_one_or_zero(dtype):
    got = _poison(np.dtype(dtype), 3)
    assert got.dtype == dtype and (got != 0).all() and (got.astype(np.int64) != -1).all()
    assert poison_byte(dtype) == 0xA5


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_poison_is_nan_in_the_worker_and_in_a_memset(dtype):
    assert np.isnan(_poison(np.dtype(dtype), 3)).all()
    memset = np.full(3 * np.dtype(dtype).itemsize, poison_byte(dtype), np.uint8).view(dtype)
    assert np.isnan(memset).all()


def test_bfs_that_leaves_unreachable_vertices_unwritten_fails(tmp_path):
    # -1 means "unreachable" in BFS: with all-ones poison this kernel passed every case.
    from grader.catalog import wrong

    ws = wrong.materialise("bfs", "unreachable_not_initialized", tmp_path / "ws")
    report = pipeline.grade("bfs", ws, backend="cpu", case={"n": 300, "graph": "components", "degree": 4})
    assert report.verdict == "fail" and report.reasons[0] == "wrong-answer", report.headline
    assert "expected -1" in report.headline
