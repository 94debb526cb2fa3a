"""A stand-in for the grading pipeline, so session mechanics are tested in milliseconds.

The kernel's text decides the verdict: "CORRECT" passes the public tests, and also the hidden ones
unless it says "PUBLIC_ONLY". The end-to-end test (test_end_to_end.py) uses the real pipeline.
"""
from __future__ import annotations

import pytest

FAKE_GRADER = '''
from pathlib import Path

from grader.stages import CaseFailure, CompileStage, CorrectnessStage, GradeReport

def fake_grade(kata_id, folder, *, backend, hidden, seed=None):
    text = (Path(folder) / "kernel.cu").read_text()
    ok = "CORRECT" in text and not (hidden and "PUBLIC_ONLY" in text)
    n = 16777217 if hidden else 257
    failure = None if ok else CaseFailure({"n": n}, "hidden" if hidden else "public",
                                          "wrong-answer", ("wrong-answer",),
                                          f"fails for n = {n}", (), 1, None,
                                          f"kata grade --case n={n}")
    correctness = CorrectnessStage(ok, 17 if hidden else 14, 14, 0, 3 if hidden else 0,
                                   seed or 0, 0, failure)
    return GradeReport(kata=kata_id, title="Sum reduction", workspace=str(folder), backend="cpu",
                       backend_reason="test", seed=seed or 0,
                       verdict="pass" if ok else "fail", stage="done" if ok else "correctness",
                       headline="passed" if ok else failure.headline,
                       reasons=() if ok else ("wrong-answer",),
                       compile=CompileStage(True, (), ""), correctness=correctness)
'''

namespace: dict = {}
exec(FAKE_GRADER, namespace)
fake_grade = namespace["fake_grade"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def fake_pipeline(monkeypatch, home):
    from grader import sessions

    monkeypatch.setattr(sessions, "_grade", fake_grade)
    return fake_grade


@pytest.fixture
def fake_grader_source() -> str:
    """The fake as source text, for tests that run it in a subprocess."""
    return FAKE_GRADER
