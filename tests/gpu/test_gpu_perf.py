"""The performance stage on the device: the reduce solution scores well and the three reduce
designs (one atomic per element, shared-memory tree, float4 + shuffles) come out in that order."""
import pytest

from grader import catalog
from grader.performance.bench import load_submission
from grader.performance.measured import performance_stage
from harness.measure.timing import TimingPolicy
from pathlib import Path

pytestmark = pytest.mark.gpu

FAST = TimingPolicy(min_seconds=0.2, max_seconds=1.0)
VARIANTS = Path(__file__).resolve().parents[2] / "lab" / "reduce_variants"


def grade(kata, folder, backend, calibration, **kw):
    compiled, launch, launch_py = load_submission(folder, kata.id)
    assert compiled.ok, compiled.log
    return performance_stage(kata, compiled, launch, launch_file=launch_py, backend=backend,
                             calibration=calibration, policy=FAST, **kw)


def test_reduce_solution_is_good_and_checked(backend, calibration):
    kata = catalog.load("reduce")
    res = grade(kata, kata.solution_dir, backend, calibration)
    assert res.ok, (res.error, res.flags)
    assert res.summary.tier in ("good", "excellent"), res.summary
    case = res.cases[0]
    assert case.recheck == () and case.kernel.stats.n >= 10
    assert case.score.value <= 1.05  # never above the calibrated ceiling
    assert res.occupancy and res.occupancy[0].registers > 0


def test_three_reduce_designs_in_order(backend, calibration):
    kata = catalog.load("reduce")
    scores = {}
    for name in ("atomic_per_element", "shared_tree", "float4_shuffle"):
        res = grade(kata, VARIANTS / name, backend, calibration, with_baseline=False)
        assert res.ok, (name, res.error)
        scores[name] = res.summary.value
    a, t, f = scores["atomic_per_element"], scores["shared_tree"], scores["float4_shuffle"]
    assert a < t < f, scores
    assert t > 2 * a and f > 1.2 * t, scores  # clearly separated, not within noise


def test_prefetch_feeds_the_stage_and_the_phases_add_up(backend, calibration):
    from grader.performance import measured as perf, prefetching

    kata = catalog.load("reduce")
    prefetching.prefetch("reduce", seed=0)
    entry = prefetching._PREFETCHED[("reduce", 0)]
    assert entry.error is None, entry.error
    assert entry.backend is not None and entry.calibration is not None
    # every bench case's inputs, and its rotation set's (the timing's second buffers, issue 24)
    n = len(kata.bench.cases)
    assert set(entry.data) == set(range(n)) | {("rotation", i) for i in range(n)}
    res = grade(kata, kata.solution_dir, backend, calibration)
    assert res.ok, (res.error, res.flags)
    assert "data" not in res.phases and res.phases["check"] > 0 and "background_data" in res.phases
    assert res.cases[0].recheck == ()
    assert sum(v for k, v in res.phases.items() if k in perf.PHASES) <= res.wall_s * 1.01
