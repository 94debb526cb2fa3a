"""The on-disk cache of bench-size inputs, reference outputs and error scales (grader/performance/bench_inputs.py)."""
import json
import os
import time

import numpy as np

from grader.performance import bench_inputs
from grader import catalog
from grader.grading.check import compare, error_scales
from grader.grading.cases import reference_params


def test_second_call_loads_the_same_data(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("reduce")
    calls = []
    real = kata.reference.generate
    monkeypatch.setattr(kata.reference, "generate", lambda rng, **p: calls.append(p) or real(rng, **p))
    a_in, a_out, _, _ = bench_inputs.bench_data(kata, {"n": 5000}, seed=7)
    b_in, b_out, _, _ = bench_inputs.bench_data(kata, {"n": 5000}, seed=7)
    assert len(calls) == 1  # generated once, then memory-mapped
    assert np.array_equal(a_in["x"], b_in["x"]) and np.array_equal(a_out["out"], b_out["out"])
    c_in, _, _, _ = bench_inputs.bench_data(kata, {"n": 5000}, seed=8)
    assert len(calls) == 2 and not np.array_equal(a_in["x"], c_in["x"])  # a new seed is fresh data


def test_damaged_entry_is_remade_and_trim_keeps_the_cap(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("reduce")
    bench_inputs.bench_data(kata, {"n": 3000}, seed=1)
    root = bench_inputs.cache_root()
    (entry,) = [d for d in root.iterdir() if not d.name.startswith(".")]
    (entry / "in_x.npy").write_bytes(b"garbage")
    inputs, expected, _, _ = bench_inputs.bench_data(kata, {"n": 3000}, seed=1)
    assert inputs["x"].shape == (3000,) and expected["out"].shape == (1,)
    bench_inputs.bench_data(kata, {"n": 3001}, seed=1)
    bench_inputs.trim(root, cap=1)
    assert [d for d in root.iterdir() if not d.name.startswith(".")] == []


def _entries(root):
    return [d for d in root.iterdir() if not d.name.startswith(".")]


def test_error_scales_are_cached_beside_the_expected_outputs(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("spmv")
    case = {"m": 300, "k": 200, "avg": 6}
    calls = []
    real = kata.reference.error_scale
    monkeypatch.setattr(kata.reference, "error_scale", lambda inputs, **p: calls.append(p) or real(inputs, **p))
    first = bench_inputs.bench_data(kata, case, seed=3)
    second = bench_inputs.bench_data(kata, case, seed=3)
    assert len(calls) == 1  # computed once, with the expected outputs; then loaded
    (entry,) = _entries(bench_inputs.cache_root())
    assert (entry / "scale_y.npy").exists() and json.loads((entry / "meta.json").read_text())["scales"] == ["y"]
    params = reference_params(kata, case, second.inputs)
    want = real(second.inputs, **params)["y"]
    assert np.array_equal(first.scales["y"], want) and np.array_equal(second.scales["y"], want)
    assert isinstance(second.scales["y"], np.memmap)
    # the perf stage's check with the cached scales is the correctness stage's check without them
    y = np.asarray(second.expected["y"], np.float32).copy()
    y[7] += 1e-3 * abs(y[7]) + 1e-3
    with_cached = compare(kata, second.inputs, {"y": y}, second.expected, params, scales=second.scales)
    recomputed = compare(kata, second.inputs, {"y": y}, second.expected, params)
    assert with_cached == recomputed and not with_cached.ok and len(calls) == 2


def test_katas_without_a_bound_tolerance_cache_no_scales(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("scan")
    data = bench_inputs.bench_data(kata, {"n": 1000}, seed=0)
    assert data.scales == {} and error_scales(kata, data.inputs, {"n": 1000}) == {}


def test_scales_passed_to_compare_replace_error_scale(monkeypatch):
    kata = catalog.load("reduce")
    x = np.ones(1024, np.float32)
    expected = kata.reference.reference({"x": x}, n=1024)
    monkeypatch.setattr(kata.reference, "error_scale", lambda *a, **k: 1 / 0)  # must not be called
    out = {"out": np.array([1024.5], np.float32)}
    assert not compare(kata, {"x": x}, out, expected, {"n": 1024}, scales={"out": np.array([1.0])}).ok
    assert compare(kata, {"x": x}, out, expected, {"n": 1024}, scales={"out": np.array([1e7])}).ok


def test_an_entry_of_the_old_format_is_never_read(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = catalog.load("reduce")
    bench_inputs.bench_data(kata, {"n": 3000}, seed=1)
    root = bench_inputs.cache_root()
    (entry,) = _entries(root)
    meta = json.loads((entry / "meta.json").read_text())
    del meta["format"], meta["scales"]  # what the format-1 cache wrote
    (entry / "meta.json").write_text(json.dumps(meta))
    data = bench_inputs.bench_data(kata, {"n": 3000}, seed=1)  # same key: the damaged entry is remade
    assert "out" in data.scales and json.loads((entry / "meta.json").read_text())["format"] == bench_inputs.CACHE_FORMAT
    monkeypatch.setattr(bench_inputs, "CACHE_FORMAT", 1)  # a new format: a new key, a new entry
    bench_inputs.bench_data(kata, {"n": 3000}, seed=1)
    assert len(_entries(root)) == 2


def test_trim_removes_half_written_entries_only_when_stale(tmp_path):
    fresh, stale = tmp_path / ".abc-fresh", tmp_path / ".abc-stale"
    for d in (fresh, stale):
        d.mkdir()
        (d / "in_x.npy").write_bytes(b"x" * 10)
    old = time.time() - 2 * bench_inputs.STALE_TMP_S
    os.utime(stale, (old, old))
    bench_inputs.trim(tmp_path)
    assert fresh.exists() and not stale.exists()
