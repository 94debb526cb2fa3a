"""lab/validation: the corpus's shape, the H200 job's list, and validate.py's goal arithmetic (no grading,
no GPU: the grades and the H200 times are what the scripts record, not what tests assert)."""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "lab" / "validation"


def _load(name: str):
    import sys

    sys.path.insert(0, str(LAB))
    spec = importlib.util.spec_from_file_location(f"lab_{name}", LAB / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: katas merged after the corpus was built and measured on the H200 (the Hopper katas): no corpus
#: kernels yet. A kata leaves this set when its kernels land; none may join it silently.
NOT_YET_IN_CORPUS = {"flash-prefill", "fp8-gemm", "fused-moe", "gelu-linear"}


def test_the_corpus_covers_every_kata_with_at_least_80_described_kernels():
    corpus = _load("corpus")
    found = corpus.corpus()
    katas = {p.name for p in (ROOT / "katas").iterdir() if (p / "kata.toml").is_file()}
    assert len(found) >= 80
    covered = {k for k, _, _ in found}
    assert covered == katas - NOT_YET_IN_CORPUS
    assert not covered & NOT_YET_IN_CORPUS, "a kata now in the corpus: take it out of NOT_YET_IN_CORPUS"
    for kata, design, folder in found:
        assert (folder / "launch.py").is_file(), f"{kata}/{design}"
        assert corpus.design_note(folder), f"{kata}/{design}: kernel.cu's first comment says the design"


def test_the_h200_job_runs_each_katas_solution_first():
    measure = _load("measure_h200")
    todo = measure.entries(("reduce", "bfs"))
    assert next(d for k, d, _ in todo if k == "reduce") == "solution"
    assert [k for k, _, _ in todo] == sorted((k for k, _, _ in todo), key=measure.KATA_ORDER.index)


def test_the_sampling_policy_caps_slow_kernels_by_time():
    from harness.measure import timing

    measure = _load("measure_h200")
    assert measure.policy_for(0.001, timing).max_seconds <= 1.0
    assert measure.policy_for(1.0, timing).max_samples == 3
    assert measure.policy_for(5.0, timing).max_samples == 1


def _row(design, measured, estimate, bound="dram", how="complete"):
    return {"kata": "reduce", "design": design, "case": {"n": 1}, "measured_s": measured, "estimate_s": estimate,
            "ratio": estimate / measured if estimate else None, "bound": bound, "how": how,
            "below_roofline": False, "unfinished": "lower bound" in how, "scored": True}


def test_goals_count_ratios_ranks_bounds_and_scored_unfinished_runs():
    validate = _load("validate")
    rows = [_row("a", 1.0, 1.2), _row("b", 2.0, 2.5), _row("c", 4.0, 0.5, "latency", "a lower bound"),
            _row("d", 8.0, None)]
    g = validate.goals(rows, failed=[])
    assert g["cases"] == 4 and g["no_estimate"] == 1
    assert g["within_1_5"] == 0.5 and not g["all_within_3"]
    assert g["scored_unfinished"] == 1
    assert math.isclose(g["worst_too_fast"], 0.125)
    bounds = {b["bound"]: b for b in g["per_bound"]}
    assert bounds["dram"]["within_1_5"] == 1.0 and bounds["latency"]["too_fast"] == 1
    assert g["spearman"][0]["kernels"] == 3
    # a (1.0, 1.2) b (2.0, 2.5) c (4.0, 0.5): a<b right; a<c and b<c estimated the other way round
    assert g["pairs"]["pairs"] == 3 and g["pairs"]["right"] == 1
