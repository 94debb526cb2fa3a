"""The performance stage: timing against the roofline and the library on a GPU. On the CPU emulator
the memory-efficiency report (grader/performance/efficiency.py) stands in its place, never a time.

GPU, per bench case: fresh inputs (a seed the correctness stage did not use; generated once per
machine with their reference outputs, see grader/performance/bench_inputs.py), one run whose outputs
are read back, timing per harness/measure/timing.py with outputs re-poisoned and in-out buffers
restored before every sample (outside the timed region), samples rotating between two input sets
(grader/performance/rotation.py), both sets' outputs read back after timing, and the kata's baseline
timed the same way in the same process at the same shape.

The GPU worker only measures (measure_stage -> RawPerformance: output bytes, timing samples, the
calibrated ceilings); the grader process judges (grader/performance/judge.py): it checks every
returned output against its own reference outputs, recomputes the timing statistics from the
samples, rejects a time below the physical floor and scores the case (grader/performance/score.py).
A worker cannot claim a pass or a score: it sends none.

Latency: a grade's pipeline sends `prefetch` to the GPU worker as soon as correctness passed, so
the backend, the calibration, `import torch` and the bench inputs are ready (or nearly) while the
CPU emulator still runs the sanitizer; performance_stage waits for it and takes what it made,
doing itself whatever the prefetch did not do. `PerformanceResult.phases` says where time went.
"""
from __future__ import annotations

import time

import numpy as np

from grader.performance import prefetching
from grader.performance.bench_inputs import bench_data
from grader.performance.prefetching import bench_seeds, rotation_seeds
from grader.performance.rotation import Rotation as _Rotation
from grader.grading.cases import reference_params
from grader.performance.judge import judge
from grader.performance.occupancy import occupancy_table
from grader.performance.results import CaseTiming, PerformanceResult, RawCase, RawPerformance  # noqa: F401
from harness.measure import timing
from harness.sandbox.isolation import poison_byte



#: the stage's foreground phases, in order: waiting for the prefetch; backend, calibration, health
#: check and module load; bench inputs; uploads; the checked run's check; the learner's timing
#: (with the checked run); the check after timing; `import torch` (when the prefetch did not);
#: the library's timing; reading the library's time from the machine's cache instead
PHASES = ("prefetch_wait", "setup", "data", "upload", "check", "kernel_timing", "recheck", "torch_import",
          "baseline_timing", "baseline_cached")


def _shape_count(kata, arg, env: dict) -> int:
    from grader.catalog import evaluate

    count = 1
    for dim in arg.shape:
        count *= int(evaluate(dim, env))
    return count


class _Case:
    """One bench case's device buffers: pristine inputs, the plan's arguments, poisoning and restore."""

    def __init__(self, kata, backend, case: dict, seed: int, inputs: dict | None = None):
        self.kata, self.backend, self.case = kata, backend, dict(case)
        self.inputs = inputs if inputs is not None else kata.reference.generate(np.random.default_rng(seed), **case)
        env = reference_params(kata, case, self.inputs)
        self.args: dict[str, object] = {}
        self.outs: dict = {}
        self.pristine: dict = {}
        for a in kata.args:
            if a.role == "scalar":
                self.args[a.name] = env[a.name]
            elif a.role == "in":
                self.args[a.name] = backend.upload(np.asarray(self.inputs[a.name], dtype=a.dtype))
            else:
                if a.role == "inout":
                    self.pristine[a.name] = backend.upload(np.asarray(self.inputs[a.name], dtype=a.dtype))
                buf = backend.alloc(_shape_count(kata, a, env), a.dtype)
                self.args[a.name] = self.outs[a.name] = buf
        self.backend.synchronize()

    def prepare(self) -> None:
        """Before every run, outside the timed region: poison outputs, restore in-out buffers."""
        for name, buf in self.outs.items():
            if name in self.pristine:
                self.backend.copy(buf, self.pristine[name])
            else:
                self.backend.memset(buf, poison_byte(buf.dtype))  # the correctness stage's poison

    def outputs(self) -> dict:
        return {name: self.backend.download(buf) for name, buf in self.outs.items()}

    def torch_inputs(self):
        import torch

        out = {}
        for a in self.kata.args:
            v = self.args[a.name]
            if a.role == "scalar":
                out[a.name] = v
            elif a.role == "in":
                out[a.name] = torch.from_dlpack(self.backend._view(v))
            elif a.role == "inout":  # the baseline gets its own copy: it must not see our outputs
                out[a.name] = torch.from_dlpack(self.backend._view(self.pristine[a.name])).clone()
        return out


