"""A stand-in for the grading pipeline, so session mechanics are tested in milliseconds.

The kernel's text decides the verdict: "CORRECT" passes the public tests, and also the hidden ones
unless it says "PUBLIC_ONLY". The end-to-end test (test_end_to_end.py) uses the real pipeline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

FAKE_GRADER = '''
from dataclasses import dataclass, field
from pathlib import Path

@dataclass(frozen=True)
class FakeCorrectness:
    cases_run: int
    failure: object = None

@dataclass(frozen=True)
class FakeReport:
    verdict: str
    headline: str
    correctness: FakeCorrectness
    backend: str = "cpu"
    findings: tuple = ()
    memory: str = "moves 1.00x the compulsory bytes"

def fake_grade(kata_id, folder, *, backend, hidden, seed=None):
    text = (Path(folder) / "kernel.cu").read_text()
    ok = "CORRECT" in text and not (hidden and "PUBLIC_ONLY" in text)
    cases = 40 if hidden else 14
    headline = "" if ok else f"fails for n = {16777217 if hidden else 257}"
    return FakeReport("pass" if ok else "fail", headline, FakeCorrectness(cases))
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
