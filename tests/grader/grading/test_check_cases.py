"""Tolerances, poison, shrinking and reproducible case data."""
import numpy as np
import pytest

from grader.grading import cases
from grader import catalog
from grader.grading.check import compare
from grader.errors import UsageError


@pytest.fixture(scope="module")
def reduce():
    return catalog.load("reduce")


def test_bound_tolerance_scales_with_log_n_and_sum_abs(reduce):
    x = np.full(1024, 1.0, np.float32)
    inputs, params = {"x": x}, {"n": 1024}
    expected = reduce.reference.reference(inputs, **params)
    allowed = 2.0 * np.finfo(np.float32).eps * 10 * 1024  # c * eps * log2(n) * sum|x|
    assert compare(reduce, inputs, {"out": np.array([1024 + allowed * 0.9], np.float32)}, expected, params).ok
    bad = compare(reduce, inputs, {"out": np.array([1025.0], np.float32)}, expected, params)
    assert not bad.ok and str(bad.mismatches[0]).startswith("out[0] = 1025, expected 1024")


def test_nan_never_passes_and_changed_inputs_fail(reduce):
    x = np.ones(4, np.float32)
    expected = reduce.reference.reference({"x": x}, n=4)
    nan = compare(reduce, {"x": x}, {"out": np.array([np.nan], np.float32)}, expected, {"n": 4})
    assert not nan.ok and "NaN" in nan.headline()
    changed = compare(reduce, {"x": x}, {"out": np.array([4.0], np.float32)}, expected, {"n": 4}, ("x",))
    assert not changed.ok and "input x was modified" in changed.headline()


def test_case_data_is_reproducible_and_hostile(reduce):
    a = cases.materialize(reduce, cases.Case({"n": 5000}, "public", 7))
    b = cases.materialize(reduce, cases.Case({"n": 5000}, "drawn", 7))
    c = cases.materialize(reduce, cases.Case({"n": 5000}, "public", 8))
    assert np.array_equal(a.inputs["x"], b.inputs["x"]) and not np.array_equal(a.inputs["x"], c.inputs["x"])
    x = a.inputs["x"]
    assert x.dtype == np.float32 and (x > 0).any() and (x < 0).any() and abs(x.sum()) > 100
    neg = cases.materialize(reduce, cases.Case({"n": 100, "dist": "negative"}, "public", 0)).inputs["x"]
    assert (neg < 0).all()


def test_search_shrinks_a_drawn_failure_to_the_smallest_case(reduce):
    class Outcome:
        def __init__(self, case):
            self.case, self.failed = case, case.params["n"] >= 3000 and case.origin == "drawn"

    found = cases.search(reduce, Outcome, seed=3, examples=30)
    assert found.public == len(reduce.public)
    assert found.failure.case.params["n"] == 3000 and found.failure.case.origin == "drawn"


def test_search_runs_public_cases_first_and_stops_at_the_first_failure(reduce):
    seen = []

    class Outcome:
        def __init__(self, case):
            seen.append(case.params["n"])
            self.case, self.failed = case, case.params["n"] == 33

    found = cases.search(reduce, Outcome)
    assert seen == [1, 31, 32, 33] and found.failure.case.params == {"n": 33}


def test_hidden_cases_only_on_request(reduce):
    class Outcome:
        def __init__(self, case):
            self.case, self.failed = case, False

    assert cases.search(reduce, Outcome, examples=0).hidden == 0
    assert cases.search(reduce, Outcome, examples=0, hidden=True).hidden == len(reduce.hidden)


def test_case_overrides(reduce):
    assert cases.parse_overrides(("n=257", "dist=offset"), reduce) == {"n": 257, "dist": "offset"}
    with pytest.raises(UsageError, match="KEY=VALUE"):
        cases.parse_overrides(("257",), reduce)
    with pytest.raises(UsageError, match="needs n"):
        cases.parse_overrides(("dist=offset",), reduce)
    with pytest.raises(UsageError, match="choose one of"):
        cases.parse_overrides(("n=3", "dist=weird"), reduce)


def test_hypothesis_writes_nothing_into_the_workspace_or_the_cwd(tmp_path, monkeypatch, submission, fake_choice):
    import dataclasses
    from types import SimpleNamespace

    from grader import pipeline

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    ws = submission()
    assert pipeline.grade(None, ws, backend=fake_choice, examples=5).verdict == "pass"
    # A drawn failure that hypothesis shrinks (the phase most likely to want its example database).
    kata = dataclasses.replace(catalog.load("reduce"), public=())
    found = cases.search(kata, lambda c: SimpleNamespace(failed=c.params["n"] > 5000, case=c), examples=30)
    assert found.failure is not None and found.failure.case.params["n"] == 5001
    assert not [p for p in tmp_path.rglob(".hypothesis*") if (tmp_path / "home") not in p.parents]
