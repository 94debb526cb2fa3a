"""What the emulator observes for the model, per bench case, run inside the learner's worker.

Two runs per case:
- a dry run of the launch plan at the bench shape: every launch recorded (grid, block, shared),
  nothing executed, so waves and occupancy come from the launches the GPU would see;
- a model run with the Profile observer on inputs the kata's generator made (never zero-filled:
  a kernel that skips work on zeros must not look fast), either
  "sample"/"data": the first few blocks of every launch at the kata's model shape (the bench
  shape, or smaller where the inputs are too large to make or a thread's loop too long to run);
  "full": the whole plan at a smaller shape (plans that steer themselves by what the kernels
  found, as BFS does).
Every run's budget is counted in emulated work (issues and their lanes), never in wall-clock time,
so the same kernel gets the same estimate on an idle or a loaded machine. A run that does not
fit its budget is run again at a smaller shape (the kata's `check_halve` dimensions halved, all
together) with a second, larger one beside it, and each instruction's count per block is
extrapolated to the bench shape along the two (summarise.py): a thread's loop over the whole
input is measured by its trip count, not guessed from the shape. A run that still does not fit,
or stops for another reason, makes the estimate a lower bound with no score.
Blocks are emulated in order from block 0, so a block that waits on earlier ones (a decoupled
look-back) finds them done.
"""
from __future__ import annotations

import numpy as np

from harness.backends.base import Buffer
from harness.backends.cpu import CpuBackend
from grader.performance.model import heavy, spread
from grader.performance.model.shapes import (MAX_HALVINGS, _count, _env, _halvable, _halvings_between,
                                             _model_cases, _scalars, halve_model)
from harness.backends.plan import Plan

SAMPLE_THREADS = 1024  # threads emulated per launch in a sample run (blocks 0, 1, ... of the grid)
#: emulated work (harness/emulator/engine.py: a fixed cost per instruction issue plus the issue's
#: active lanes weighted by opcode, which tracks CPU time where counting issues alone did not: a
#: wide group or an mma costs far more than one scalar issue) for all model runs of a kata
#: together, and for one run at most. A unit is ~7-11 ns of one core under the Profile observer:
#: the catalogue's solutions need 1-450 M (~0.1-4 s here); a learner's one-thread-per-row attention
#: spends all of it. A shape that does not fit is run smaller and extrapolated (_observe_case).
OBSERVE_STEPS = 1_000_000_000
RUN_STEPS = 500_000_000
#: no wall-clock limit on a model run: where it stops must never depend on the machine's load (the
#: worker's own timeout, stage.OBSERVE_TIMEOUT_S, is the safety net for an emulator that hangs)
SAFETY_WALL_S = float("inf")
_FAKE_BASE = 1 << 44


class DryBackend(CpuBackend):
    """Records launches, runs none: buffers are addresses only, reads return zeros."""

    def __init__(self):
        super().__init__()
        self._top = _FAKE_BASE
        self.dry_launches: list[tuple] = []
        self.allocations: list[int] = []  # elements of each buffer, in the order the plan made them

    def alloc(self, count, dtype):
        dtype = np.dtype(dtype)
        self.allocations.append(int(count))
        handle, self._top = self._top, self._top + (count * dtype.itemsize + 511) // 256 * 256
        return Buffer(handle, dtype, count)

    def upload(self, array):
        return self.alloc(np.asarray(array).size, np.asarray(array).dtype)

    def download(self, buf):
        return np.zeros(buf.size, buf.dtype)

    def memset(self, buf, byte):
        return None

    def copy(self, dst, src):
        return None

    def launch(self, name, grid, block, shared, args):
        self.dry_launches.append((name, tuple(grid), tuple(block), int(shared)))


def _run_plan(backend, launch_fn, launch_file, kata, buffers: dict, scalars: dict) -> Plan:
    plan = Plan(backend, launch_file)
    values = [scalars[a.name] if a.role == "scalar" else buffers[a.name] for a in kata.args]
    launch_fn(plan, *values)
    return plan


