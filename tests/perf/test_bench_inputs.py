"""The on-disk cache of bench-size inputs and reference outputs (grader/bench_inputs.py)."""
import numpy as np

from grader import bench_inputs, catalog


def test_second_call_loads_the_same_data(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("reduce")
    calls = []
    real = kata.reference.generate
    monkeypatch.setattr(kata.reference, "generate", lambda rng, **p: calls.append(p) or real(rng, **p))
    a_in, a_out, _ = bench_inputs.bench_data(kata, {"n": 5000}, seed=7)
    b_in, b_out, _ = bench_inputs.bench_data(kata, {"n": 5000}, seed=7)
    assert len(calls) == 1  # generated once, then memory-mapped
    assert np.array_equal(a_in["x"], b_in["x"]) and np.array_equal(a_out["out"], b_out["out"])
    c_in, _, _ = bench_inputs.bench_data(kata, {"n": 5000}, seed=8)
    assert len(calls) == 2 and not np.array_equal(a_in["x"], c_in["x"])  # a new seed is fresh data


def test_damaged_entry_is_remade_and_trim_keeps_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("reduce")
    bench_inputs.bench_data(kata, {"n": 3000}, seed=1)
    root = bench_inputs.cache_root()
    (entry,) = [d for d in root.iterdir() if not d.name.startswith(".")]
    (entry / "in_x.npy").write_bytes(b"garbage")
    inputs, expected, _ = bench_inputs.bench_data(kata, {"n": 3000}, seed=1)
    assert inputs["x"].shape == (3000,) and expected["out"].shape == (1,)
    bench_inputs.bench_data(kata, {"n": 3001}, seed=1)
    bench_inputs.trim(root, cap=1)
    assert [d for d in root.iterdir() if not d.name.startswith(".")] == []
