"""No upload is lost: a grading process killed with SIGKILL, or the whole server killed and
restarted, and the upload is graded again; two uploads of one candidate are graded in order."""
from __future__ import annotations

import os
import signal
import time

from sqlalchemy import select

from grader.server.models import AuditEvent, Submission
from tests.grader.server.conftest import (FAKE, free_port, make_assignment, serve_process, start_server, wait_graded,
                                   wait_up)

SLOW = "// CORRECT SLOW\n"


def _running_pid(db, submission_id: int, timeout: float = 30) -> int:
    end = time.time() + timeout
    while time.time() < end:
        with db.session() as s:
            row = s.get(Submission, submission_id)
        if row.state == "running" and row.pid:
            return row.pid
        time.sleep(0.05)
    raise AssertionError("the upload never started grading")


def test_a_grading_process_killed_mid_grade_is_regraded(db, served):
    _, [(candidate, token)] = make_assignment(db)
    client = served.client(token)
    client.post("/join", json={})
    sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": SLOW}}).json()
    sid = sent["submission"]["id"]
    os.kill(_running_pid(db, sid), signal.SIGKILL)
    view = wait_graded(client, sid)
    assert view["result"]["verdict"] == "pass"
    with db.session() as s:
        assert s.get(Submission, sid).tries == 2
        kinds = [e.kind for e in s.scalars(select(AuditEvent).where(AuditEvent.submission_id == sid)
                                             .order_by(AuditEvent.id))]
    assert kinds == ["upload", "grading", "requeued", "grading", "graded"]


def _serve(data, port):
    return serve_process(data, port, "--workers", "1", "--no-estimate", "--grade-function", FAKE, lease_s=2)


def test_a_server_killed_and_restarted_regrades_what_it_was_grading(tmp_path, monkeypatch):
    import httpx

    from grader.server.database import Database

    monkeypatch.setenv("KATA_SERVER_LEASE_S", "2")
    data, port = tmp_path / "srv", free_port()
    url = f"http://127.0.0.1:{port}"
    server = _serve(data, port)
    try:
        wait_up(url)
        db = Database(f"sqlite:///{data / 'server.db'}")
        _, [(_, token)] = make_assignment(db)
        client = httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"})
        client.post("/join", json={})
        sid = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": SLOW}}).json()["submission"]["id"]
        _running_pid(db, sid)
        server.send_signal(signal.SIGKILL)
        server.wait()
        server = _serve(data, port)
        wait_up(url)
        view = wait_graded(client, sid, timeout=60)
        assert view["result"]["verdict"] == "pass"
        with db.session() as s:
            assert s.get(Submission, sid).tries == 2
            reasons = [e.detail for e in s.scalars(select(AuditEvent).where(AuditEvent.kind == "requeued"))]
        assert reasons and "lease" in reasons[0]
    finally:
        server.kill()
        server.wait()


def test_two_uploads_of_one_candidate_are_graded_in_order(db):
    running = start_server(db, workers=2)
    try:
        _, [(_, token)] = make_assignment(db)
        client = running.client(token)
        client.post("/join", json={})
        first = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": SLOW}}).json()
        second = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": "// CORRECT"}}).json()
        assert (first["submission"]["seq"], second["submission"]["seq"]) == (1, 2)
        wait_graded(client, second["submission"]["id"])
        with db.session() as s:
            events = [(e.kind, e.submission_id) for e in s.scalars(select(AuditEvent).order_by(AuditEvent.id))
                      if e.kind in ("grading", "graded")]
        a, b = first["submission"]["id"], second["submission"]["id"]
        # the second waited for the first although a second slot was free
        assert events == [("grading", a), ("graded", a), ("grading", b), ("graded", b)]
    finally:
        running.stop()