def dry_launches(kata, ptx, filename, launch_fn, launch_file, params: dict, extra: dict) -> list[tuple]:
    backend = DryBackend()
    backend.load(ptx, None, filename)
    scalars = _scalars(kata, params, extra, missing=1)
    env = _env(kata, params, scalars)
    buffers = {a.name: backend.alloc(_count(a, env), a.dtype) for a in kata.arrays}
    _run_plan(backend, launch_fn, launch_file, kata, buffers, scalars)
    return backend.dry_launches, backend.allocations


def model_run(kata, ptx, filename, launch_fn, launch_file, params: dict, mode: str, seed: int,
              sample_threads: int = SAMPLE_THREADS, steps: int = RUN_STEPS) -> tuple:
    """(Profile launches, cost at params, stopped, out of budget, emulated work, extra) of the model
    run; extra: the work of the item whose blocks were watched or probed ("heavy") and the
    probe's Profile launches ("probe", heavy.py) where the kata declares per-item work."""
    from harness.emulator.profile import Profile

    rng = np.random.default_rng(seed)
    inputs = dict(kata.reference.generate(rng, **params))
    item = heavy.heavy_item(kata, inputs, {**params, **_scalars(kata, params, {}, inputs)})
    # the blocks holding the heaviest item keep their own counts (a full run's longest warp)
    profile = Profile(watch=(lambda grid: heavy.probe_blocks(item["frac"], grid)) if item else None)
    backend = CpuBackend(observers=[profile], wall_clock_s=SAFETY_WALL_S)
    backend.run_budget = int(steps)
    allocations = []  # (address, bytes, elements) of every buffer: which one an atomic's address is in
    alloc = backend._alloc

    def logged(count, dtype):
        buf = alloc(count, dtype)
        allocations.append((backend._address(buf), buf.nbytes, buf.size))
        return buf

    backend._alloc = logged
    backend.load(ptx, None, filename)
    if mode in ("sample", "data"):
        backend.sample = lambda name, grid, block: np.arange(
            min(int(np.prod(grid)), max(1, sample_threads // max(1, int(np.prod(block))))))
    scalars = _scalars(kata, params, {}, inputs)
    env = _env(kata, params, scalars)
    buffers = {}
    for a in kata.arrays:
        if a.name in inputs and a.role != "out":
            buffers[a.name] = backend.upload(np.ascontiguousarray(inputs[a.name]).reshape(-1))
        else:
            buffers[a.name] = backend.alloc(_count(a, env), a.dtype)
    del inputs
    cost = kata.reference.cost(**{**params, **scalars})
    reads = [0]  # values the plan read back (gpu.read): each is a device-to-host sync on the GPU
    download = backend.download

    def counted(buf):
        reads[0] += 1
        return download(buf)

    backend.download = counted
    _run_plan(backend, launch_fn, launch_file, kata, buffers, scalars)
    for L in profile.launches:
        L["syncs"] = 0
    if profile.launches:
        profile.launches[-1]["syncs"] = reads[0]
    for L in profile.launches:
        found = [i for i, (at, size, n) in enumerate(allocations) if at <= L.get("atomic_hot_address", -1) < at + max(1, size)]
        L["atomic_buffer"] = found[0] if found else -1
        L["atomic_buffer_elems"] = allocations[found[0]][2] if found else 0
    extra = {"heavy": item["work"] if item else None, "probe": None, "probe_work": 0}
    work = backend.work
    if item is not None and mode in ("sample", "data") and not backend.out_of_budget:
        extra["probe"] = heavy.run_probe(backend, profile, lambda grid: heavy.probe_blocks(item["frac"], grid),
                                         lambda: _run_plan(backend, launch_fn, launch_file, kata, buffers, scalars))[0]
        extra["probe_work"] = backend.work - work  # bounded by heavy.PROBE_WORK, not the run's budget
    if mode in ("sample", "data") and not backend.out_of_budget and not backend.stopped:
        # blocks further along the grid than the sample's (spread.py): each launch's work per block
        extra["spread"] = spread.run(backend, profile, lambda: _run_plan(
            backend, launch_fn, launch_file, kata, buffers, scalars), work)
    return profile.launches, cost, bool(backend.stopped), bool(backend.out_of_budget), work, extra


def _largest_public(kata) -> dict:
    def size(case):
        total = 0
        for a in kata.arrays:
            try:
                total += _count(a, dict(case))
            except (KeyError, ValueError, TypeError):  # a shape over a value only the inputs carry
                continue
        return total
    return dict(max(kata.public, key=size))


def observe_in_worker(launch_fn, launch_file, kata_id: str, ptx: str, filename: str, seed: int = 0,
                      cases=None, registers: dict | None = None, bench_seeds: list | None = None):
    """Runs in the worker: one observation dict per bench case (summaries only, no records).
    bench_seeds: the seed of each bench case's inputs on the GPU (a GPU grade's with this seed
    unless given), for the heaviest item those inputs hold (heavy.py)."""
    from grader.performance.prefetching import BENCH_SEED_OFFSET
    from grader import catalog
    from grader.performance.model import summarise
    from grader.performance.model.h200 import entry as kata_entry

    kata = catalog.load(kata_id)
    lib = kata_entry(kata)
    out = []
    entries = lib["cases"] if cases is None else [c for c in lib["cases"] if c["case"] in cases]
    run = _memo(model_run, kata)
    left = OBSERVE_STEPS  # emulated work of model runs (dry runs are quick)
    mode = lib["mode"]
    halvings = 0
    for n, entry in enumerate(entries):
        bench = dict(entry["case"])
        extra = entry.get("bench_scalars", {})
        index = lib["cases"].index(entry)
        seed_b = bench_seeds[index] if bench_seeds else int(seed) + BENCH_SEED_OFFSET + index
        heaviest = heavy.bench_heaviest(kata, {**bench, **extra}, seed_b)
        try:
            dry, dry_buffers = dry_launches(kata, ptx, filename, launch_fn, launch_file, bench, extra)
        except Exception as exc:  # a plan that reads results back to steer itself: no dry run
            dry, dry_buffers, dry_error = [], [], f"{type(exc).__name__}: {exc}"
        else:
            dry_error = ""
        if lib.get("default") and mode == "full":
            # an earlier case fell back (below): this one too, not the whole plan at the bench shape
            entry = {**entry, "model_case": _largest_public(kata)}
        try:
            params_list = _model_cases(kata, lib, entry)
        except ValueError:
            params_list = [_largest_public(kata)]
        for _ in range(halvings):  # an earlier case had to run smaller: this one starts there
            smaller = [halve_model(q, _halvable(kata, lib, q, model=True)) for q in params_list]
            if any(q is None for q in smaller):
                break
            params_list = smaller
        first = params_list[-1]
        share = max(1, left // max(1, len(entries) - n))
        runs, stopped, over, used, params_list = _observe_case(run, kata, lib, ptx, filename, launch_fn,
                                                               launch_file, params_list, mode, seed, share)
        if runs is None:  # scalars from the inputs only (a kata without calibration data): whole plan
            mode = "full"
            params_list = [_largest_public(kata)]
            runs, stopped, over, used, params_list = _observe_case(run, kata, lib, ptx, filename, launch_fn,
                                                                   launch_file, params_list, mode, seed, share)
        left -= used
        halvings += _halvings_between(first, params_list[-1], _halvable(kata, lib, first, model=True))
        entry = {**entry, "model_case": params_list[0],
                 "model_case2": params_list[1] if len(params_list) > 1 else None}
        out.append(summarise.observation(kata, entry, {**lib, "mode": mode}, dry, dry_error, runs, stopped, ptx,
                                         filename, registers, over, heaviest, dry_buffers))
    return out


def _observe_case(run, kata, lib, ptx, filename, launch_fn, launch_file, params_list, mode, seed, budget):
    """(runs, stopped, out of budget, work used, the model shapes run). Each run may spend what
    is left of the case's budget; while one does not fit, the pair below it is run instead (the
    shape that did not fit, halved, and that halved again; a smaller shape that fitted is reused,
    not run again). Past the budget, and half of it again for the pair below, the estimate is
    a lower bound."""
    used = 0
    names = _halvable(kata, lib, params_list[-1], model=True)
    sample = lib.get("sample_threads", SAMPLE_THREADS)
    for attempt in range(MAX_HALVINGS + 1):
        runs, stopped, over = [], False, False
        for params in params_list:
            allowance = int(1.5 * budget) - used
            if not runs and attempt == 0 and len(params_list) == 1:
                # a lone shape that may not fit leaves half for the pair below it (a cut run's
                # work is lost, and the pair then costs ~3/4 of a run at the upper shape)
                allowance = min(allowance, int(0.75 * budget))
            steps = max(1000, min(RUN_STEPS, allowance))
            try:
                launches, cost, cut, out, issued, extra = run(kata, ptx, filename, launch_fn, launch_file,
                                                              dict(params), mode, seed,
                                                              sample, steps)
            except ValueError:
                if not lib.get("default") or mode == "full":
                    raise
                return None, False, False, used, params_list
            used += issued
            runs.append((launches, cost, extra))
            stopped, over = stopped or cut, over or out
            if out:
                break
            after = params_list[len(runs)] if len(runs) < len(params_list) else None
            if after is not None and not run.known(after, mode, seed, sample) \
                    and 2 * issued > int(1.5 * budget) - used:
                # the larger shape would not fit (a thread's loop at least doubles with it): the
                # pair below instead, this shape reused as its larger one
                over = True
                runs.append(None)
                break
        if not over:
            return runs, stopped, False, used, params_list
        top = params_list[len(runs) - 1]  # the first shape that did not fit (or would not)
        runs = [r for r in runs if r is not None]
        # one halving after a shape that would not fit; after a run that did not, 1, 2, 4, ...
        # (a thread walking the whole input is far from fitting: steps of one waste the budget)
        upper = top
        for _ in range(1 if not out else 2 << attempt):
            upper = halve_model(upper, names) or upper
        upper = None if upper == top else upper
        lower = halve_model(upper, names) if upper is not None else None
        if upper is None or used >= 1.5 * budget:
            return runs, True, True, used, params_list[:len(runs)]
        params_list = [lower, upper] if lower is not None else [upper]
    return runs, True, True, used, params_list[:len(runs)]


def _memo(fn, kata):
    """model_run, once per distinct run (shape, mode, sample): a second bench case with the same
    model shape reuses the launches; a run cut by its budget is run again with a larger one."""
    import copy
    import json

    seen: dict = {}

    def run(kata_, ptx, filename, launch_fn, launch_file, params, mode, seed, sample_threads, steps):
        key = json.dumps([params, mode, seed, sample_threads], sort_keys=True, default=str)
        hit = seen.get(key)
        if hit is not None and (not hit[1][3] or hit[0] >= steps):
            launches, cost, cut, out, _, extra = hit[1]
            return copy.deepcopy(launches), cost, cut, out, 0, copy.deepcopy(extra)
        result = fn(kata_, ptx, filename, launch_fn, launch_file, params, mode, seed, sample_threads, steps)
        seen[key] = (steps, (copy.deepcopy(result[0]),) + tuple(result[1:5]) + (copy.deepcopy(result[5]),))
        return result

    def known(params, mode, seed, sample_threads) -> bool:
        hit = seen.get(json.dumps([params, mode, seed, sample_threads], sort_keys=True, default=str))
        return hit is not None and not hit[1][3]

    run.known = known
    return run
