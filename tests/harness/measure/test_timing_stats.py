"""The statistics and stopping rule of harness/measure/timing.py, on synthetic samples (no GPU)."""
import math

import numpy as np
import pytest

from harness.measure.timing import (QUICK, TimingPolicy, fmt_time, host_excess_flag, keep_by_clock, stats,
                            stop_reason)


def test_stats_of_known_samples():
    s = stats([1.0, 2.0, 3.0, 4.0, 10.0])
    assert s.n == 5 and s.median == 3.0 and s.min == 1.0 and s.mean == 4.0
    assert s.std == pytest.approx(np.std([1, 2, 3, 4, 10], ddof=1))
    assert s.p90 == pytest.approx(np.percentile([1, 2, 3, 4, 10], 90))
    assert s.rse == pytest.approx(s.std / (4.0 * math.sqrt(5)))


def test_stats_of_one_and_none():
    assert stats([]).n == 0 and math.isinf(stats([]).rse)
    one = stats([2e-3])
    assert one.median == 2e-3 and math.isinf(one.rse)


def test_no_stop_before_minimum_samples_and_time():
    steady = [1e-3] * 9
    assert stop_reason(steady, 0.4, TimingPolicy()) is None  # 9 samples, 0.4 s
    assert stop_reason([1e-3] * 10, 0.29, TimingPolicy()) is None  # time (0.3 s) not reached
    assert stop_reason([1e-3] * 10, 0.3, TimingPolicy()) == "noise"


def test_noisy_samples_run_until_a_cap():
    rng = np.random.default_rng(0)
    noisy = list(1e-3 * (1 + 0.5 * rng.standard_normal(12)))
    assert stop_reason(noisy, 1.0, TimingPolicy()) is None  # rse ~ 14 %: keep sampling
    assert stop_reason(noisy, 3.0, TimingPolicy()) == "time"
    assert stop_reason([1e-3] * 2000, 0.1, TimingPolicy()) == "count"


def test_noise_rule_stops_once_rse_small():
    rng = np.random.default_rng(1)
    pol = TimingPolicy()
    samples = []
    reason = None
    while reason is None:
        samples.append(1e-3 * (1 + 0.02 * rng.standard_normal()))
        reason = stop_reason(samples, 0.6, pol)
    assert reason == "noise"
    assert stats(samples).rse <= pol.target_rse
    assert 10 <= len(samples) < 100  # 2 % per-sample noise needs ~16 samples for 0.5 % rse


def test_low_clock_samples_dropped_only_when_enough_remain():
    pol = TimingPolicy()
    samples = [1.0] * 12 + [2.0] * 3
    clocks = [1980.0] * 12 + [900.0] * 3
    kept, dropped = keep_by_clock(samples, clocks, 1980.0, pol)
    assert dropped == 3 and kept == [1.0] * 12
    kept, dropped = keep_by_clock(samples[:5] + samples[-3:], clocks[:5] + clocks[-3:], 1980.0, pol)
    assert dropped == 0  # 5 good samples are fewer than min_samples: keep all, the flag says why
    assert keep_by_clock(samples, [None] * 15, None, pol) == (samples, 0)


def test_host_cross_check_flags_invisible_work():
    assert host_excess_flag([1.05e-3] * 10, [1.0e-3] * 10) is None
    flag = host_excess_flag([5e-3] * 10, [1.0e-3] * 10)
    assert flag and "outside the timed stream" in flag


def test_quick_policy_is_quicker():
    assert QUICK.min_seconds < TimingPolicy().min_seconds and QUICK.max_seconds < TimingPolicy().max_seconds


def test_fmt_time_units():
    assert fmt_time(2.5e-6) == "2.5 µs" and fmt_time(1.25e-3) == "1.250 ms" and fmt_time(2.0) == "2.000 s"


def test_default_policy_samples_at_least_0_3_s_then_stops_on_noise():
    pol = TimingPolicy()
    assert (pol.min_seconds, pol.min_samples, pol.target_rse, pol.max_seconds) == (0.3, 10, 0.005, 3.0)
    quiet = [1e-3] * 400  # no noise at all: only the time floor holds sampling back
    assert stop_reason(quiet, 0.29, pol) is None and stop_reason(quiet, 0.3, pol) == "noise"
    assert stop_reason(quiet[:9], 1.0, pol) is None  # and at least 10 samples
    noisy = [1e-3, 2e-3] * 20
    assert stop_reason(noisy, 0.5, pol) is None and stop_reason(noisy, 3.0, pol) == "time"


def test_the_garbage_collector_is_paused_for_a_measurement_and_restored():
    import gc

    from harness.measure.timing import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()
