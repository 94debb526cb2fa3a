"""The H200 model on kernels as learners first write them (one thread per row or tensor, one
block): honest estimates, never faster than the roofline, in the right order of magnitude of the
H200 times issue 23 measured with kata's method (naive attention 314 ms, adamw with one thread
per tensor 4.3 s), and a time set by the serial chain where one SM does all the work."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.grader.performance.test_model import ROOT, _estimate

LEARNER = Path(__file__).resolve().parent / "learner"


def _within(estimate_s: float, h200_s: float, factor: float) -> bool:
    return h200_s / factor <= estimate_s <= h200_s * factor


def test_one_thread_per_query_row_attention_is_timed_near_the_h200_not_called_excellent():
    e = _estimate("attention", ROOT / "lab" / "learner" / "attention_naive")
    full, causal = e.cases
    assert all(c.seconds >= c.floor_s for c in e.cases) and not any(c.defect for c in e.cases)
    assert full.method == "extrapolated" and _within(full.seconds, 0.314, 3.0)
    assert e.tier in ("", "below target") and "excellent" not in e.headline()
    if causal.method == "incomplete":  # its model run did not fit the budget: what is known, no score
        assert causal.score is None and e.value is None and "at least" in e.headline()


def test_adamw_with_one_thread_per_tensor_is_timed_by_the_largest_tensor_s_thread():
    e = _estimate("adamw", LEARNER / "adamw_thread_per_tensor")
    (case,) = e.cases
    assert case.resource == "latency" and case.method == "extrapolated"
    assert _within(case.seconds, 4.3, 3.0) and e.tier == "below target"


def test_a_single_block_reduction_is_one_sm_s_work_not_the_whole_gpu_s():
    e = _estimate("reduce", LEARNER / "reduce_one_block")
    (case,) = e.cases
    assert case.resource == "latency" and case.seconds > 100 * case.floor_s
    assert e.tier == "below target" and case.score == pytest.approx(case.floor_s / case.seconds, rel=0.05)


def test_a_power_law_row_s_thread_sets_a_thread_per_row_spmv_s_time():
    """One thread per row: the power-law matrix's longest row (tens to hundreds of thousands of
    non-zeros at the bench shape, as the bench's seed draws it) is one thread's serial chain,
    however idle the other SMs; the H200 took 27.4 ms there (a 467K-row draw) and 0.67 ms on the
    uniform matrix (issue 23's corpus); the model once said 0.9 ms."""
    e = _estimate("spmv", ROOT / "lab" / "validation" / "spmv" / "thread_per_row")
    uniform, _banded, powerlaw = e.cases
    assert powerlaw.resource == "latency" and powerlaw.seconds > 3 * uniform.seconds
    assert powerlaw.seconds >= powerlaw.floor_s and "excellent" not in e.headline()


def test_lanes_adding_into_their_own_row_are_not_one_address_every_block_hits():
    """A warp per row whose lanes atomicAdd into y[row]: each address takes its row's 32 lanes,
    not 32 from every block of the grid (the model once said 4,194,304 on one address)."""
    import re

    e = _estimate("spmv", ROOT / "lab" / "validation" / "spmv" / "warp_per_row_lane_atomics")
    for c in e.cases:
        hot = re.search(r"([\d,]+) atomics serialised on one address", c.bound)
        assert hot is None or int(hot.group(1).replace(",", "")) <= 64
