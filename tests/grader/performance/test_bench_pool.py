"""A kata's missing bench cases made in parallel subprocesses into the cache (grader/performance/bench_pool.py)."""
import dataclasses
import subprocess

import numpy as np

from grader import catalog
from grader.performance import bench_inputs, bench_pool

CASES = ({"n": 5000}, {"n": 777}, {"n": 3})


def small_reduce():
    real = catalog.load("reduce")
    return dataclasses.replace(real, bench=dataclasses.replace(real.bench, cases=CASES))


def test_missing_cases_are_made_by_subprocesses_then_loaded_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setenv(bench_pool.JOBS_ENV, "2")
    kata, started = small_reduce(), []

    def launch(cmd, **kwargs):
        started.append(cmd)
        return subprocess.Popen(cmd, **kwargs)  # the real command line, its case passed whole

    real = kata.reference.generate
    monkeypatch.setattr(kata.reference, "generate", lambda rng, **p: (_ for _ in ()).throw(AssertionError("made here")))
    data = bench_pool.make_all(kata, [11, 12, 13], launch=launch)  # this process generates nothing
    monkeypatch.setattr(kata.reference, "generate", real)
    assert [c[3:] for c in started] == [["reduce", '{"n": 5000}', "11", "--locked"],
                                        ["reduce", '{"n": 777}', "12", "--locked"],
                                        ["reduce", '{"n": 3}', "13", "--locked"]]
    for i, case in enumerate(CASES):
        assert isinstance(data[i].inputs["x"], np.memmap)  # loaded from the cache
        made = bench_inputs.bench_data(kata, dict(case), 11 + i)
        assert np.array_equal(made.inputs["x"], data[i].inputs["x"]) and made.inputs["x"].size == case["n"]
    started.clear()
    bench_pool.make_all(kata, [11, 12, 13], launch=launch)
    assert started == []  # all cached: nothing started


def test_a_pool_that_cannot_start_or_fails_still_makes_every_case_here(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = small_reduce()

    def no_processes(cmd, **kwargs):
        raise OSError("fork refused")

    data = bench_pool.make_all(kata, [1, 2, 3], launch=no_processes)
    assert sorted(data) == [0, 1, 2] and data[2].inputs["x"].size == 3

    class Dies:
        def poll(self):
            return 1  # exited at once, having made nothing

    monkeypatch.setenv("KATA_HOME", str(tmp_path / "other"))
    data = bench_pool.make_all(kata, [1, 2, 3], launch=lambda cmd, **kw: Dies())
    assert sorted(data) == [0, 1, 2] and data[0].inputs["x"].size == 5000


def test_one_missing_case_or_one_job_starts_no_subprocess(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    kata = dataclasses.replace(small_reduce(), bench=dataclasses.replace(small_reduce().bench, cases=CASES[:1]))

    def refuse(cmd, **kwargs):
        raise AssertionError("no subprocess for one case")

    assert bench_pool.make_all(kata, [1], launch=refuse)[0].inputs["x"].size == 5000
    monkeypatch.setenv(bench_pool.JOBS_ENV, "1")
    assert len(bench_pool.make_all(small_reduce(), [4, 5, 6], launch=refuse)) == 3
    assert bench_pool.jobs(3) == 1


def test_early_start_makes_the_cases_the_prefetch_then_waits_for_instead_of_remaking(tmp_path, monkeypatch):
    """A GPU grade starts its bench inputs when the kernel compiles; the prefetch's bench_data takes
    the case's lock, so it waits for a subprocess still making that case and loads what it made."""
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setenv(bench_pool.JOBS_ENV, "3")
    kata = small_reduce()
    started = bench_pool.start_early(kata, [21, 22, 23])
    assert len(started) == 3
    monkeypatch.setattr(kata.reference, "generate", lambda rng, **p: (_ for _ in ()).throw(AssertionError("made twice")))
    data = {i: bench_inputs.bench_data(kata, dict(c), 21 + i) for i, c in enumerate(CASES)}
    assert [d.inputs["x"].size for d in data.values()] == [5000, 777, 3]
    assert all(isinstance(d.inputs["x"], np.memmap) for d in data.values())
    bench_pool.stop(started)
    assert bench_pool.start_early(kata, [21, 22, 23]) == []  # all cached now: nothing to start


def test_a_grade_that_ends_early_stops_its_early_subprocesses(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    sleepers = []

    def launch(cmd, **kwargs):
        sleepers.append(subprocess.Popen(["sleep", "60"]))
        return sleepers[-1]

    started = bench_pool.start_early(small_reduce(), [1, 2, 3], launch=launch)
    bench_pool.stop(started)
    assert started and all(p.poll() is not None for p in sleepers)


def test_the_rotation_sets_are_made_with_the_cases_and_keyed_apart(tmp_path, monkeypatch):
    """Each case's second set (the timing's rotation) is made in the same parallel round as the
    first sets, early and by the prefetch; its key is ("rotation", i)."""
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setenv(bench_pool.JOBS_ENV, "6")
    kata, started = small_reduce(), []

    def launch(cmd, **kwargs):
        started.append(cmd[3:6])
        return subprocess.Popen(cmd, **kwargs)

    procs = bench_pool.start_early(kata, [1, 2, 3], rotation=[101, 102, 103], launch=launch)
    assert sorted(s for _, _, s in started) == ["1", "101", "102", "103", "2", "3"]
    data = bench_pool.make_all(kata, [1, 2, 3], rotation=[101, 102, 103], launch=launch)
    assert len(started) == 6  # the prefetch waited for the early subprocesses: nothing made twice
    bench_pool.stop(procs)
    assert set(data) == {0, 1, 2, ("rotation", 0), ("rotation", 1), ("rotation", 2)}
    for i in range(3):
        again = bench_inputs.bench_data(kata, dict(CASES[i]), 101 + i)
        assert np.array_equal(data[("rotation", i)].inputs["x"], again.inputs["x"])
        assert not np.array_equal(data[i].inputs["x"], data[("rotation", i)].inputs["x"])


def test_the_prefetch_starts_no_subprocess_for_a_case_an_early_one_is_making(tmp_path, monkeypatch):
    """make_all leaves a case whose lock is held (an early subprocess is making it) to that process:
    its bench_data waits for the lock and loads the entry, and no second subprocess starts."""
    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    monkeypatch.setenv(bench_pool.JOBS_ENV, "3")
    kata, started = small_reduce(), []
    early = bench_pool.start_early(kata, [31, 32, 33])
    assert len(early) == 3

    def launch(cmd, **kwargs):
        started.append(cmd)
        return subprocess.Popen(cmd, **kwargs)

    data = bench_pool.make_all(kata, [31, 32, 33], launch=launch)
    bench_pool.stop(early)
    # an early subprocess may have finished before make_all looked: then nothing is missing either
    assert started == [] and [d.inputs["x"].size for d in data.values()] == [5000, 777, 3]
