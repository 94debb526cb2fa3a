"""Roofline fractions, GTEPS, x library, tiers and geometric means (grader/performance/score.py)."""
import pytest

from grader.performance.score import Ceilings, geomean, roofline_time, score_case, summarize, tier

H200 = Ceilings(bandwidth=4.3e12, fp32=66.9e12, bf16=989e12)


def test_roofline_time_picks_the_larger_term():
    t, bound = roofline_time({"bytes": 4 * 2**28, "flops": 2**28}, H200)
    assert bound == "memory" and t == pytest.approx(4 * 2**28 / 4.3e12)
    t, bound = roofline_time({"bytes": 3 * 4 * 4096**2, "flops": 2 * 4096**3}, H200)
    assert bound == "compute" and t == pytest.approx(2 * 4096**3 / 66.9e12)
    t, _ = roofline_time({"flops": 1e12}, H200, precision="bf16")
    assert t == pytest.approx(1e12 / 989.4e12)  # the datasheet's dense peak (the calibration is below it)


def test_a_tensor_core_kata_is_measured_against_its_types_peak_not_the_fma_rate():
    c = Ceilings(bandwidth=4.3e12, fp32=66.9e12, bf16=718e12)  # cuBLAS sustained, under the datasheet
    assert c.peak("bf16") == c.peak("fp16") == pytest.approx(989.4e12)
    assert c.peak("fp8") == pytest.approx(2 * 989.4e12) and c.peak("tf32") == pytest.approx(989.4e12 / 2)
    assert Ceilings(4.3e12, 66.9e12, bf16=1100e12).peak("fp8") == pytest.approx(2200e12)  # measured faster
    # cuBLAS's bf16 GEMM at 4096^3 (177 us on the H200) is far above the impossible-time floor of a
    # kata that declares bf16, and would be "impossible" (< 0.85 x 2.1 ms) against the fp32 peak
    from grader import catalog
    from grader.performance.rotation import FLOOR_FRACTION

    for kata_id, precision in (("tc-gemm", "bf16"), ("fp8-gemm", "fp8"), ("flash-prefill", "bf16")):
        assert catalog.load(kata_id).bench.precision == precision
    cost = catalog.load("tc-gemm").reference.cost(M=4096, N=4096, K=4096)
    assert roofline_time(cost, c, "bf16")[0] * FLOOR_FRACTION < 177e-6 < roofline_time(cost, c)[0] * FLOOR_FRACTION


def test_reduce_at_80_percent_of_roofline():
    cost = {"bytes": 4 * 2**28, "flops": 2**28}
    t, _ = roofline_time(cost, H200)
    s = score_case({"n": 2**28}, "roofline", t / 0.8, cost, H200, baseline_s=t / 0.95)
    assert s.value == pytest.approx(0.8) and s.baseline_value == pytest.approx(0.95)
    assert s.speedup_vs_baseline == pytest.approx(0.8 / 0.95)
    assert s.achieved_bandwidth == pytest.approx(0.8 * 4.3e12)
    assert not s.flags


def test_gteps_and_library_metrics():
    g = score_case({}, "gteps", 0.01, {"edges": 5e7, "bytes": 1}, H200, baseline_s=0.02)
    assert g.value == pytest.approx(5.0) and g.baseline_value == pytest.approx(2.5)
    lib = score_case({}, "library", 2e-3, {"flops": 1}, H200, baseline_s=1.5e-3)
    assert lib.value == pytest.approx(0.75) and lib.baseline_value == 1.0


def test_suspicious_results_are_flagged():
    cost = {"bytes": 4 * 2**28}
    t, _ = roofline_time(cost, H200)
    fast = score_case({}, "roofline", t / 1.3, cost, H200, baseline_s=t * 20)
    assert any("flagged for review" in f for f in fast.flags)
    assert any("above the hardware's ceiling" in f for f in fast.flags)


def test_tiers():
    targets = {"pass": 0.5, "good": 0.75, "excellent": 0.9}
    assert [tier(v, targets) for v in (0.1, 0.5, 0.8, 0.95)] == ["below target", "pass", "good", "excellent"]


def test_geomean():
    assert geomean([0.5, 0.8]) == pytest.approx((0.5 * 0.8) ** 0.5)
    assert geomean([]) == 0.0 and geomean([0.5, 0.0]) == 0.0


def test_summary_combines_shapes_geometrically():
    cost = {"bytes": 1e9}
    t, _ = roofline_time(cost, H200)
    cases = [score_case({"n": i}, "roofline", t / v, cost, H200, baseline_s=t / 0.9) for i, v in enumerate((0.6, 0.9))]
    s = summarize(cases, "roofline", {"pass": 0.5, "good": 0.75, "excellent": 0.9}, "")
    assert s.value == pytest.approx((0.6 * 0.9) ** 0.5) and s.tier == "pass"
    assert s.baseline_value == pytest.approx(0.9)
    assert "good needs 75%" in s.next_target and "pass" in s.headline()


def test_the_empty_launch_is_part_of_every_roofline_time():
    """At 4096x4096 qgemv moves 8.7 MB, 2 us at 4.3 TB/s: a perfect kernel also pays the launch, so
    the score is against 2 us + the calibrated empty launch, never above 100 % for a real kernel."""
    c = Ceilings(bandwidth=4.3e12, fp32=60e12, launch_s=2.5e-6)
    t, bound = roofline_time({"bytes": 8.6e6}, c)
    assert bound == "memory" and t == pytest.approx(2.0e-6 + 2.5e-6)
    s = score_case({"N": 4096}, "roofline", median_s=5.0e-6, cost={"bytes": 8.6e6}, ceilings=c)
    assert s.value == pytest.approx(0.9) and not s.flags
    assert roofline_time({"flops": 6e9}, c) == (pytest.approx(1e-4 + 2.5e-6), "compute")


def test_a_calibration_cached_before_the_launch_floor_or_the_read_flush_is_measured_again(tmp_path):
    import json

    from harness.measure.calibrate import Calibration, load_cached, save

    old = dict(gpu="G", driver=1, copy_bandwidth=4e12, read_bandwidth=4.4e12, fp32=6e13, bf16=None,
               sm_clock_max_mhz=None, measured_at="2026-11-30T00:00:00")
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps({"G | driver 1": old}))
    assert load_cached("G", 1, path) is None  # no launch_s: calibrate again rather than score without it
    save(Calibration(**old, launch_s=2.4e-6), path)
    assert load_cached("G", 1, path) is None  # timed after the old (memset) flush: calibrate again
    save(Calibration(**old, launch_s=2.4e-6, flush="read"), path)
    cal = load_cached("G", 1, path)
    assert cal.ceilings().launch_s == 2.4e-6
