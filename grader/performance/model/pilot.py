"""Where a lone model shape will not fit its budget of emulated work, the pair of shapes to run
instead, found by two small pilot runs rather than by a cut run at the large shape (whose work
is lost: a learner's one-thread-per-row kernel at the bench shape can spend all of the case's
budget and still leave no estimate).

The first pilot runs the shape halved PILOT_HALVINGS times (more where that does not fit), the
next one size up; the work's growth between them (1x for a fixed sample of blocks, about 2x per
halving for a grid, 4x for threads each looping over the halved dimension) predicts the planned
shapes' work: where they fit they run as planned, else the pilots climb while the next size is
predicted to fit, and the two largest that ran are the pair. Where not even a pilot fits with the
planned sample, the same is tried with one block per launch (a block of threads each walking the
whole input is enough to count it). The pilots' runs are remembered (observe._memo), so a pair
that lands on them costs nothing more.
"""
from __future__ import annotations

from grader.performance.model.shapes import halve_model

PILOT_HALVINGS = 4
MAX_CHAIN = 14


def plan(run_at, params: dict, names, budget: int, sample: int, one_block: bool = False, paired: bool = False
         ) -> tuple[list[dict] | None, int, int]:
    """([lower, upper] or [params] to run instead of params, or None to run params as planned; the
    threads each launch's sample emulates; work the pilots spent). run_at(shape, steps, sample
    threads) -> (out of budget, work). one_block: a sample run may emulate one block per launch
    instead (at the bench shape, a block of threads each looping over the whole input is enough).
    paired: params is the larger of two planned shapes (the smaller one half of it)."""
    chain = [dict(params)]  # the planned shape, halved again and again
    while len(chain) <= MAX_CHAIN:
        smaller = halve_model(chain[-1], names)
        if smaller is None:
            break
        chain.append(smaller)
    if len(chain) <= PILOT_HALVINGS:  # the plan is near the smallest shape already: run it
        return None, sample, 0
    used, ran, threads = 0, [], sample
    # the first pilot PILOT_HALVINGS below the plan, then two halvings smaller while it does not
    # fit; at each, the planned sample, then one block per launch. A cut run's work is lost, so
    # each try may spend a 32nd of what is left, the smallest shape's a third
    i = PILOT_HALVINGS
    while not ran:
        last = i == len(chain) - 1
        for threads in ([sample, 1] if one_block and sample > 1 else [sample]):
            share = 1 / 3 if last and threads == 1 or last and not one_block else 1 / 32
            out, work = run_at(chain[i], max(1000, int((1.5 * budget - used) * share)), threads)
            used += work
            if not out:
                ran.append((i, max(1, work)))
                break
        if last:
            break
        i = min(i + 2, len(chain) - 1)
    if not ran:
        return None, sample, used  # no pilot fitted: the halving loop takes over
    while ran[-1][0] > 0:  # climb: one shape larger, or straight to the plan where it fits
        top, work = ran[-1]
        growth = min(8.0, max(1.0, work / ran[-2][1])) if len(ran) > 1 else 4.0
        planned = work * growth ** top * ((1.0 + 1.0 / growth) if paired else 1.0)
        if len(ran) > 1 and planned <= (1.5 if paired else 0.75) * budget - used:
            if threads == sample:
                return None, sample, used  # the planned shapes fit: run them
            return ([chain[1], chain[0]] if paired else [chain[0]]), threads, used
        if work * growth > 1.5 * budget - used:
            break
        out, more = run_at(chain[top - 1], max(1000, int(1.5 * budget - used)), threads)
        used += more
        if out:
            break
        ran.append((top - 1, max(1, more)))
    top = ran[-1][0]
    if top == 0:
        return (None if threads == sample else [chain[1], chain[0]] if paired else [chain[0]]), threads, used
    return ([chain[top + 1], chain[top]] if top + 1 < len(chain) else [chain[top]]), threads, used