def _time_baseline(kata, case_bufs: _Case, policy, flush, clock, backend, phases: dict):
    """(fastest library's timing, why none was timed, [(label, median s)] fastest first, notes).

    The reference's baseline(torch, inputs, **case) returns the callable to time, or a dict
    {label: callable, or the reason that library is not usable here}: each callable is timed and
    the fastest is the library the score compares with (what a user would call)."""
    fn = getattr(kata.reference, "baseline", None)
    if fn is None:
        return None, None, (), ()
    t0 = time.perf_counter()
    try:
        import torch
    except ImportError:
        return None, "torch is not installed: no baseline was timed", (), ()
    finally:
        _add(phases, "torch_import", time.perf_counter() - t0)
    t0 = time.perf_counter()
    calls = fn(torch, case_bufs.torch_inputs(), **case_bufs.case)
    calls = calls if isinstance(calls, dict) else {kata.bench.baseline or "library": calls}
    stream = backend.external_stream(torch.cuda.current_stream().cuda_stream)
    timed, notes = [], []
    for label, call in calls.items():
        if isinstance(call, str):
            notes.append(f"{label}: not timed ({call})")
            continue
        timed.append((timing.measure(call, stream, policy=policy, flush=flush, clock=clock), label))
    _add(phases, "baseline_timing", time.perf_counter() - t0)
    timed.sort(key=lambda tl: tl[0].stats.median)
    libraries = tuple((label, r.stats.median) for r, label in timed)
    return (timed[0][0] if timed else None), None, libraries, tuple(notes)


def _baseline(kata, case_bufs: _Case, case_seed: int, policy, flush, clock, backend, phases: dict, cached: bool):
    """_time_baseline, through this machine's cache of library times when `cached`."""
    if not cached or getattr(kata.reference, "baseline", None) is None:
        return _time_baseline(kata, case_bufs, policy, flush, clock, backend, phases)
    from grader.performance import baseline_cache

    t0 = time.perf_counter()
    key, gpu = baseline_cache.key(kata, case_bufs.case, case_seed, policy), baseline_cache.machine(backend)
    entry = baseline_cache.load(key, gpu)
    if entry is not None:
        _add(phases, "baseline_cached", time.perf_counter() - t0)
        return entry.baseline, None, entry.libraries, entry.notes
    bt, why, libraries, notes = _time_baseline(kata, case_bufs, policy, flush, clock, backend, phases)
    if why is None and bt is not None:
        baseline_cache.save(key, baseline_cache.Entry(bt, libraries, notes, gpu, time.time()))
    return bt, why, libraries, notes


def time_baselines_ahead(kata, seed: int, policy: timing.TimingPolicy = timing.TimingPolicy()) -> int:
    """`kata start`'s detached process (grader/practice/bench_ahead.py): the library's time at each
    bench case a grade with `seed` will score against, into the machine's cache, where it is
    missing. Returns how many cases have one afterwards (0: no baseline, no torch or no GPU)."""
    from grader.performance import baseline_cache

    if getattr(kata.reference, "baseline", None) is None or baseline_cache.torch_version() is None:
        return 0
    from harness.backends.gpu import GpuBackend

    backend = GpuBackend()
    gpu = baseline_cache.machine(backend)
    flush, clock = timing.L2Flush(policy.flush_bytes, policy.flush_mode), timing.ClockProbe()
    cases = tuple(dict(c) for c in kata.bench.cases)
    done = 0
    for case, case_seed in zip(cases, bench_seeds(len(cases), seed)):
        if baseline_cache.load(baseline_cache.key(kata, case, case_seed, policy), gpu) is None:
            bufs = _Case(kata, backend, case, case_seed, bench_data(kata, case, case_seed).inputs)
            bt, why, _, _ = _baseline(kata, bufs, case_seed, policy, flush, clock, backend, {}, True)
            bufs = None  # this case's buffers go before the next allocates
            if why is not None or bt is None:
                continue
        done += 1
    return done


def _add(phases: dict, name: str, seconds: float) -> None:
    phases[name] = phases.get(name, 0.0) + seconds


def performance_stage(kata, compiled, launch_fn, *, seed: int = 0, cases=None, **kw) -> PerformanceResult:
    """Measure (measure_stage) and judge (grader/performance/judge.py) in one process: bench runs and the
    tests. A grade measures in its GPU worker and judges in the grader from the returned bytes."""
    raw, data = _measure(kata, compiled, launch_fn, seed=seed, cases=cases, **kw)
    return judge(kata, raw, seed=seed, cases=cases, data=data)


def measure_stage(kata, compiled, launch_fn, **kw) -> RawPerformance:
    """The GPU worker's part of the performance stage: run, time and read back, never judge.

    Same arguments as performance_stage: kata: grader.catalog.Kata · compiled: CompileResult with a
    cubin · launch_fn: launch.py's `launch` · launch_file: its path (errors name its lines) · backend: a
    harness.backends.gpu.GpuBackend (the prefetch's, or made here, when None) · make_plan(backend): the
    launch-plan API object handed to launch_fn · cases: override kata.bench.cases · calibration: a
    harness.measure.calibrate.Calibration (the prefetch's, or loaded or measured, when None)."""
    return _measure(kata, compiled, launch_fn, **kw)[0]


