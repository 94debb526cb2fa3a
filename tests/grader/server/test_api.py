"""The candidate's side of the HTTP API as a candidate meets it: join, upload, see the grade; every
bad request a clear 4xx with no traceback; nothing hidden in any response."""
from __future__ import annotations

import json
import time

from sqlalchemy import select

from grader.server.app import Limits
from grader.server.models import AuditEvent, Submission
from tests.grader.server.conftest import make_assignment, start_server, wait_graded

EXTRA = {"vector-add": [{"n": 777773}]}  # the interviewer's own hidden case

CORRECT = "// CORRECT\n__global__ void k() {}\n"


def _join(served, token, **body):
    client = served.client(token)
    response = client.post("/join", json=body)
    assert response.status_code == 200, response.text
    return client, response.json()


def test_join_hands_out_workspaces_and_starts_the_server_clock(db, served):
    assignment, [(_, token)] = make_assignment(db, minutes=30)
    before = time.time()
    client, joined = _join(served, token)
    (kata,) = joined["katas"]
    assert kata["kata"] == "vector-add" and "kernel.cu" in kata["files"] and "statement.md" in kata["files"]
    assert kata["uploads"] == ["kernel.cu", "launch.py"]
    assert before + 30 * 60 <= joined["deadline"] <= time.time() + 30 * 60
    again = client.post("/join", json={}).json()
    assert again["deadline"] == joined["deadline"]  # a second join does not restart the clock


def test_an_upload_is_graded_and_the_candidate_sees_only_what_is_shown(db, served):
    from grader import catalog
    from grader.grading import secret_cases

    assignment, [(_, token)] = make_assignment(db, hidden_cases=EXTRA)
    client, _ = _join(served, token)
    sent = client.post("/submissions", json={"kata": "vector-add",
                                             "files": {"kernel.cu": CORRECT.replace("CORRECT", "CORRECT PUBLIC_ONLY")}})
    assert sent.status_code == 202, sent.text
    view = wait_graded(client, sent.json()["submission"]["id"])
    result = view["result"]
    assert result["verdict"] == "fail" and result["public"]["verdict"] == "pass"
    # 2 drawn from the secret seed, kata.toml's 2, the interviewer's 1; no headline: it names the case
    assert result["hidden"] == {"verdict": "fail", "cases": 5}
    passing = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}})
    assert wait_graded(client, passing.json()["submission"]["id"])["result"]["verdict"] == "pass"
    kata = catalog.load("vector-add")
    drawn = secret_cases.draw(kata, assignment.secret_seed)
    secrets = [assignment.secret_seed, 777773, *(case["n"] for case in (*kata.hidden, *drawn))]
    for body in served.responses:  # what the candidate's side received, every byte of it
        assert not [s for s in secrets if str(s).encode() in body]


def test_a_public_failure_is_shown_with_a_rerun_the_candidate_can_type(db, served):
    assignment, [(_, token)] = make_assignment(db)
    client, _ = _join(served, token)
    sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": "// wrong"}})
    public = wait_graded(client, sent.json()["submission"]["id"])["result"]["public"]
    assert public["headline"].startswith("fails for n = 257")
    assert public["rerun"] == "kata grade --backend cpu --case n=257"  # no secret seed, no server path


def test_show_verdict_shows_nothing_else_and_show_full_names_the_hidden_failure(db, served):
    _, [(_, quiet)] = make_assignment(db, show="verdict")
    _, [(_, loud)] = make_assignment(db, show="full", hidden_cases=EXTRA)
    for token, expected in ((quiet, {"verdict": "fail"}), (loud, None)):
        client, _ = _join(served, token)
        sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": "CORRECT PUBLIC_ONLY"}})
        result = wait_graded(client, sent.json()["submission"]["id"])["result"]
        if expected:
            assert result == expected
        else:
            # the interviewer's case reached the grading process, and "full" names it
            assert result["hidden"]["headline"].startswith("fails for n = 777773")


def _error(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] and "Traceback" not in response.text
    return body["error"]


def test_every_bad_request_is_a_clear_4xx(db, served):
    _, [(_, token), (_, other)] = make_assignment(db, names=("ada", "bob"))
    anonymous = served.client("")
    assert "invite token" in _error(anonymous.post("/join", json={}), 401)
    assert "unknown invite token" in _error(served.client("kata_" + "x" * 43).post("/join", json={}), 401)
    client = served.client(token)
    assert "not triton" in _error(client.post("/join", json={"language": "triton"}), 422)
    assert "join before" in _error(client.post("/submissions", json={"kata": "vector-add",
                                                                     "files": {"kernel.cu": CORRECT}}), 409)
    _join(served, token)
    assert "takes only kernel.cu, launch.py; not ../../etc/passwd" in _error(
        client.post("/submissions", json={"kata": "vector-add", "files": {"../../etc/passwd": "x"}}), 422)
    assert "not part of this assignment" in _error(
        client.post("/submissions", json={"kata": "reduce", "files": {"kernel.cu": CORRECT}}), 422)
    assert "over 64 KiB" in _error(client.post("/submissions", json={
        "kata": "vector-add", "files": {"kernel.cu": "x" * (65 * 1024)}}), 413)
    assert "the limit is" in _error(client.post("/submissions", json={
        "kata": "vector-add", "files": {"kernel.cu": "x" * 600_000}}), 413)
    assert "invalid request" in _error(client.post("/submissions", content=b"{not json",
                                                   headers={"content-type": "application/json"}), 422)
    assert "invalid request" in _error(client.post("/submissions", json={"kata": "../x", "files": {}}), 422)
    assert "kernel.cu, launch.py" in _error(client.post("/submissions", json={"kata": "vector-add", "files": {}}), 422)
    sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}}).json()
    _join(served, other)
    assert "no submission" in _error(served.client(other).get(f"/submissions/{sent['submission']['id']}"), 404)
    assert _error(client.get("/submissions/not-a-number"), 422)


