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
    assert [c[3:] for c in started] == [["reduce", '{"n": 5000}', "11"], ["reduce", '{"n": 777}', "12"],
                                        ["reduce", '{"n": 3}', "13"]]
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
