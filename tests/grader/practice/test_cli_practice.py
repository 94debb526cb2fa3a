"""`kata status`, `kata solution`, `kata reset`, `kata watch` as a learner uses them."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.practice import progress
from grader.cli import cli
from grader.cli.practice import watch_folder
from grader.practice.store import Store


@dataclass(frozen=True)
class FakeReport:
    verdict: str
    backend: str = "cpu"
    score: float | None = None


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "reduce"
    ws.mkdir()
    (ws / "kernel.cu").write_text("// my attempt\n")
    (ws / "launch.py").write_text("# my plan\n")
    progress.on_start("reduce", ws)
    return ws


def test_status_lists_progress(workspace):
    progress.on_grade("reduce", workspace, FakeReport("fail"))
    result = CliRunner().invoke(cli, ["status"])
    assert result.exit_code == 0, result.output
    line = next(l for l in result.output.splitlines() if l.startswith("reduce"))
    assert "failing" in line and line.split()[-1] == "reduce"
    assert "not started" in next(l for l in result.output.splitlines() if l.startswith("scan"))


def test_solution_is_locked_until_a_pass_or_a_give_up(workspace):
    runner = CliRunner()
    locked = runner.invoke(cli, ["solution", "reduce"])
    assert locked.exit_code == 2 and "--give-up" in locked.output
    gave_up = runner.invoke(cli, ["solution", "reduce", "--give-up"])
    assert gave_up.exit_code == 0 and "__global__" in gave_up.output
    assert progress.summary(["reduce"])["reduce"].gave_up
    progress.on_grade("reduce", workspace, FakeReport("pass"))
    assert runner.invoke(cli, ["solution", "scan"]).exit_code == 2
    shown = runner.invoke(cli, ["solution", "reduce"])
    assert shown.exit_code == 0 and "solutions/reduce/kernel.cu" in shown.output


def test_unknown_kata_names_the_next_step():
    result = CliRunner().invoke(cli, ["solution", "reduse"])
    assert result.exit_code == 2 and "kata start reduce" in result.output


def test_reset_restores_the_stub_and_keeps_a_backup(workspace):
    progress.on_grade("reduce", workspace, FakeReport("fail"))
    progress.next_hint("reduce", ["a", "b"])
    result = CliRunner().invoke(cli, ["reset", "reduce"], input="y\n")
    assert result.exit_code == 0, result.output
    from grader import catalog

    assert (workspace / "kernel.cu").read_text() == catalog.load("reduce").file("stub.cu").read_text()
    (backup,) = (workspace / ".kata-backup").iterdir()
    assert (backup / "kernel.cu").read_text() == "// my attempt\n"
    row = progress.summary(["reduce"])["reduce"]
    assert (row.state, row.attempts, row.hints) == ("started", 0, 0)
    assert progress.next_hint("reduce", ["a", "b"]) == (1, "a")
    with Store() as store:
        assert len(store.attempts("reduce")) == 1  # history is kept


def test_reset_asks_first():
    result = CliRunner().invoke(cli, ["reset", "reduce"], input="n\n")
    assert "its progress starts over" in result.output  # no workspace: nothing to ask about


def test_watch_regrades_on_save(workspace):
    seen: list[list[Path]] = []
    stop = threading.Event()

    def regrade(paths):
        seen.append(paths)
        stop.set()

    watcher = threading.Thread(target=watch_folder, args=(workspace, regrade),
                               kwargs={"stop_event": stop, "debounce_ms": 50}, daemon=True)
    watcher.start()
    time.sleep(0.5)  # let the watcher arm itself
    (workspace / "notes.txt").write_text("not a source")
    (workspace / "kernel.cu").write_text("// saved\n")
    watcher.join(timeout=20)
    stop.set()
    assert not watcher.is_alive()
    assert seen and all(p.name == "kernel.cu" for p in seen[0])


def test_help_reads_like_a_known_tool():
    runner = CliRunner()
    top = runner.invoke(cli, ["--help"]).output
    for name in ("status", "solution", "reset", "watch", "interview"):
        assert f"  {name} " in top
    for args in (["solution", "-h"], ["interview", "start", "-h"], ["watch", "--help"]):
        result = runner.invoke(cli, args, prog_name="kata")
        assert result.exit_code == 0 and result.output.startswith("Usage: kata ")


def test_watch_ignores_hidden_folders_but_not_a_hidden_parent(tmp_path):
    from grader.cli.practice import _is_source

    folder = (tmp_path / ".work" / "reduce").resolve()
    assert _is_source(folder / "kernel.cu", folder)
    assert not _is_source(folder / ".hypothesis" / "x.py", folder)
    assert not _is_source(folder / ".kata-backup" / "1" / "kernel.cu", folder)
    assert not _is_source(folder / "notes.txt", folder)
