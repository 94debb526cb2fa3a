"""`kata grade` killed (SIGKILL) in the middle of grading: every earlier attempt survives and the
history file opens. Uses the real pipeline on the CPU emulator."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from grader import catalog
from grader.practice import progress
from grader.practice.store import Store


@dataclass(frozen=True)
class Report:
    verdict: str
    backend: str = "cpu"


def test_killing_kata_grade_midway_keeps_earlier_attempts(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    workspace = tmp_path / "reduce"
    workspace.mkdir()
    for name in ("kernel.cu", "launch.py"):
        shutil.copy(catalog.load("reduce").solution_dir / name, workspace / name)
    (workspace / ".kata").write_text('kata = "reduce"\n')
    progress.on_start("reduce", workspace)
    for verdict in ("fail", "fail", "pass"):
        progress.on_grade("reduce", workspace, Report(verdict))
    # Its own process group, so the grade and the worker it spawns die together.
    proc = subprocess.Popen([sys.executable, "-c", "from grader.cli import main; main()", "grade", str(workspace),
                             "--backend", "cpu", "--examples", "400"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "KATA_HOME": str(tmp_path / "home")})
    time.sleep(3.0)  # compiling and running cases by now (400 drawn: tens of seconds); recorded at the end
    assert proc.poll() is None, "the grade finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store() as store:
        assert store.integrity_ok()
        assert [a.verdict for a in store.attempts("reduce")] == ["fail", "fail", "pass"]
    assert progress.on_grade("reduce", workspace, Report("pass")).startswith("attempt 4 ·")
