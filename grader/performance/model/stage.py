"""The CPU grade's performance stage: the H200 model's estimate where a GPU grade has a timing.

The observation runs in the learner's worker (the launch plan is the learner's code); the
estimate is arithmetic here. A plan or kernel the model cannot observe leaves the grade as it
was, with a note saying why there is no estimate.
"""
from __future__ import annotations

OBSERVE_TIMEOUT_S = 120.0


def estimate_stage(kata, worker, compiled, filename: str, seed: int):
    """(Estimate | None, bench-shape occupancy rows, note) for a passing CPU grade."""
    from grader.performance.model import estimate
    registers = {k: r.registers for k, r in compiled.resources.items()}
    try:
        obs, problem = worker.call("grader.performance.model.observe:observe_in_worker", OBSERVE_TIMEOUT_S,
                                   kata_id=kata.id, ptx=compiled.ptx, filename=filename, seed=seed,
                                   registers=registers)
    except Exception as exc:  # the worker died or timed out: the grade stands without an estimate
        return None, (), f"no performance estimate: the model run failed ({type(exc).__name__}: {exc})"
    if problem is not None or not obs:
        why = problem.message if problem is not None else "nothing observed"
        return None, (), f"no performance estimate: the model run at the bench shape failed ({why})"
    result = estimate(kata, obs, compiled.resources)
    return result, bench_occupancy(compiled, obs), ""


def bench_occupancy(compiled, observations) -> tuple:
    from grader.performance.occupancy import occupancy_table
    from harness.hardware import H200

    rows = []
    for obs in observations:
        for name, grid, block, shared in obs.dry:
            rows.append((name, block[0] * block[1] * block[2], shared))
    return tuple(occupancy_table(compiled.resources, rows, H200)) if rows else ()
