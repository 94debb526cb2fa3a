"""An interview grades the workspace as it was at the deadline and says when later edits exist; the
report's rerun lines work after the session ended; hidden tests are graded only where launch.py can
be sandboxed (exit 3 otherwise)."""
import os
import time
from pathlib import Path

from click.testing import CliRunner

from grader.cli import cli
from grader.practice import sessions
from grader.practice.store import Store


def _write(ws: Path, text: str) -> None:
    (ws / "kernel.cu").write_text(text)


def _overdue(session_id: str) -> None:
    """End the session's time now (as if the clock ran out), then let a moment pass."""
    with Store() as store:
        store._db.execute("UPDATE sessions SET deadline = ? WHERE id = ?", (time.time(), session_id))
    time.sleep(0.05)


def test_edits_after_the_deadline_are_not_graded_and_the_report_says_so(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    ws = Path(session.folder) / "reduce"
    _write(ws, "// CORRECT")
    sessions.grade_public(session, "reduce")  # in time: the snapshot the submit will grade
    _overdue(session.id)
    _write(ws, "// broken after the deadline")
    report = sessions.submit(session.id)
    outcome = report.katas[0]
    assert outcome.verdict == "pass"  # the in-time state was graded
    assert outcome.late_save_s > 0 and outcome.snapshot_before_s > 0
    html = (Path(session.folder) / "report.html").read_text()
    assert "those edits were not graded" in html
    with Store() as store:
        frozen = store.session_katas(session.id)[0].frozen_sources
    assert frozen["kernel.cu"] == "// CORRECT"
    assert (ws / "kernel.cu").read_text() == "// broken after the deadline"  # the learner's file kept


def test_without_a_grade_before_the_deadline_the_files_are_graded_as_saved(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    ws = Path(session.folder) / "reduce"
    _overdue(session.id)
    _write(ws, "// CORRECT")
    outcome = sessions.submit(session.id).katas[0]
    assert outcome.late_save_s > 0 and outcome.snapshot_before_s == 0
    assert "graded as saved" in (Path(session.folder) / "report.html").read_text()


def test_the_graded_copy_outlives_the_session_for_its_rerun_lines(fake_pipeline, tmp_path):
    session = sessions.start(["reduce"], 45, tmp_path / "iv")
    _write(Path(session.folder) / "reduce", "// CORRECT PUBLIC_ONLY")
    sessions.submit(session.id)
    graded = Path(session.folder) / ".submitted" / "reduce"
    assert (graded / "kernel.cu").read_text() == "// CORRECT PUBLIC_ONLY"
    assert (graded / ".kata").read_text().strip() == 'kata = "reduce"'


def test_submit_refuses_where_launch_py_cannot_be_sandboxed(home, tmp_path, monkeypatch):
    from harness.sandbox import os_sandbox

    runner = CliRunner()
    assert runner.invoke(cli, ["interview", "start", "--katas", "reduce", "--dir", str(tmp_path / "iv")]).exit_code == 0
    monkeypatch.setattr(os_sandbox, "probe", lambda: {"landlock": 0, "seccomp": False,
                                                      "missing": ["the kernel offers no Landlock"]})
    os.chdir(tmp_path / "iv" / "reduce")
    before = (tmp_path / "iv" / "reduce" / "kernel.cu").read_bytes()
    out = runner.invoke(cli, ["interview", "submit", "--yes"])
    assert out.exit_code == 3, out.output
    assert "cannot sandbox launch.py" in out.output and "no Landlock" in out.output
    assert "practice grades (`kata grade`) still work here" in out.output
    assert (tmp_path / "iv" / "reduce" / "kernel.cu").read_bytes() == before
    with Store() as store:
        assert store.sessions()[0].state == "open"  # nothing frozen: it can be submitted elsewhere