def _measure(kata, compiled, launch_fn, *, launch_file=None, backend=None, seed: int = 0, make_plan=None,
             policy: timing.TimingPolicy = timing.TimingPolicy(), cases=None,
             calibration=None, with_baseline: bool = True,
             cached_baseline: bool = False) -> tuple[RawPerformance, dict]:
    """(what the grader judges, the bench data used by key i / ("rotation", i), for an in-process judge).
    cached_baseline: take the library's time from this machine's cache when it has a fresh one, and
    keep a fresh timing there (grader/performance/baseline_cache.py; a grade's, never `kata bench`'s)."""
    from harness.measure import calibrate as _cal

    t0 = time.perf_counter()
    phases: dict[str, float] = {}
    pre = prefetching.take(kata.id, seed, phases)
    t_setup = time.perf_counter()
    if backend is None:
        if pre is not None and pre.backend is not None:
            backend = pre.backend
        else:
            from harness.backends.gpu import GpuBackend

            backend = GpuBackend()
    if calibration is None and pre is not None:
        calibration = pre.calibration
    if calibration is None:
        calibration, _ = _cal.load_or_calibrate(backend)
    calibration, health = _cal.trusted(backend, calibration)  # the quick probe, both ways
    if compiled.ptx is not None or compiled.cubin is not None:  # a Python kernel compiles per launch
        backend.load(compiled.ptx, compiled.cubin, compiled.filename)
    if make_plan is None:
        from harness.backends.plan import Plan

        make_plan = lambda b: Plan(b, launch_file or "launch.py")  # noqa: E731
    plan = make_plan(backend)
    ceilings = calibration.ceilings()
    flush, clock = timing.L2Flush(policy.flush_bytes, policy.flush_mode), timing.ClockProbe()
    phases["setup"] = time.perf_counter() - t_setup
    flags = []
    results: list[RawCase] = []
    used: dict = {}
    use_pre = pre is not None and cases is None and pre.cases == tuple(dict(c) for c in kata.bench.cases)
    todo = tuple(cases if cases is not None else kata.bench.cases)
    seeds = bench_seeds(len(todo), seed)
    for i, (case, case_seed, other_seed) in enumerate(zip(todo, seeds, rotation_seeds(seeds))):
        data = pre.data.get(i) if use_pre else None
        if data is None:
            data = bench_data(kata, case, case_seed)
            _add(phases, "data", data.seconds)
        t = time.perf_counter()
        bufs = _Case(kata, backend, case, case_seed, data.inputs)
        _add(phases, "upload", time.perf_counter() - t)
        t = time.perf_counter()
        bufs.prepare()
        launch_fn(plan, **bufs.args)
        backend.synchronize()
        checked = bufs.outputs()  # the grader checks these bytes before it trusts any time
        _add(phases, "kernel_timing", time.perf_counter() - t)
        # Timed samples rotate between this case's buffers and a second set with other inputs (other
        # addresses, other bytes): a kernel that remembers its last answer is timed on a launch
        # whose answer it has not seen, and both sets' outputs go back to the grader afterwards.
        t = time.perf_counter()
        fresh = pre.data.get(("rotation", i)) if use_pre else None
        if fresh is None:
            fresh = bench_data(kata, case, other_seed)
            _add(phases, "data", fresh.seconds)
        used[i], used[("rotation", i)] = data, fresh
        other = _Case(kata, backend, case, 0, fresh.inputs)
        rotation = _Rotation(launch_fn, plan, (bufs, other))
        _add(phases, "upload", time.perf_counter() - t)
        t = time.perf_counter()
        kt = timing.measure(rotation.run, backend.stream, policy=policy, before=rotation.prepare, flush=flush,
                            clock=clock)
        t_read = time.perf_counter()
        _add(phases, "kernel_timing", t_read - t)
        after = bufs.outputs()
        after_other = other.outputs() if rotation.runs[1] else None
        other = rotation = None
        _add(phases, "recheck", time.perf_counter() - t_read)
        bt, why, libraries, notes = (
            _baseline(kata, bufs, case_seed, policy, flush, clock, backend, phases, cached_baseline)
            if with_baseline else (None, None, (), ()))
        if why:
            flags.append(why)
        results.append(RawCase(dict(case), kt, bt, libraries, tuple(notes), checked, after, after_other))
        bufs = data = fresh = None  # drop this case's buffers before the next allocates
    if pre is not None:
        pre.data.clear()
    occ = tuple(occupancy_table(compiled.resources, backend.launches, backend.facts))
    raw = RawPerformance(backend.name, backend.facts.name, ceilings, health, tuple(results), occ, tuple(flags),
                         time.perf_counter() - t0, phases.get("data", 0.0), phases)
    return raw, used
