"""The hidden cases a server draws from its secret (grader/grading/secret_cases.py): the same for one
secret, different for another, never a case kata.toml lists, shaped like the kata's own hidden cases,
within the bounds they met, and valid inputs for every kata's generate()."""
from __future__ import annotations

import pytest

from grader import catalog
from grader.grading import cases, secret_cases


def test_one_secret_draws_the_same_cases_and_another_secret_others():
    kata = catalog.load("vector-add")
    first = secret_cases.draw(kata, 1234)
    assert first == secret_cases.draw(kata, 1234)  # a regrade after a crash runs the same cases
    assert len(first) == len(kata.hidden)
    others = {case["n"] for secret in range(2, 12) for case in secret_cases.draw(kata, secret)}
    assert len(others) >= 15 and not others & {case["n"] for case in first}


def test_a_drawn_case_keeps_its_templates_shape_but_not_its_size():
    kata = catalog.load("vector-add")  # hidden: n = 3000001, n = 4194307 (dist = cancel)
    for secret in range(20):
        for template, case in zip(kata.hidden, secret_cases.draw(kata, secret)):
            n = template["n"]
            assert n // 2 <= case["n"] <= n and case["n"] % 32 == n % 32  # the ragged tail stays ragged
            assert case.get("dist", "cancel") in ("mixed", "cancel")
            if "dist" in template:
                assert case["dist"] == template["dist"]
        known = [*kata.public, *kata.hidden]
        assert not [c for c in secret_cases.draw(kata, secret) if c in known]


def test_a_bound_over_another_parameter_stays_met():
    kata = catalog.load("topk")  # k = { min = 1, max = "L" }; a hidden case has k = 4096, L = 4097
    for secret in range(30):
        for case in secret_cases.draw(kata, secret):
            assert 1 <= case["k"] <= case["L"]


def test_a_kata_without_hidden_cases_draws_from_its_ranges():
    from dataclasses import replace

    kata = replace(catalog.load("vector-add"), hidden=())
    drawn = secret_cases.draw(kata, 7)
    assert len(drawn) == secret_cases.FROM_RANGES
    assert all(1 <= case["n"] <= 200000 and case["dist"] in ("mixed", "cancel") for case in drawn)


@pytest.mark.parametrize("kata_id", catalog.ids())
def test_every_katas_drawn_cases_are_inputs_its_reference_accepts(kata_id):
    kata = catalog.load(kata_id)
    for case in secret_cases.draw(kata, 20261202):
        data = cases.materialize(kata, cases.Case(case, "hidden", 20261202))
        assert data.elements > 0
