"""The performance stage: timing against the roofline and the library on a GPU. On the CPU emulator
the memory-efficiency report (grader/performance/efficiency.py) stands in its place, never a time.

GPU, per bench case: fresh inputs (a seed the correctness stage did not use; generated once per
machine with their reference outputs, see grader/performance/bench_inputs.py), one checked run,
timing per harness/measure/timing.py with outputs re-poisoned and in-out buffers restored before every
sample (outside the timed region), the output checked again after timing, the kata's baseline
timed the same way in the same process at the same shape, and the case scored by grader/performance/score.py
against ceilings that harness/measure/calibrate.py measured on this GPU.

The check after timing compares the outputs with device copies taken right after the checked run
(Backend.equal, bytewise on the GPU); only outputs that changed (float atomics may reorder a sum)
are downloaded and checked against the reference again.

Latency: a grade's pipeline sends `prefetch` to the GPU worker as soon as correctness passed, so
the backend, the calibration, `import torch` and the bench inputs are ready (or nearly) while the
CPU emulator still runs the sanitizer; performance_stage waits for it and takes what it made,
doing itself whatever the prefetch did not do. `PerformanceResult.phases` says where time went.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from grader.performance import prefetching, score as _score
from grader.performance.bench_inputs import bench_data
from grader.performance.prefetching import BENCH_SEED_OFFSET, ROTATION_SEED
from grader.performance.rotation import FLOOR_FRACTION, Rotation as _Rotation
from grader.grading.cases import reference_params
from grader.performance.occupancy import OccupancyResult, occupancy_table
from harness.measure import timing
from harness.sandbox.isolation import poison_byte



@dataclass(frozen=True)
class CaseTiming:
    case: dict  # the bench case's parameters
    kernel: timing.TimingResult  # the learner's launch plan
    baseline: timing.TimingResult | None  # the library at the same shape (None: no torch / none declared)
    score: _score.CaseScore
    recheck: tuple[str, ...]  # mismatches of the output after timing (empty: still correct)
    # every library timed at this shape, (label, median s), fastest first: `baseline` is the first
    # (a kata's reference may offer several, e.g. a dequantise-then-GEMV and a fused int4 kernel)
    libraries: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class PerformanceResult:
    ok: bool  # every case ran, was correct before and after timing, and was scored
    backend: str  # "gpu"; the CPU backend returns a MemoryReport instead
    gpu: str  # device name
    ceilings: _score.Ceilings | None  # what the roofline used (calibrated on this GPU)
    health: str | None  # a warning when the GPU runs > 5 % below its calibration
    cases: tuple[CaseTiming, ...]
    summary: _score.ScoreSummary | None  # geometric mean over cases, tier, next target
    occupancy: tuple[OccupancyResult, ...]  # static report: registers, shared, spills, limiter
    flags: tuple[str, ...] = field(default_factory=tuple)  # everything that makes a number doubtful
    error: str | None = None  # why the stage could not finish (wrong at bench size, launch failure)
    wall_s: float = 0.0  # the stage's own duration, for the latency measurements
    data_s: float = 0.0  # of which making or loading bench inputs and reference outputs
    # Seconds per phase of the stage (PHASES; absent: not reached), and "background_*": what the
    # prefetch spent while the emulator ran the sanitizer (overlapped, not part of wall_s).
    phases: dict = field(default_factory=dict)


#: the stage's foreground phases, in order: waiting for the prefetch; backend, calibration, health
#: check and module load; bench inputs; uploads; the checked run's check; the learner's timing
#: (with the checked run); the check after timing; `import torch` (when the prefetch did not);
#: the library's timing
PHASES = ("prefetch_wait", "setup", "data", "upload", "check", "kernel_timing", "recheck", "torch_import",
          "baseline_timing")


def _shape_count(kata, arg, env: dict) -> int:
    from grader.catalog import evaluate

    count = 1
    for dim in arg.shape:
        count *= int(evaluate(dim, env))
    return count


def _check(kata, inputs: dict, outputs: dict, case: dict, expected: dict, scales: dict | None = None) -> list[str]:
    """Mismatches of outputs under the kata's tolerance: the same rule as the correctness stage
    (scales: the error scales cached with the bench inputs, so they are not recomputed per check)."""
    from grader.grading.check import compare

    res = compare(kata, inputs, outputs, expected, reference_params(kata, case, inputs), scales=scales)
    return [] if res.ok else [res.headline()]


class _Case:
    """One bench case's device buffers: pristine inputs, the plan's arguments, poisoning and restore."""

    def __init__(self, kata, backend, case: dict, seed: int, inputs: dict | None = None):
        self.kata, self.backend, self.case = kata, backend, dict(case)
        self.inputs = inputs if inputs is not None else kata.reference.generate(np.random.default_rng(seed), **case)
        env = reference_params(kata, case, self.inputs)
        self.args: dict[str, object] = {}
        self.outs: dict = {}
        self.pristine: dict = {}
        self.kept: dict | None = None  # device copies of the outputs after the checked run
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

    def keep_outputs(self) -> None:
        """Device copies of the outputs as they are now (after the checked run), for unchanged();
        none (the host check then runs again) when the device cannot hold them."""
        self.kept = {}
        try:
            for name, buf in self.outs.items():
                self.kept[name] = self.backend.alloc(buf.size, buf.dtype)
                self.backend.copy(self.kept[name], buf)
            self.backend.synchronize()
        except Exception:  # out of device memory, a backend without copy: the old way, same verdict
            self.drop_kept()
            self.kept = None

    def unchanged(self) -> bool:
        """Whether every output holds the very bytes it held after the checked run."""
        if not self.kept:
            return False
        try:
            return all(self.backend.equal(buf, self.kept[name]) for name, buf in self.outs.items())
        except Exception:  # e.g. the comparison kernel failed to build: check on the host instead
            return False

    def drop_kept(self) -> None:
        for buf in (self.kept or {}).values():
            self.backend.free(buf)
        self.kept = None

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


def _add(phases: dict, name: str, seconds: float) -> None:
    phases[name] = phases.get(name, 0.0) + seconds


def performance_stage(kata, compiled, launch_fn, *, launch_file=None, backend=None, seed: int = 0, make_plan=None,
                      policy: timing.TimingPolicy = timing.TimingPolicy(), cases=None,
                      calibration=None, with_baseline: bool = True) -> PerformanceResult:
    """Time the learner's launch plan over the kata's bench cases on a GPU and score it.

    kata: grader.catalog.Kata · compiled: CompileResult with a cubin · launch_fn: launch.py's
    `launch` · launch_file: its path (errors name its lines) · backend: a harness.backends.gpu.GpuBackend
    (the prefetch's, or made here, when None) · make_plan(backend): the launch-plan API object
    handed to launch_fn (harness.backends.plan.Plan(backend, launch_file) by default) · cases: override
    kata.bench.cases · calibration: a harness.measure.calibrate.Calibration (the prefetch's, or loaded or
    measured, when None)."""
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
    flags = [health] if health else []
    results: list[CaseTiming] = []
    base = dict(backend=backend.name, gpu=backend.facts.name, ceilings=ceilings, health=health)
    use_pre = pre is not None and cases is None and pre.cases == tuple(dict(c) for c in kata.bench.cases)
    for i, case in enumerate(cases if cases is not None else kata.bench.cases):
        data = pre.data.get(i) if use_pre else None
        if data is None:
            data = bench_data(kata, case, seed + BENCH_SEED_OFFSET + i)
            _add(phases, "data", data.seconds)
        inputs, expected, scales = data.inputs, data.expected, data.scales
        t = time.perf_counter()
        bufs = _Case(kata, backend, case, seed + BENCH_SEED_OFFSET + i, inputs)
        _add(phases, "upload", time.perf_counter() - t)
        run = lambda: launch_fn(plan, **bufs.args)  # noqa: E731
        t = time.perf_counter()
        bufs.prepare()
        run()
        backend.synchronize()
        t_keep = time.perf_counter()
        _add(phases, "kernel_timing", t_keep - t)
        bufs.keep_outputs()  # before anything else touches them: the bytes the check below sees
        t_check = time.perf_counter()
        _add(phases, "recheck", t_check - t_keep)
        wrong = _check(kata, bufs.inputs, bufs.outputs(), case, expected, scales)
        _add(phases, "check", time.perf_counter() - t_check)
        if wrong:
            return PerformanceResult(False, **base, cases=tuple(results), summary=None, occupancy=(),
                                     flags=tuple(flags), wall_s=time.perf_counter() - t0, data_s=phases.get("data", 0.0),
                                     error=f"wrong at bench size {case}: " + "; ".join(wrong[:3]), phases=phases)
        # Timed samples rotate between this case's buffers and a second set with other inputs (other
        # addresses, other bytes): a kernel that remembers its last answer is timed on a launch
        # whose answer it has not seen, and both sets' outputs are checked afterwards.
        t = time.perf_counter()
        fresh = pre.data.get(("rotation", i)) if use_pre else None
        if fresh is None:
            fresh = bench_data(kata, case, seed + BENCH_SEED_OFFSET + i + ROTATION_SEED)
            _add(phases, "data", fresh.seconds)
        other = _Case(kata, backend, case, 0, fresh.inputs)
        rotation = _Rotation(launch_fn, plan, (bufs, other))
        _add(phases, "upload", time.perf_counter() - t)
        t = time.perf_counter()
        kt = timing.measure(rotation.run, backend.stream, policy=policy, before=rotation.prepare, flush=flush,
                            clock=clock)
        t_recheck = time.perf_counter()
        _add(phases, "kernel_timing", t_recheck - t)
        # Unchanged bytes need no second look; changed ones (float atomics reorder sums) are checked.
        recheck = () if bufs.unchanged() else tuple(_check(kata, bufs.inputs, bufs.outputs(), case, expected,
                                                           scales))
        if rotation.runs[1] and not recheck:
            recheck = tuple(_check(kata, other.inputs, other.outputs(), case, fresh.expected, fresh.scales))
        bufs.drop_kept()
        other = fresh = rotation = None
        _add(phases, "recheck", time.perf_counter() - t_recheck)
        bt, why, libraries, notes = (_time_baseline(kata, bufs, policy, flush, clock, backend, phases)
                                     if with_baseline else (None, None, (), ()))
        if why:
            flags.append(why)
        flags.extend(f"{case}: {n}" for n in notes)
        cost = kata.reference.cost(**reference_params(kata, case, bufs.inputs))
        floor = _score.roofline_time(cost, ceilings)[0] * FLOOR_FRACTION
        if kt.stats.median < floor:  # faster than the GPU can move the bytes or do the FLOPs
            return PerformanceResult(False, **base, cases=tuple(results), summary=None, occupancy=(),
                                     flags=tuple(flags), wall_s=time.perf_counter() - t0,
                                     data_s=phases.get("data", 0.0), phases=phases,
                                     error=f"impossible time at {case}: {kt.stats.median * 1e6:.2f} us is below "
                                     f"what this GPU needs to move the case's bytes and do its FLOPs "
                                     f"({floor / FLOOR_FRACTION * 1e6:.2f} us at the calibrated ceilings): the "
                                     "timed launches did not do the work (a kernel that remembers an answer?)")
        sc = _score.score_case(case, kata.bench.metric, kt.stats.median, cost, ceilings,
                               baseline_s=bt.stats.median if bt else None)
        flags.extend(f"{case}: {f}" for f in (*kt.flags, *sc.flags))
        if recheck:
            flags.append(f"{case}: the output changed during timing: {recheck[0]}")
        results.append(CaseTiming(dict(case), kt, bt, sc, recheck, libraries))
        bufs = data = inputs = expected = scales = None  # drop this case's buffers before the next allocates
    if pre is not None:
        pre.data.clear()
    summary = _score.summarize([r.score for r in results], kata.bench.metric, kata.bench.targets,
                               kata.bench.ceiling)
    occ = tuple(occupancy_table(compiled.resources, backend.launches, backend.facts))
    ok = bool(results) and not any(r.recheck for r in results)
    return PerformanceResult(ok, **base, cases=tuple(results), summary=summary, occupancy=occ,
                             flags=tuple(flags), wall_s=time.perf_counter() - t0, data_s=phases.get("data", 0.0),
                             error=None if ok else "the output was wrong after timing", phases=phases)
