"""Mock-interview mechanics: workspaces, countdown, public grades, freeze, hidden tests, resume."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.practice import progress, sessions
from grader.cli import cli
from grader.practice.store import Store



def _write(workspace: Path, text: str) -> None:
    (workspace / "kernel.cu").write_text(text)


def test_start_makes_a_workspace_per_kata(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv", seed=3)
    folder = Path(session.folder)
    assert (folder / "reduce" / "kernel.cu").is_file() and (folder / "reduce" / "launch.py").is_file()
    assert sessions.session_id_for(folder / "reduce") == session.id
    assert 44 * 60 < session.deadline - time.time() <= 45 * 60
    # the same --seed gives the same secret seed (reproducible sessions), none gives a fresh one
    assert sessions.start(["reduce"], 5, tmp_path / "iv2", seed=3).secret_seed == session.secret_seed


def test_pick_katas_by_level_and_by_name(home):
    assert sessions.pick_katas(["reduce"], None, 1, None) == ["reduce"]
    drawn = sessions.pick_katas(None, "core", 2, seed=1)
    assert drawn == sessions.pick_katas(None, "core", 2, seed=1) and len(drawn) >= 1
    with pytest.raises(Exception, match="no kata named"):
        sessions.pick_katas(["nope"], None, 1, None)


def test_public_grade_counts_attempts_and_tells_hidden_count_only(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    ws = Path(session.folder) / "reduce"
    first = sessions.grade_public(session, "reduce")
    _write(ws, "// CORRECT")
    second = sessions.grade_public(session, "reduce")
    assert (first.attempt, first.report.verdict) == (1, "fail")
    assert (second.attempt, second.report.verdict) == (2, "pass")
    assert second.hidden_cases == 3  # reduce declares three hidden cases
    assert "16777217" not in second.report.headline  # the hidden case stays hidden


def test_submit_freezes_grades_hidden_and_writes_the_report(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    ws = Path(session.folder) / "reduce"
    _write(ws, "// CORRECT PUBLIC_ONLY")
    sessions.grade_public(session, "reduce")
    os.chdir(ws)
    assert progress.next_hint("reduce", ["a", "b", "c"]) == (1, "a")  # counted in the session
    report = sessions.submit(session.id)
    outcome = report.katas[0]
    assert (outcome.public.verdict, outcome.hidden.verdict, outcome.verdict) == ("pass", "fail", "fail")
    assert outcome.hidden.headline == "fails for n = 16777217"  # revealed now
    assert (outcome.attempts, outcome.hints, outcome.hints_total) == (1, 1, 3)
    assert "reduce" in outcome.solution and outcome.explanation
    assert not os.access(ws / "kernel.cu", os.W_OK) or os.geteuid() == 0
    assert not (ws / "kernel.cu").stat().st_mode & stat.S_IWUSR
    html = (Path(session.folder) / "report.html").read_text()
    assert "fails for n = 16777217" in html
    with Store() as store:
        assert store.session(session.id).state == "submitted"
        assert store.session_katas(session.id)[0].frozen_sources["kernel.cu"] == "// CORRECT PUBLIC_ONLY"
        hidden = store.attempts("reduce", phase="hidden")
        assert [a.verdict for a in hidden] == ["fail"]
    assert progress.summary(["reduce"])["reduce"].state == "not started"  # interviews are not practice


def test_grading_after_the_deadline_submits_instead(fake_pipeline, tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli, ["interview", "start", "--katas", "reduce", "--minutes", "0.01",
                                 "--dir", str(tmp_path / "iv")])
    assert result.exit_code == 0, result.output
    time.sleep(1.8)
    _write(tmp_path / "iv" / "reduce", "// CORRECT")  # saved a second after the deadline
    os.chdir(tmp_path / "iv" / "reduce")
    result = runner.invoke(cli, ["interview", "grade"])
    assert "ended at the deadline" in result.output and "Report:" in result.output
    assert result.exit_code == 2 and "is over" in result.output
    with Store() as store:
        (session,) = store.sessions()
        assert session.state == "submitted"
    html = (tmp_path / "iv" / "report.html").read_text()
    assert "Time ran out" in html and "after time ran out; graded as saved" in html


def test_cli_start_grade_status_submit(fake_pipeline, tmp_path):
    runner = CliRunner()
    out = runner.invoke(cli, ["interview", "start", "--katas", "reduce", "--dir", str(tmp_path / "iv")])
    assert out.exit_code == 0 and "kata interview grade" in out.output
    again = runner.invoke(cli, ["interview", "start", "--katas", "reduce"])
    assert again.exit_code == 2 and "still running" in again.output
    os.chdir(tmp_path / "iv" / "reduce")
    graded = runner.invoke(cli, ["interview", "grade"])
    assert graded.exit_code == 1 and "3 hidden adversarial cases and 12 drawn" in graded.output
    status = runner.invoke(cli, ["interview", "status"])
    assert "reduce" in status.output and "1 attempt ·" in status.output and "left" in status.output
    submitted = runner.invoke(cli, ["interview", "submit", "--yes"])
    assert submitted.exit_code == 0, submitted.output
    assert "0/1 passed" in submitted.output and "report.html" in submitted.output
    shown = runner.invoke(cli, ["interview", "report"])
    assert shown.exit_code == 0 and "0/1 passed" in shown.output


# A submit killed while grading the hidden tests: earlier attempts must survive, the session
# must be frozen, and the next submit must finish it.
_SLOW_SUBMIT = textwrap.dedent('''
    import sys, time
    from grader.practice import sessions
    def slow(kata_id, folder, *, backend, hidden, seed=None):
        if hidden:
            Path(sys.argv[1]).write_text("grading")
            time.sleep(60)
        return fake_grade(kata_id, folder, backend=backend, hidden=hidden, seed=seed)
    sessions._grade = slow
    sessions.submit(sys.argv[2])
''')


def test_killing_a_submit_midway_loses_nothing_and_resumes(fake_pipeline, fake_grader_source,
                                                           tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    ws = Path(session.folder) / "reduce"
    for text in ("// wrong", "// CORRECT", "// CORRECT again"):
        _write(ws, text)
        sessions.grade_public(session, "reduce")
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, "-c", fake_grader_source + _SLOW_SUBMIT, str(marker), session.id],
                            env={**os.environ}, cwd=tmp_path)
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "the submit never reached the hidden tests"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store() as store:
        assert store.integrity_ok()
        assert [a.verdict for a in store.attempts("reduce", phase="public")] == ["fail", "pass", "pass"]
        assert store.session(session.id).state == "submitting"
        assert store.session_katas(session.id)[0].frozen_sources["kernel.cu"] == "// CORRECT again"
    report = sessions.submit(session.id)
    assert report.katas[0].verdict == "pass" and report.katas[0].attempts == 3


_SLOW_GRADE = textwrap.dedent('''
    import sys, time
    from grader.practice import sessions
    from grader.practice.store import Store
    def slow(kata_id, folder, *, backend, hidden, seed=None):
        Path(sys.argv[1]).write_text("grading")
        time.sleep(60)
    sessions._grade = slow
    with Store() as store:
        session = store.session(sys.argv[2])
    sessions.grade_public(session, "reduce")
''')


def test_killing_a_grade_midway_keeps_every_earlier_attempt(fake_pipeline, fake_grader_source,
                                                             tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    for _ in range(3):
        sessions.grade_public(session, "reduce")
    marker = tmp_path / "marker"
    proc = subprocess.Popen([sys.executable, "-c", fake_grader_source + _SLOW_GRADE, str(marker),
                             session.id], cwd=tmp_path)
    deadline = time.time() + 60
    while not marker.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert marker.exists(), "the grade never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store() as store:
        assert store.integrity_ok()
        assert len(store.attempts("reduce", session_id=session.id)) == 3
    assert sessions.grade_public(session, "reduce").attempt == 4


def test_a_public_failure_skips_the_hidden_tests_and_says_so(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    outcome = sessions.submit(session.id).katas[0]
    assert (outcome.public.verdict, outcome.public.headline) == ("fail", "fails for n = 257")
    assert outcome.hidden.verdict == "skipped" and "public tests failed" in outcome.hidden.headline
    assert outcome.attempts == 0 and outcome.verdict == "fail"


def test_a_sanitizer_finding_fails_the_kata_though_every_output_matched(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    _write(Path(session.folder) / "reduce", "// CORRECT RACE")
    report = sessions.submit(session.id)
    outcome = report.katas[0]
    assert (outcome.public.verdict, outcome.hidden.verdict, outcome.verdict) == ("pass", "pass", "fail")
    assert outcome.problem == "outputs match, but race-raw at kernel.cu:14"
    assert [(f.kind, f.where, f.count) for f in outcome.findings] == [("race-raw", "kernel.cu:14", 9)]
    assert report.passed == 0
    assert 'data-stage="sanitizer"' in (Path(session.folder) / "report.html").read_text()


def test_several_katas_need_a_name_outside_their_workspaces(fake_pipeline, tmp_path):
    runner = CliRunner()
    started = runner.invoke(cli, ["interview", "start", "--katas", "reduce,scan",
                                  "--dir", str(tmp_path / "iv")])
    assert started.exit_code == 0, started.output
    os.chdir(tmp_path / "iv")
    ambiguous = runner.invoke(cli, ["interview", "grade"])
    assert ambiguous.exit_code == 2 and "several katas (reduce, scan)" in ambiguous.output
    named = runner.invoke(cli, ["interview", "grade", "scan"])
    assert named.exit_code == 1 and "attempt 1" in named.output
    os.chdir(tmp_path / "iv" / "reduce")
    here = runner.invoke(cli, ["interview", "grade"])
    assert here.exit_code == 1 and "reduce" in here.output
    wrong = runner.invoke(cli, ["interview", "grade", "matmul"])
    assert wrong.exit_code == 2 and "not part of session" in wrong.output
