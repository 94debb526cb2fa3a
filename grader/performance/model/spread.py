"""Work that changes along the grid: causal attention's later query tiles, a triangular loop, a block
per row of a lower-triangular matrix.

A sample emulates blocks 0, 1, ... of each launch (observe.py): the right blocks for a kernel whose
blocks all do the same work, and for one whose blocks wait on earlier ones (a decoupled look-back);
the wrong ones where the work grows or shrinks along the grid. Causal attention's first query tiles
attend to a few keys, its last to all of them: its first blocks said 33x too fast on the H200
(lab/results/2026-12-02-model-validation-tails). So after a sample, the plan runs again with one
block at a quarter and one at three quarters of the grid's diagonal (every axis at that fraction, so
work along grid.x, grid.y or both is seen), and a launch's per-block counts are scaled by their mean
over the sample's work per block: the midpoint rule over the grid, exact for work that grows
linearly along it. (A trapezoid with the sample as its first point was not: the sample is the mean
of its own stretch, which at a small model shape is the whole of grid.x; its error, raised to the
power the two model shapes are extrapolated by, called the causal solution 3x too slow.) A block at
the first probe that works as the sample's do needs no second probe. A probe that does not finish
within its own budget (a block that waits on blocks the probe did not run spins until then), fails,
or launches other kernels changes nothing.

A grid's time is not always its mean block's: a kernel bound by one warp's dependent chain lasts as
long as its heaviest warp (estimate.py's chain). So the average warp scales with the counts and the
heaviest warp is the heaviest seen, in the sample or the probes: where the first blocks are the
heavy ones (a backward pass over a causal mask) the chain stays theirs.
"""
from __future__ import annotations

import numpy as np

from grader.performance.model import heavy
from harness.emulator.tally import _FIELDS

#: the probes' places along the grid's diagonal (the midpoint rule's)
POINTS = (0.25, 0.75)
#: emulated work each probe may spend beside the run's budget: 16 times the sample's (the last block
#: of a causal grid does 15 times the first eight blocks' average at S = 256), at least ~0.2 s of one
#: core, at most ~1 s
PROBE_WORK, PROBE_TIMES, PROBE_MAX = 20_000_000, 16, 100_000_000
#: a first probe within this of the sample's work per block: the work is even, no second probe
EVEN = 0.1
#: a ratio past these is a probe that measured something else (a block that only returns early)
LOWEST, HIGHEST = 1 / 64, 4096.0


def diagonal_block(frac: float, grid) -> np.ndarray:
    """The linear id of the block at this fraction of every axis of the grid."""
    g = [max(1, int(v)) for v in (tuple(grid) + (1, 1, 1))[:3]]
    x, y, z = (min(n - 1, int(round(frac * (n - 1)))) for n in g)
    return np.array([x + g[0] * (y + g[1] * z)], np.int64)


def block_work(L: dict) -> float:
    """Warp instructions per emulated block of a Profile launch."""
    i = _FIELDS.index("instructions")
    ran = max(1, int(np.asarray(L["blocks_run"]).size))
    return float(sum(float(row[i]) for row in L["rows"].values())) / ran


def _probed(L: dict, j: int, probes: list) -> list:
    """Launch j's counterpart in each probe's launches (None where the probe was cut or launched
    another kernel there)."""
    return [p[j] if p is not None and j < len(p) and p[j]["kernel"] == L["kernel"] else None for p in probes]


def ratios(launches: list, probes: list) -> list[float]:
    """Per launch, the grid's mean work per block over the sample's (1.0 where a probe is missing,
    the sample already covers the grid, or the sample did no work)."""
    out = []
    for j, L in enumerate(launches):
        m0 = block_work(L)
        found = _probed(L, j, probes)
        if np.asarray(L["blocks_run"]).size >= int(np.prod(L["grid"])) or m0 <= 0 or any(
                P is None or not np.asarray(P["blocks_run"]).size for P in found):
            out.append(1.0)
            continue
        mean = sum(block_work(P) for P in found) / len(found)
        out.append(float(min(HIGHEST, max(LOWEST, mean / m0))))
    return out


def heaviest_warps(launches: list, probes: list) -> list[float]:
    """Per launch, the most instructions one warp of the probes' blocks issued (0 where none ran)."""
    return [max((float(np.max(P["warp_issues"])) for P in _probed(L, j, probes)
                 if P is not None and np.asarray(P.get("warp_issues", ())).size), default=0.0)
            for j, L in enumerate(launches)]


def run(backend, profile, run_plan, sample_work: int) -> list[tuple[float, float]]:
    """The probes after a sample run on the same buffers (heavy.run_probe): per launch, the grid's
    mean work per block over the sample's (ratios), and the heaviest warp the probes saw (its
    instructions: the chain of a grid whose later blocks work longest; 0 where none ran).
    sample_work: the emulated work the sample run spent."""
    launches = list(profile.launches)
    even = [(1.0, 0.0)] * len(launches)
    if not launches or all(np.asarray(L["blocks_run"]).size >= int(np.prod(L["grid"])) for L in launches):
        return even
    probes = []
    for frac in POINTS:
        got, cut = heavy.run_probe(backend, profile, lambda grid, f=frac: diagonal_block(f, grid), run_plan,
                                   budget=min(PROBE_MAX, max(PROBE_WORK, PROBE_TIMES * sample_work)))
        probes.append(None if cut or len(got) != len(launches) else got)
        if len(probes) == 1 and probes[0] is not None and all(abs(r - 1.0) <= EVEN for r in ratios(launches, probes)):
            return even  # the first probe's block works as the sample's do
    return list(zip(ratios(launches, probes), heaviest_warps(launches, probes)))
