"""Progress as `kata grade`, `kata hint`, `kata list` and `kata status` see it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.practice import progress
from grader.practice.store import Store


@dataclass(frozen=True)
class FakeReport:
    verdict: str
    backend: str = "cpu"
    score: float | None = None
    headline: str = ""


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _workspace(tmp_path: Path, name: str = "reduce") -> Path:
    ws = tmp_path / name
    ws.mkdir()
    (ws / "kernel.cu").write_text("__global__ void reduce() {}\n")
    return ws


def test_grade_line_counts_attempts_and_time(tmp_path):
    ws = _workspace(tmp_path)
    progress.on_start("reduce", ws)
    assert progress.on_grade("reduce", ws, FakeReport("fail")) == "attempt 1 · 0 s since start"
    assert progress.on_grade("reduce", ws, FakeReport("pass")).startswith("attempt 2 · ")
    with Store() as store:
        attempts = store.attempts("reduce")
    assert [a.verdict for a in attempts] == ["fail", "pass"]
    assert attempts[0].source_hash == progress.source_hash(ws)


def test_summary_states_best_score_and_hints(tmp_path):
    ws = _workspace(tmp_path)
    rows = progress.summary(["reduce", "scan"])
    assert rows["reduce"].state == "not started"
    progress.on_start("reduce", ws)
    assert progress.summary(["reduce"])["reduce"].state == "started"
    progress.on_grade("reduce", ws, FakeReport("fail"))
    assert progress.summary(["reduce"])["reduce"].state == "failing"
    progress.on_grade("reduce", ws, FakeReport("pass", "gpu", 0.62))
    progress.on_grade("reduce", ws, FakeReport("pass", "gpu", 0.81))
    progress.on_grade("reduce", ws, FakeReport("fail"))
    assert progress.next_hint("reduce", ["a", "b"]) == (1, "a")
    row = progress.summary(["reduce"])["reduce"]
    assert (row.state, row.attempts, row.best_score, row.hints) == ("passing", 4, 0.81, 1)
    assert row.last_verdict == "fail"


def test_hints_come_in_order_and_run_out():
    hints = ["first", "second"]
    assert progress.next_hint("reduce", hints) == (1, "first")
    assert progress.next_hint("reduce", hints) == (2, "second")
    assert progress.next_hint("reduce", hints) is None
    assert progress.next_hint("scan", hints) == (1, "first")


def test_grading_shipped_solutions_is_not_practice():
    import solutions

    folder = Path(solutions.__path__[0]) / "reduce"
    assert progress.on_grade("reduce", folder, FakeReport("pass")) is None
    assert progress.summary(["reduce"])["reduce"].state == "not started"


def test_durations_read_naturally():
    assert [progress.format_duration(s) for s in (5, 125, 3900)] == ["5 s", "2 min", "1 h 05 min"]
