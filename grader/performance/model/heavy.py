"""Heavy-tailed work: the item (a power-law row, a hub vertex, the longest sequence) that sets the
time of a kernel whose threads each walk one item, however idle the other SMs are.

A kata whose work per item is uneven says so in its reference.py:
- `work(inputs, **params)`: the work of each item of generated inputs (a row's non-zeros), in the
  order the items are laid out;
- `heaviest(rng, **params)`: the heaviest item's work that `generate(rng, **params)` would make,
  drawn without making the inputs (the bench shape's inputs are too large to make for the model).

The model run locates the heaviest item of its inputs, emulates the block(s) holding it (a probe:
blocks 0, 1, ... of a sample rarely hold it), and the estimate bounds the launch below by that
block's heaviest warp's dependent chain, its excess over an average warp grown by the ratio of the
bench's heaviest item to the model run's (the GPU's inputs, drawn with the bench seed, hold a longer
row than a smaller model shape does).
"""
from __future__ import annotations

import numpy as np


#: work is heavy-tailed when the heaviest item holds more than this many times the average
HEAVY_OVER_MEAN = 4.0


def heavy_item(kata, inputs: dict, params: dict) -> dict | None:
    """Where the heaviest item of generated inputs lies (a fraction of the items) and its work
    ("frac", "work"); None when the kata declares no per-item work or the work is even."""
    fn = getattr(kata.reference, "work", None)
    if fn is None:
        return None
    try:
        w = np.asarray(fn(inputs, **params), np.float64).reshape(-1)
    except (KeyError, TypeError, ValueError):  # inputs without the arrays the hook reads
        return None
    if w.size == 0 or w.max() <= HEAVY_OVER_MEAN * max(w.mean(), 1e-30):
        return None
    i = int(np.argmax(w))
    return {"frac": (i + 0.5) / w.size, "work": float(w[i])}


def bench_heaviest(kata, params: dict, seed: int) -> float | None:
    """The heaviest item's work in the inputs the GPU would time at params with this seed."""
    fn = getattr(kata.reference, "heaviest", None)
    if fn is None:
        return None
    try:
        value = fn(np.random.default_rng(seed), **params)
    except (KeyError, TypeError, ValueError):
        return None
    return float(value) if value is not None and value > 0 else None


def probe_blocks(frac: float, grid: tuple) -> np.ndarray:
    """Linear ids of the blocks that hold the item at this fraction of the items, under the two
    mappings learners write: items along the linear block order (a row per thread, warp or block
    over a 1-D grid, or rows on grid.y), and items along grid.x only (grid = (items, heads))."""
    g = [int(v) for v in (tuple(grid) + (1, 1, 1))[:3]]
    total = g[0] * g[1] * g[2]
    linear = min(total - 1, int(frac * total))
    if total == g[0]:
        return np.array([linear], np.int64)
    return np.unique(np.array([linear, min(g[0] - 1, int(frac * g[0]))], np.int64))


#: emulated work a probe may spend (~0.4 s of one core), beside its model run's budget: a probe
#: that took from the budget later bench cases need would leave them unfinished
PROBE_WORK = 40_000_000


def run_probe(backend, profile, blocks, run_plan, budget: int = PROBE_WORK) -> tuple[list, bool]:
    """The plan run again on the same buffers with only blocks(grid) of each launch emulated (the
    blocks holding the heaviest item: probe_blocks): its Profile launches (none where the plan
    launches more than before or fails) and whether the probe was cut (its budget, a stop). It
    may spend `budget` of emulated work beyond the run's (counted apart from the run's); the
    backend's stop flags stay those of the model run: a heavy probe cut by its budget is a
    shorter chain, still a bound below."""
    ran = len(profile.launches)
    saved = backend.sample, backend.stopped, backend.out_of_budget, backend.launch, backend.run_budget
    backend.stopped = backend.out_of_budget = False
    if backend.run_budget is not None:
        backend.run_budget = backend.work + budget
    count = [0]

    def launch(name, grid, block, shared, args):
        count[0] += 1
        if count[0] > ran:  # a plan steering itself by what the sample computed: stop here
            raise _ProbeOver
        saved[3](name, grid, block, shared, args)

    backend.sample = lambda name, grid, block: blocks(grid)
    backend.launch = launch
    cut = False
    try:
        run_plan()
    except Exception:  # a probe is an extra: a plan that fails on the probe's partial outputs has none
        cut = True
    finally:
        cut = cut or bool(backend.stopped or backend.out_of_budget)
        backend.sample, backend.stopped, backend.out_of_budget, backend.launch, backend.run_budget = saved
    probes = profile.launches[ran:]
    del profile.launches[ran:]
    return probes, cut


class _ProbeOver(Exception):
    pass
