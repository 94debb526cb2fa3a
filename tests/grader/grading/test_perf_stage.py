"""grader.performance.measured.performance_stage without a GPU: the numpy fake plays the device, timing.measure is
replaced by a few plain runs. What is under test is the stage's own logic: the prefetch store and
its fallbacks, the check after timing of the returned bytes (checked again only when they changed),
and the phases it reports."""
import dataclasses
import threading
import types

import numpy as np
import pytest

from fakes import FakeBackend
from grader.performance import baseline_cache, bench_inputs, measured as perf, prefetching
from grader import catalog
from grader.grading import check
from grader.performance.score import Ceilings
from harness.measure import calibrate, timing
from harness.sandbox import worker as worker_mod

CASES = ({"n": 5000}, {"n": 777})
PTX = ".entry reduce(.param .u64 a, .param .u64 b, .param .u32 n) {}\n"


class Device(FakeBackend):
    """The fake with what the perf stage asks of a GPU backend beyond the Backend interface."""

    name = "gpu"
    stream = None
    made = []

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.launches = {}
        self.freed = []
        Device.made.append(self)

    def free(self, buf):
        self.freed.append(buf.handle)


class NoCopy(Device):
    def copy(self, dst, src):
        raise MemoryError("no room for a copy")


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A reduce kata with small bench cases; calibration, timing and torch faked; counters of
    bench_data (by thread) and compare calls; `after_timing` hooks run on the outputs."""
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    real = catalog.load("reduce")
    kata = dataclasses.replace(real, bench=dataclasses.replace(real.bench, cases=CASES))
    monkeypatch.setattr(catalog, "load", lambda kid: kata)
    Device.made = []
    import harness.backends.gpu

    monkeypatch.setattr(harness.backends.gpu, "GpuBackend", Device)
    cal = types.SimpleNamespace(ceilings=lambda: Ceilings(4e12, 60e12), copy_bandwidth=4e12)
    monkeypatch.setattr(calibrate, "load_or_calibrate", lambda backend, **k: (cal, False))
    monkeypatch.setattr(calibrate, "health_check", lambda backend, c: (4e12, None))
    monkeypatch.setattr(timing, "L2Flush", lambda nbytes, mode="read": None)
    monkeypatch.setattr(timing, "ClockProbe", lambda: None)
    state = types.SimpleNamespace(kata=kata, loads=[], compares=0, after_timing=[], outs=[])

    def measure(run, stream, *, policy=None, before=None, flush=None, clock=None):
        for _ in range(3):
            if before:
                before()
            run()
        for hook in state.after_timing:
            hook(state.outs[-1])
        s = [1e-3] * 10
        return timing.TimingResult(timing.stats(s), "noise", tuple(s), 0, None, None, 0.0, 0.0, 0.01)

    monkeypatch.setattr(timing, "measure", measure)
    real_bench_data = bench_inputs.bench_data

    def counted(*a, **k):
        state.loads.append(threading.current_thread() is threading.main_thread())
        return real_bench_data(*a, **k)

    monkeypatch.setattr(perf, "bench_data", counted)
    monkeypatch.setattr(prefetching, "bench_data", counted)
    real_compare = check.compare

    def compare(*a, **k):
        state.compares += 1
        return real_compare(*a, **k)

    monkeypatch.setattr(check, "compare", compare)
    yield state
    prefetching._PREFETCHED.clear()


def launch_fn(state):
    def launch(gpu, x, out, n):
        state.outs.append((gpu, out))
        gpu.memset(out, 0)
        gpu.launch("reduce", (1, 1, 1), (1, 1, 1), 0, [x, out, n])
    return launch


def stage(state, **kw):
    compiled = types.SimpleNamespace(ptx=PTX, cubin=None, filename="kernel.cu", resources={})
    kw.setdefault("with_baseline", False)
    return perf.performance_stage(state.kata, compiled, launch_fn(state), make_plan=lambda b: b, seed=0, **kw)


def prefetch_in_background(kata_id="reduce", seed=0):
    worker_mod.start_background("grader.performance.prefetching:prefetch", {"kata_id": kata_id, "seed": seed})


def test_a_prefetched_grade_loads_nothing_itself_and_reports_its_phases(env):
    prefetch_in_background()
    res = stage(env)
    assert res.ok, (res.error, res.flags)
    # both cases and their rotation sets (issue 24) loaded by the background thread, none by the stage
    assert env.loads == [False] * 4
    assert len(Device.made) == 1  # the prefetch's backend is the stage's
    # per case: the checked run, then after timing the rotation set's outputs (the first set's bytes
    # were unchanged)
    assert env.compares == 4
    assert all(r.recheck == () for r in res.cases)
    for name in ("prefetch_wait", "setup", "upload", "check", "kernel_timing", "recheck", "background_backend",
                 "background_calibration", "background_data"):
        assert name in res.phases and res.phases[name] >= 0, name
    assert "data" not in res.phases and res.data_s == 0.0
    assert set(res.phases) <= set(perf.PHASES) | {k for k in res.phases if k.startswith("background_")}
    assert prefetching._PREFETCHED == {}  # taken out of the store


def test_without_a_prefetch_the_stage_loads_the_data_itself(env):
    res = stage(env)
    assert res.ok and env.loads == [True] * 4 and len(Device.made) == 1
    assert res.phases["data"] > 0 and res.data_s == pytest.approx(res.phases["data"])
    assert res.phases["prefetch_wait"] < 0.5


def test_a_failing_prefetch_changes_no_verdict(env, monkeypatch):
    real = perf.bench_data

    def only_in_the_foreground(*a, **k):
        if threading.current_thread() is not threading.main_thread():
            raise OSError("disk full")
        return real(*a, **k)

    monkeypatch.setattr(perf, "bench_data", only_in_the_foreground)
    monkeypatch.setattr(prefetching, "bench_data", only_in_the_foreground)
    prefetch_in_background()
    res = stage(env)
    assert res.ok and res.phases["data"] > 0 and "background_data" in res.phases
    assert env.loads == [True] * 4


def test_a_prefetch_for_another_seed_or_other_cases_is_not_used(env):
    prefetching.prefetch("reduce", seed=5)  # synchronously, here: 2 loads
    res = stage(env)
    assert res.ok and len(env.loads) == 8 and "data" in res.phases  # the stage loaded both cases itself
    prefetching.prefetch("reduce", seed=0)
    res = stage(env, cases=[{"n": 5000}])
    assert res.ok and len(env.loads) == 14 and "data" in res.phases and prefetching._PREFETCHED == {}


def test_no_gpu_no_prefetch_work(env, monkeypatch):
    import harness.backends.gpu

    def no_gpu():
        raise harness.backends.gpu.GpuUnavailable("no CUDA device")

    monkeypatch.setattr(harness.backends.gpu, "GpuBackend", no_gpu)
    prefetching.prefetch("reduce", seed=0)
    entry = prefetching._PREFETCHED[("reduce", 0)]
    assert entry.backend is None and entry.data == {} and "no CUDA device" in entry.error
    assert env.loads == []


def test_outputs_that_changed_but_are_right_are_checked_again_on_the_host(env):
    def nudge(run):
        gpu, out = run
        gpu._array(out)[0] = np.nextafter(gpu._array(out)[0], np.float32(np.inf))  # another summation order

    env.after_timing.append(nudge)
    res = stage(env)
    # the last timed run was on the rotation set (issue 24), whose outputs are always checked again
    assert res.ok and env.compares == 4 and all(r.recheck == () for r in res.cases)


def test_outputs_wrong_after_timing_fail(env):
    env.after_timing.append(lambda run: run[0].memset(run[1], 0xFF))  # NaN
    res = stage(env)
    assert not res.ok and res.error.startswith("the output was wrong after timing at {'n': ")
    # the learner is told what was off and what makes a checked kernel fail later
    assert "NaN" in res.error and "float atomicAdds" in res.error and "state kept between launches" in res.error
    assert all(r.recheck and "NaN" in r.recheck[0] for r in res.cases)
    assert any("the output changed during timing" in f for f in res.flags)


def test_no_device_copy_is_needed_the_grader_compares_the_returned_bytes(env, monkeypatch):
    import harness.backends.gpu

    monkeypatch.setattr(harness.backends.gpu, "GpuBackend", NoCopy)
    res = stage(env)
    # per case: the checked run, then the rotation set (the first set's bytes were unchanged)
    assert res.ok and env.compares == 4 and Device.made[-1].freed == []


def test_wrong_at_bench_size_still_reports_phases(env):
    compiled = types.SimpleNamespace(ptx=PTX + ".entry mode_wrong() {}\n", cubin=None, filename="kernel.cu",
                                     resources={})
    res = perf.performance_stage(env.kata, compiled, launch_fn(env), make_plan=lambda b: b, with_baseline=False)
    assert not res.ok and res.error.startswith("wrong at bench size {'n': 5000}")
    assert {"setup", "upload", "check", "kernel_timing"} <= set(res.phases)


def test_the_baseline_phase_names_a_missing_torch(env):
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed: its baseline needs a GPU")
    except ImportError:
        pass
    res = stage(env, with_baseline=True)
    assert res.ok and "torch_import" in res.phases and any("torch is not installed" in f for f in res.flags)


def _library(env, monkeypatch, gpu="NVIDIA H200"):
    """The baseline's timing faked (no torch here): each call counted, 2 ms for the library."""
    calls = []

    def time_baseline(kata, bufs, policy, flush, clock, backend, phases):
        calls.append(dict(bufs.case))
        s = [2e-3] * 10
        return (timing.TimingResult(timing.stats(s), "noise", tuple(s), 0, None, None, 0.0, 0.0, 0.02), None,
                (("torch.sum", 2e-3),), ("cub: not timed (not installed)",))

    monkeypatch.setattr(perf, "_time_baseline", time_baseline)
    monkeypatch.setattr(baseline_cache, "machine", lambda backend: gpu)
    return calls


