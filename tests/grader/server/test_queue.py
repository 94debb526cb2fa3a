"""The queue in the database, on SQLite and on a real PostgreSQL (skipped where none can start)."""
from __future__ import annotations

import threading
import time

import pytest

from grader.server import jobs
from grader.server.database import Database
from grader.server.models import Submission
from tests.grader.server.conftest import make_assignment


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'q.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    database = Database(url)
    if request.param == "postgresql":  # one cluster for the session: start from empty tables
        with database.engine.begin() as c:
            c.exec_driver_sql("TRUNCATE audit_events, submissions, candidates, assignments, server_keys")
    yield database
    database.close()


def _upload(db, candidate_id, text="// CORRECT"):
    with db.session() as s, s.begin():
        return jobs.enqueue(s, candidate_id, "vector-add", {"kernel.cu": text}, time.time()).id


def test_claims_follow_each_candidates_order(any_db):
    _, [(ada, _), (bob, _)] = make_assignment(any_db, names=("ada", "bob"))
    a1, a2, b1 = _upload(any_db, ada.id), _upload(any_db, ada.id), _upload(any_db, bob.id)
    first = jobs.claim(any_db, "w1")
    second = jobs.claim(any_db, "w2")
    assert (first.submission, second.submission) == (a1, b1)  # a2 waits for a1
    assert jobs.claim(any_db, "w3") is None
    jobs.finish(any_db, first, "w1", {"verdict": "pass"})
    assert jobs.claim(any_db, "w3").submission == a2


def test_concurrent_claimers_never_share_a_job(any_db):
    _, invited = make_assignment(any_db, names=[f"c{i}" for i in range(12)])
    ids = {_upload(any_db, c.id) for c, _ in invited}
    taken, lock = [], threading.Lock()

    def drain(name):
        while (job := jobs.claim(any_db, name)) is not None:
            with lock:
                taken.append(job.submission)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(ids)


def test_an_expired_lease_goes_back_to_the_queue_and_a_finish_by_the_old_worker_is_ignored(any_db):
    _, [(ada, _)] = make_assignment(any_db)
    sid = _upload(any_db, ada.id)
    job = jobs.claim(any_db, "w1")
    assert jobs.requeue_stale(any_db, now=time.time() + jobs.LEASE_S + 1) == 1
    again = jobs.claim(any_db, "w2")
    assert again.submission == sid and again.tries == 2
    assert not jobs.finish(any_db, job, "w1", {"verdict": "fail"})  # w1 lost it
    assert jobs.finish(any_db, again, "w2", {"verdict": "pass"})
    with any_db.session() as s:
        assert s.get(Submission, sid).outcome == {"verdict": "pass"}


def test_a_job_that_kills_every_worker_ends_as_an_error(any_db):
    _, [(ada, _)] = make_assignment(any_db)
    sid = _upload(any_db, ada.id)
    for i in range(jobs.MAX_TRIES):
        job = jobs.claim(any_db, f"w{i}")
        jobs.release(any_db, job, f"w{i}", "exit code -9")
    assert jobs.claim(any_db, "w") is None
    with any_db.session() as s:
        row = s.get(Submission, sid)
    assert row.state == "error" and "failed 5 times" in row.outcome["public"]["headline"]


def test_an_older_database_is_migrated_in_place(tmp_path):
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import text

    from grader.server.database import MIGRATIONS, engine_for

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = engine_for(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(text("INSERT INTO assignments VALUES ('a1', 'old', 'interview', '[\"reduce\"]', NULL, "
                                "45, NULL, '[\"cuda\"]', 'cpu', 'public', 7, 0)"))
    engine.dispose()
    database = Database(url)
    with database.engine.connect() as connection:
        assert connection.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0003"
        assert connection.execute(text("SELECT name, hidden_cases FROM assignments")).one() == ("old", None)
        assert connection.execute(text("SELECT count(*) FROM private_katas")).scalar() == 0
    database.close()


def test_the_whole_server_on_postgresql(postgres_url):
    from tests.grader.server.conftest import start_server, wait_graded

    database = Database(postgres_url)
    with database.engine.begin() as c:
        c.exec_driver_sql("TRUNCATE audit_events, submissions, candidates, assignments, server_keys")
    running = start_server(database, workers=2)
    try:
        _, invited = make_assignment(database, names=("ada", "bob"))
        views = []
        for _, token in invited:
            client = running.client(token)
            assert client.post("/join", json={}).status_code == 200
            sent = client.post("/submissions", json={"kata": "vector-add", "files": {"kernel.cu": "// CORRECT"}})
            views.append((client, sent.json()["submission"]["id"]))
        assert [wait_graded(c, i)["result"]["verdict"] for c, i in views] == ["pass", "pass"]
    finally:
        running.stop()
        database.close()


def test_local_slots_are_one_per_core_group(monkeypatch):
    from grader.server import pool

    monkeypatch.setattr(pool.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3, 4, 5, 6, 7})
    assert pool.plan(None, "cpu", cores_per_worker=2).cpu_groups == ((0, 1), (2, 3), (4, 5), (6, 7))
    assert pool.plan(2, "cpu").cpu_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    monkeypatch.setattr(pool, "_gpu_count", lambda: 4)
    gpu = pool.plan(None, "gpu")
    assert gpu.workers == 4 and gpu.gpus == (0, 1, 2, 3)