def test_uploads_are_rate_limited_per_token(db):
    running = start_server(db, limits=Limits(uploads_per_minute=2), pool=False)
    try:
        _, [(_, token), (_, other)] = make_assignment(db, names=("ada", "bob"))
        client, _ = _join(running, token)
        for _ in range(2):
            assert client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}}).status_code == 202
        refused = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}})
        assert "too many uploads" in _error(refused, 429) and int(refused.headers["retry-after"]) > 0
        other_client, _ = _join(running, other)  # another token is not affected
        assert other_client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}}).status_code == 202
    finally:
        running.stop()


def test_a_late_upload_is_refused_and_recorded(db, served):
    _, [(candidate, token)] = make_assignment(db, minutes=0.01)
    client, _ = _join(served, token)
    time.sleep(0.8)
    assert "deadline passed" in _error(client.post("/submissions", json={"kata": "vector-add",
                                                                          "files": {"kernel.cu": CORRECT}}), 403)
    with db.session() as s:
        assert not list(s.scalars(select(Submission)))
        (late,) = s.scalars(select(AuditEvent).where(AuditEvent.kind == "late-upload"))
    assert late.candidate_id == candidate.id and "vector-add" in late.detail and "sha256=" in late.detail


def test_tokens_are_hashed_at_rest_and_every_upload_is_audited(db, served, tmp_path):
    _, [(candidate, token)] = make_assignment(db)
    client, _ = _join(served, token)
    sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}}).json()
    wait_graded(client, sent["submission"]["id"])
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("server.db*"))
    assert token.encode() not in raw and token[5:].encode() not in raw
    with db.session() as s:
        kinds = [e.kind for e in s.scalars(select(AuditEvent).where(AuditEvent.candidate_id == candidate.id)
                                             .order_by(AuditEvent.id))]
    assert kinds == ["invited", "joined", "upload", "grading", "graded"]


def test_an_upload_is_in_the_database_before_the_answer(db):
    running = start_server(db, pool=False)  # nobody grades: the row must be there all the same
    try:
        _, [(_, token)] = make_assignment(db)
        client, _ = _join(running, token)
        sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": CORRECT}}).json()
        with db.session() as s:
            row = s.get(Submission, sent["submission"]["id"])
        assert row.state == "queued" and json.loads(json.dumps(row.files)) == {"kernel.cu": CORRECT}
    finally:
        running.stop()


def test_the_interviewers_hidden_cases_are_checked_like_kata_toml(db):
    import pytest

    from grader.errors import UsageError

    with pytest.raises(UsageError, match="lacks n"):
        make_assignment(db, hidden_cases={"vector-add": [{"m": 3}]})
    with pytest.raises(UsageError, match="not in this assignment"):
        make_assignment(db, hidden_cases={"reduce": [{"n": 3}]})


def test_every_request_counts_against_the_tokens_limit(db):
    running = start_server(db, limits=Limits(requests_per_minute=3), pool=False)
    try:
        _, [(_, token)] = make_assignment(db)
        client, _ = _join(running, token)
        assert [client.get("/status").status_code for _ in range(3)] == [200, 200, 429]
    finally:
        running.stop()


def test_a_cohort_assignment_closes_for_everyone_at_its_due_time(db, served):
    _, [(_, early), (_, late)] = make_assignment(db, names=("ada", "bob"), minutes=60, due_at=time.time() + 5)
    _, joined = _join(served, early)
    assert joined["deadline"] <= time.time() + 5  # the due time, not join + 60 min
    time.sleep(max(0.0, joined["deadline"] - time.time()) + 0.2)
    assert "closed before you joined" in _error(served.client(late).post("/join", json={}), 403)


def test_a_report_link_expires():
    from grader.server import tokens

    key = b"k" * 32
    signature = tokens.sign(key, "c1", 1000)
    assert tokens.check_signature(key, "c1", 1000, signature, now=999)
    assert not tokens.check_signature(key, "c1", 1000, signature, now=1001)
    assert not tokens.check_signature(key, "c2", 1000, signature, now=999)