def test_a_grade_keeps_the_library_time_and_the_next_grade_reuses_it_without_torch(env, monkeypatch):
    calls = _library(env, monkeypatch)
    first = stage(env, with_baseline=True, cached_baseline=True)
    assert first.ok and len(calls) == 2 and "baseline_cached" not in first.phases
    assert baseline_cache.all_cached(env.kata, prefetching.bench_seeds(2, 0), timing.TimingPolicy())
    second = stage(env, with_baseline=True, cached_baseline=True)
    assert second.ok and len(calls) == 2  # nothing timed again
    assert second.phases["baseline_cached"] >= 0 and "torch_import" not in second.phases
    for a, b in zip(first.cases, second.cases):  # the same library, the same score
        assert a.libraries == b.libraries == (("torch.sum", 2e-3),) and a.score == b.score
        assert b.baseline.stats.median == 2e-3
    # `kata bench` (no cached_baseline) always times afresh
    stage(env, with_baseline=True)
    assert len(calls) == 4


def test_a_cached_library_time_is_not_used_for_another_gpu_when_stale_damaged_or_turned_off(env, monkeypatch):
    calls = _library(env, monkeypatch)
    stage(env, with_baseline=True, cached_baseline=True)
    assert len(calls) == 2
    calls = _library(env, monkeypatch, gpu="NVIDIA H100 80GB HBM3")  # another GPU: timed again
    stage(env, with_baseline=True, cached_baseline=True)
    assert len(calls) == 2
    monkeypatch.setattr(baseline_cache, "MAX_AGE_S", -1.0)  # older than a day: timed again
    stage(env, with_baseline=True, cached_baseline=True)
    assert len(calls) == 4
    monkeypatch.setattr(baseline_cache, "MAX_AGE_S", 3600.0)
    for f in baseline_cache.folder().glob("*.json"):  # a damaged file reads as absent
        f.write_text('{"baseline": "forged"')
    stage(env, with_baseline=True, cached_baseline=True)
    assert len(calls) == 6
    monkeypatch.setenv(baseline_cache.CACHE_ENV, "0")
    stage(env, with_baseline=True, cached_baseline=True)
    assert len(calls) == 8 and not baseline_cache.all_cached(env.kata, prefetching.bench_seeds(2, 0), timing.TimingPolicy())


