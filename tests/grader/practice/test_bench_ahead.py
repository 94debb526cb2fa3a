"""`kata start` on a GPU machine makes the kata's bench inputs ahead, detached
(grader/practice/bench_ahead.py), coordinated with the grade's own prefetch by the cache's
per-case lock: nothing made twice, nothing read half-written, nothing left running, never an error."""
import dataclasses
import subprocess
import sys
import threading
import time

import numpy as np

from grader import catalog
from grader.performance import bench_pool
from grader.practice import bench_ahead
from grader.performance.prefetching import bench_seeds, rotation_seeds

CASES = ({"n": 5000}, {"n": 777}, {"n": 3})


def small_reduce():
    real = catalog.load("reduce")
    return dataclasses.replace(real, bench=dataclasses.replace(real.bench, cases=CASES))


def test_a_grade_right_after_start_waits_for_the_sets_being_made_ahead_and_makes_none_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setenv(bench_ahead.AHEAD_ENV, "1")
    monkeypatch.setenv(bench_pool.JOBS_ENV, "1")  # both sides make their sets here, in threads
    kata = small_reduce()
    monkeypatch.setattr(catalog, "load", lambda kid: kata)
    made, real = [], kata.reference.generate

    def slow_generate(rng, **case):
        made.append(case["n"])
        time.sleep(0.2)  # the grade arrives while sets are being made
        return real(rng, **case)

    monkeypatch.setattr(kata.reference, "generate", slow_generate)
    timed = []
    ahead = threading.Thread(target=bench_ahead.make_ahead, args=("reduce", 0),
                             kwargs={"warm": lambda kata: None, "libraries": lambda kata, seed: timed.append(seed)})
    ahead.start()
    time.sleep(0.1)
    seeds = bench_seeds(len(CASES), 0)
    refuse = lambda cmd, **kw: (_ for _ in ()).throw(AssertionError("no subprocess"))  # noqa: E731
    data = bench_pool.make_all(kata, seeds, rotation=rotation_seeds(seeds), launch=refuse)  # the grade's prefetch
    ahead.join()
    assert sorted(made) == sorted([5000, 777, 3] * 2)  # each set made once, by one side or the other
    assert timed == [0]  # then the library's time at each case, for the same seed
    assert set(data) == {0, 1, 2, ("rotation", 0), ("rotation", 1), ("rotation", 2)}
    for key, d in data.items():
        i, seed = (key[1], rotation_seeds(seeds)[key[1]]) if isinstance(key, tuple) else (key, seeds[key])
        assert isinstance(d.inputs["x"], np.memmap) and d.inputs["x"].size == CASES[i]["n"]  # whole, from the cache
        assert np.array_equal(d.inputs["x"], real(np.random.default_rng(seed), **CASES[i])["x"])  # determinism


def test_start_ahead_launches_one_detached_silent_process_and_only_where_wanted(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    launched = []
    fake = lambda cmd, **kw: launched.append((cmd, kw)) or "proc"  # noqa: E731
    monkeypatch.setenv(bench_ahead.AHEAD_ENV, "0")
    assert bench_ahead.start_ahead("reduce", launch=fake) is None and launched == []
    monkeypatch.delenv(bench_ahead.AHEAD_ENV)
    monkeypatch.setattr(bench_ahead.importlib.util, "find_spec", lambda name: None)  # no CuPy: a CPU machine
    assert bench_ahead.start_ahead("reduce", launch=fake) is None and launched == []
    monkeypatch.setenv(bench_ahead.AHEAD_ENV, "1")
    assert bench_ahead.start_ahead("reduce", launch=fake) == "proc"
    (cmd, kw), = launched
    assert cmd[1:] == ["-m", "grader.practice.bench_ahead", "reduce", "0"]
    assert kw["start_new_session"] and kw["stdout"] == kw["stderr"] == subprocess.DEVNULL
    assert bench_pool.JOBS_ENV not in kw["env"]  # it fans out; its own subprocesses do not
    boom = lambda cmd, **kw: (_ for _ in ()).throw(OSError("fork refused"))  # noqa: E731
    assert bench_ahead.start_ahead("reduce", launch=boom) is None  # silent


def test_the_detached_process_ends_by_itself_even_when_it_fails(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setenv(bench_ahead.AHEAD_ENV, "1")
    proc = bench_ahead.start_ahead("no-such-kata")
    assert proc is not None
    assert proc.wait(60) == 1  # failed silently and exited: nothing left running
    quiet = subprocess.run([sys.executable, "-m", "grader.practice.bench_ahead", "no-such-kata", "0"],
                           capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 1 and quiet.stdout == quiet.stderr == ""


def test_kata_start_launches_it_after_the_workspace_and_never_fails_for_it(kata, in_tmp, monkeypatch):
    calls = []
    monkeypatch.setattr(bench_ahead, "start_ahead", lambda kid: calls.append(kid) or (_ for _ in ()).throw(
        RuntimeError("broken")))
    r = kata("start", "reduce")
    assert r.exit_code == 0 and calls == ["reduce"] and (in_tmp / "reduce" / "kernel.cu").exists()
    assert "broken" not in r.output


def test_the_emulator_is_warmed_once_per_machine_and_version_and_never_fails(tmp_path, monkeypatch):
    """warm_emulator grades the kata's own solution on the emulator (numba compiles into its disk
    cache), leaves a marker for this emulator and numba version, and is a no-op after that; a kata
    without a solution, or anything that fails, is a silent False."""
    import types

    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    graded = []
    from grader import pipeline

    real = pipeline.grade
    monkeypatch.setattr(pipeline, "grade", lambda *a, **k: graded.append((a, k)) or real(*a, **k))
    kata = catalog.load("vector-add")
    assert bench_ahead.warm_emulator(kata) is True
    (args, kwargs), = graded
    assert args[0] == "vector-add" and kwargs["backend"] == "cpu" and kwargs["with_estimate"] is False
    assert list(tmp_path.glob("cache/emulator-warm-*"))
    assert bench_ahead.warm_emulator(kata) is False and len(graded) == 1  # warm already
    no_solution = types.SimpleNamespace(id="x", solution_dir=tmp_path / "none")
    assert bench_ahead.warm_emulator(no_solution) is False
    for marker in tmp_path.glob("cache/emulator-warm-*"):
        marker.unlink()
    monkeypatch.setattr(pipeline, "grade", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    assert bench_ahead.warm_emulator(kata) is False
