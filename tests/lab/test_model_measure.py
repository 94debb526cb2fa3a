"""lab/model/measure_h200.py's logic on the CPU emulator: the calibration set it finds, the
kernels it runs on shared inputs, the comparison with the solution, the JSON it writes. The
GPU's clock is replaced by a fake (no timing is asserted)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("measure_h200", ROOT / "lab" / "model" / "measure_h200.py")
measure = importlib.util.module_from_spec(spec)
spec.loader.exec_module(measure)


def test_the_calibration_set_has_forty_kernels_and_both_ladders():
    every = measure.calibration_set(ROOT, ("reduce", "matmul", "softmax", "scan", "histogram", "spmv", "topk",
                                           "attention", "bfs"))
    labels = [label for _, _, label in every]
    assert len(every) >= 40 and len(set(labels)) == len(labels)
    assert sum("lab/model/reduce/r" in lb for lb in labels) == 7
    assert sum("lab/model/matmul/s" in lb and "slow" not in lb and "s3b" not in lb for lb in labels) == 7
    assert all((folder / "kernel.cu").is_file() and (folder / "launch.py").is_file() for _, folder, _ in every)


def test_agree_is_loose_for_float_sums_and_exact_for_integers():
    assert measure.agree(np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0 + 1e-5]))
    assert not measure.agree(np.array([1.0, 3.0]), np.array([1.0, 2.0]))
    assert not measure.agree(np.array([1, 2], np.int32), np.array([1, 3], np.int32))


def test_a_run_on_the_emulator_times_every_kernel_and_flags_none_that_agree(tmp_path):
    from harness.backends.cpu import CpuBackend

    calls = []
    doc = measure.run(tmp_path, ("reduce",), only=("solution", "shared_tree", "r7_many"), backend=CpuBackend(),
                      time_fn=lambda fn, before: calls.append(fn) or 1e-3, cases_of=lambda kata: [{"n": 4099}])
    rows = {r["label"]: r for r in doc["results"]}
    assert set(rows) == {"reduce/solution", "lab/reduce_variants/shared_tree", "lab/model/reduce/r7_many_elements_per_thread"}
    assert all(r["agrees_with_solution"] and r["median_s"] == 1e-3 and "error" not in r for r in rows.values())
    assert len(calls) == 3
    assert json.loads((tmp_path / "measurements.json").read_text())["results"] == doc["results"]


def test_a_kernel_that_fails_is_recorded_and_the_run_goes_on(tmp_path):
    from harness.backends.cpu import CpuBackend

    def time_fn(fn, before):
        raise RuntimeError("device lost")

    doc = measure.run(tmp_path, ("reduce",), only=("solution",), backend=CpuBackend(), time_fn=time_fn,
                      cases_of=lambda kata: [{"n": 100}, {"n": 200}])
    assert [r["error"] for r in doc["results"]] == ["RuntimeError: device lost"] * 2


def _compare():
    spec = importlib.util.spec_from_file_location("model_compare", ROOT / "lab" / "model" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_goals_count_ratios_ranks_and_misordered_ladder_pairs():
    compare = _compare()
    rows = [{"kata": "reduce", "label": f"lab/model/reduce/r{i}", "case": {"n": 1}, "median_s": m, "predicted_s": p}
            for i, (m, p) in enumerate([(1.0, 1.2), (2.0, 1.8), (3.0, 5.0), (3.1, 4.0)], start=1)]
    g = compare.goals(rows)
    assert g["within_1_5"] == 0.75 and g["within_2"] == 1.0 and abs(g["worst"] - 5 / 3) < 1e-9
    # r3 and r4 differ by < 25 % measured: not a pair; every other pair is ordered right
    assert g["ladders"]["reduction"] == {"pairs": 5, "wrong": 0, "misordered": []}
    rows[1]["predicted_s"] = 0.5  # r2 now predicted faster than r1
    g = compare.goals(rows)
    assert g["ladders"]["reduction"]["wrong"] == 1 and g["ladders"]["reduction"]["misordered"] == ["r1 vs r2"]
    assert compare.spearman([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0 and compare.spearman([1, 2, 3], [3, 2, 1]) == -1.0
