"""A stand-in for the grading pipeline, so session mechanics are tested in milliseconds.

The kernel's text decides the verdict: "CORRECT" passes the public tests, and also the hidden ones
unless it says "PUBLIC_ONLY". The end-to-end test (test_end_to_end.py) uses the real pipeline.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

FAKE_GRADER = '''
from pathlib import Path

from grader.results import CaseFailure, CompileStage, CorrectnessStage, GradeReport
from harness.emulator.findings import Finding

def fake_grade(kata_id, folder, *, backend, hidden, seed=None):
    text = (Path(folder) / "kernel.cu").read_text()
    fails_public = "CORRECT" not in text
    fails_hidden = hidden and "PUBLIC_ONLY" in text
    ok = not fails_public and not fails_hidden
    n, origin = (257, "public") if fails_public else (16777217, "hidden")
    failure = None if ok else CaseFailure({"n": n}, origin, "wrong-answer", ("wrong-answer",),
                                          f"fails for n = {n}", (), 1, None,
                                          f"kata grade --case n={n}")
    ran_hidden = 3 if hidden and not fails_public else 0
    correctness = CorrectnessStage(ok, 14 + ran_hidden, 14, 0, ran_hidden, seed or 0, 0, failure)
    if ok and "RACE" in text:  # outputs match, the sanitizer objects
        race = Finding("race-raw", "reads s[i + 64] before the barrier", "kernel.cu", 14, count=9)
        return GradeReport(kata=kata_id, title="Sum reduction", workspace=str(folder),
                           backend="cpu", backend_reason="test", seed=seed or 0, verdict="fail",
                           stage="sanitizer", headline="outputs match, but race-raw at kernel.cu:14",
                           reasons=("race-raw",), compile=CompileStage(True, (), ""),
                           correctness=correctness, findings=(race,))
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
def home(kata_home, in_tmp):
    """The test's kata store, run from its temporary folder."""
    return kata_home


@pytest.fixture
def fake_pipeline(monkeypatch, home):
    from grader.practice import sessions

    monkeypatch.setattr(sessions, "_grade", fake_grade)
    # No launch.py runs in the fake, so no sandbox is needed (tests/grader/practice/test_deadline.py
    # tests the refusal where the OS cannot sandbox).
    from grader.cli import interview

    monkeypatch.setattr(interview, "require_sandbox", lambda: None)
    return fake_grade


@pytest.fixture
def fake_grader_source() -> str:
    """The fake as source text, for tests that run it in a subprocess."""
    return FAKE_GRADER


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def chromium_or_none(tmp_path):
    """Run headless Chromium with a throwaway profile: run(*args) -> stdout; None where Chromium
    is absent (install it with `apt-get install -y chromium`)."""
    if CHROMIUM is None:
        return None

    def run(*args: str) -> str:
        command = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}",
                   *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120).stdout

    return run


@pytest.fixture
def chromium(chromium_or_none):
    """As chromium_or_none, but skips the test where Chromium is absent."""
    if chromium_or_none is None:
        pytest.skip("headless Chromium is not installed")
    return chromium_or_none
