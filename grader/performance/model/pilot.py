"""Where a lone model shape will not fit its budget of emulated work, the pair of shapes to run
instead, found by two small pilot runs rather than by a cut run at the large shape (whose work
is lost: a learner's one-thread-per-row kernel at the bench shape can spend all of the case's
budget and still leave no estimate).

The pilots run the shape halved PILOT_HALVINGS and one time fewer; the work's growth between
them (about 2x per halving for a grid, 4x for a grid of threads each looping over the halved
dimension) predicts the work of every larger shape. Where the shape will not fit, a sample of one
block per launch at that shape is tried first (a third pilot gives its share of the work: a block
of threads each walking the whole input is enough to count it); else the largest shape whose run
and its halved partner's fit the case's budget, with what the pilots spent, is the pair. The
pilots' own runs are remembered (observe._memo), so a pair that lands on them costs nothing more.
"""
from __future__ import annotations

from grader.performance.model.shapes import halve_model

PILOT_HALVINGS = 4


def plan(run_at, params: dict, names, budget: int, sample: int, one_block: bool = False, paired: bool = False
         ) -> tuple[list[dict] | None, int, int]:
    """([lower, upper] or [params] to run instead of params, or None to run params as planned; the
    threads each launch's sample emulates; work the pilots spent). run_at(shape, steps, sample
    threads) -> (out of budget, work). one_block: a sample run may emulate one block per launch
    instead (at the bench shape, a block of threads each looping over the whole input is enough).
    paired: params is the larger of two planned shapes (the smaller one half of it)."""
    chain = [dict(params)]
    for _ in range(PILOT_HALVINGS):
        smaller = halve_model(chain[-1], names)
        if smaller is None:
            break
        chain.append(smaller)
    if len(chain) < 3:  # too few halvings to pilot: run the shape itself
        return None, sample, 0
    used = 0
    for threads in ([sample, 1] if one_block and sample > 1 else [sample]):
        works = []
        for shape, share in ((chain[-1], 1 / 8 if threads > 1 else 1 / 3), (chain[-2], 1.0)):
            # the pilots' runs are the pair's where nothing larger fits, so they may use it all
            out, work = run_at(shape, max(1000, int((1.5 * budget - used) * share)), threads)
            used += work
            if out:  # even a pilot does not fit
                break
            works.append(max(1, work))
        if len(works) < 2:
            continue
        growth = min(8.0, max(1.0, works[1] / works[0]))  # per halving undone
        lone = works[1] * growth ** (len(chain) - 2)
        pair = lone * (1.0 + 1.0 / growth)
        if (pair if paired else lone) <= (1.5 if paired else 0.75) * budget - used:
            # the planned shapes fit (with one block per launch, if that is what it took)
            return (None if threads == sample else [chain[1], chain[0]] if paired else [chain[0]]), threads, used
        if threads == sample and one_block and sample > 1:
            continue  # one block per launch at these shapes may fit
        left = 1.5 * budget - used
        for k in range(1, len(chain) - 1):  # k halvings from the planned shape
            if lone / growth ** k * (1.0 + 1.0 / growth) <= left:
                return [chain[k + 1], chain[k]], threads, used
        return [chain[-1], chain[-2]], threads, used
    return None, sample, used  # no pilot fitted: the halving loop takes over
