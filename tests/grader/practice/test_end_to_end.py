"""A whole mock interview on the CPU emulator, through the real pipeline:
start → failing grade → hint → passing grade → submit, then the report.

Slow-ish (the hidden reduce cases reach 2^24 + 1 elements on the emulator) but what CI must show.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import catalog
from grader.cli import cli
from grader.practice.store import Store


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def _kata(runner: CliRunner, *args: str):
    return runner.invoke(cli, list(args), prog_name="kata", catch_exceptions=False)


def test_a_scripted_interview_on_the_cpu_backend(home, tmp_path, chromium_or_none):
    runner = CliRunner()
    started = _kata(runner, "interview", "start", "--katas", "reduce", "--minutes", "30",
                    "--seed", "7", "--dir", str(tmp_path / "iv"))
    assert started.exit_code == 0, started.output
    workspace = tmp_path / "iv" / "reduce"
    os.chdir(workspace)

    failing = _kata(runner, "interview", "grade", "--backend", "cpu")
    assert failing.exit_code == 1, failing.output
    assert "attempt 1" in failing.output and "3 hidden adversarial cases" in failing.output

    hint = _kata(runner, "hint")
    assert hint.exit_code == 0, hint.output
    assert catalog.load("reduce").hints[0][:40] in " ".join(hint.output.split())

    solution = catalog.load("reduce").solution_dir
    for name in ("kernel.cu", "launch.py"):
        shutil.copy(solution / name, workspace / name)
    passing = _kata(runner, "interview", "grade", "--backend", "cpu")
    assert passing.exit_code == 0, passing.output
    assert "attempt 2" in passing.output

    submitted = _kata(runner, "interview", "submit", "--yes", "--backend", "cpu")
    assert submitted.exit_code == 0, submitted.output
    assert "1/1 passed" in submitted.output

    with Store() as store:
        (session,) = store.sessions()
        assert session.state == "submitted"
        (k,) = store.session_katas(session.id)
    outcome = k.outcome
    assert outcome["public"]["verdict"] == "pass" and outcome["hidden"]["verdict"] == "pass"
    assert outcome["attempts"] == 2 and outcome["hints"] == 1
    assert outcome["memory"]  # memory efficiency on the CPU backend
    html = Path(session.report_path).read_text()
    assert 'data-stage="hidden">pass</td>' in html and "Reference solution" in html
    assert not os.access(workspace / "kernel.cu", os.W_OK) or os.geteuid() == 0

    # The same report as a browser shows it (skipped only where Chromium is absent).
    if chromium_or_none is not None:
        dom = chromium_or_none("--dump-dom", Path(session.report_path).as_uri())
        assert 'data-stage="public">pass</td>' in dom and 'data-stage="hidden">pass</td>' in dom
