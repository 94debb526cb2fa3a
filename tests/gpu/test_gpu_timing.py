"""Timing hygiene on the device: noise stop, L2 flush, host cross-check, calibration, health."""
import numpy as np
import pytest

from harness.measure import calibrate, timing

pytestmark = pytest.mark.gpu


def test_copy_timing_is_steady(backend):
    src, dst = backend.alloc(1 << 28, np.float32), backend.alloc(1 << 28, np.float32)
    r = timing.measure(lambda: backend.copy(dst, src), backend.stream)
    s = r.stats
    assert s.n >= 10 and s.min <= s.median <= s.p90
    assert r.stop == "noise", r.flags
    assert s.rse <= 0.005


def test_l2_flush_keeps_small_inputs_at_hbm_speed(backend, calibration):
    calibrate._probes(backend)
    x, out = backend.alloc(4 << 20, np.float32), backend.alloc(1, np.float32)  # 16 MB: fits in L2
    backend.memset(x, 0x3F)
    args = [x, out, np.int64(x.size // 4)]
    run = lambda: backend.launch("read_probe", (backend.facts.sm_count * 4, 1, 1), (256, 1, 1), 0, args)  # noqa: E731
    flushed = timing.measure(run, backend.stream, policy=timing.QUICK)
    # A 16 MB read that stayed in L2 would run faster than HBM; flushed, it cannot.
    assert x.nbytes / flushed.stats.median <= 1.15 * calibration.bandwidth


def test_host_cross_check_flags_work_on_another_stream(backend):
    import cupy

    other = cupy.cuda.Stream(non_blocking=True)
    big = cupy.empty(1 << 30, dtype=cupy.float32)
    small = backend.alloc(1 << 10, np.float32)

    done = cupy.cuda.Event(disable_timing=True)

    def run():
        backend.memset(small, 0)
        done.record(backend.stream)
        other.wait_event(done)  # starts when the timed stream's work ends: invisible to its events
        with other:  # 4 GB of writes
            big.fill(1.0)

    r = timing.measure(run, backend.stream, policy=timing.QUICK)
    assert any("outside the timed stream" in f for f in r.flags), (r.flags, r.host_overhead_s, r.stats)


def test_calibration_is_plausible_and_healthy(backend, calibration):
    assert 1.0e12 < calibration.copy_bandwidth < 8e12
    assert 1.0e12 < calibration.read_bandwidth < 8e12
    assert 10e12 < calibration.fp32 < 120e12
    assert calibration.bf16 is None or 100e12 < calibration.bf16 < 2000e12
    now, warning = calibrate.health_check(backend, calibration)
    assert warning is None, warning
    assert calibrate.load_cached(calibration.gpu, calibration.driver) == calibration