def test_the_cache_key_follows_the_case_seed_policy_and_reference(env):
    policy = timing.TimingPolicy()
    k = baseline_cache.key(env.kata, {"n": 5000}, 1, policy)
    assert k == baseline_cache.key(env.kata, {"n": 5000}, 1, policy)
    assert len({k, baseline_cache.key(env.kata, {"n": 5001}, 1, policy),
                baseline_cache.key(env.kata, {"n": 5000}, 2, policy),
                baseline_cache.key(env.kata, {"n": 5000}, 1, dataclasses.replace(policy, flush_bytes=1 << 20))}) == 4


def test_with_every_library_time_cached_the_prefetch_imports_no_torch(env, monkeypatch):
    _library(env, monkeypatch)
    prefetch_in_background()
    stage(env, with_baseline=True, cached_baseline=True)
    started = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    prefetching.prefetch("reduce", 0)
    assert "kata-torch-import" not in started


def test_kata_start_times_the_libraries_ahead_into_the_cache(env, monkeypatch):
    calls = _library(env, monkeypatch)
    monkeypatch.setattr(baseline_cache, "torch_version", lambda: "2.11.0")
    assert perf.time_baselines_ahead(env.kata, 0) == 2 and len(calls) == 2
    assert baseline_cache.all_cached(env.kata, prefetching.bench_seeds(2, 0), timing.TimingPolicy())
    assert perf.time_baselines_ahead(env.kata, 0) == 2 and len(calls) == 2  # nothing twice
    res = stage(env, with_baseline=True, cached_baseline=True)
    assert res.ok and len(calls) == 2 and "baseline_cached" in res.phases
