"""The history file: schema, round trips, and no lost attempt when the writer is killed."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from grader.practice.store import SCHEMA_VERSION, Session, Store, StoreError


def test_kata_home_decides_where_the_file_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    with Store() as store:
        assert store.path == tmp_path / "home" / "kata.db"
        assert store.schema_version == SCHEMA_VERSION
    mode = sqlite3.connect(tmp_path / "home" / "kata.db").execute("PRAGMA journal_mode").fetchone()
    assert mode[0] == "wal"


def test_attempts_hints_events_round_trip(tmp_path):
    with Store(tmp_path / "kata.db") as store:
        store.add_workspace("reduce", "/w/reduce", started_at=100.0)
        store.add_attempt("reduce", "/w/reduce", "fail", "cpu", "abc", elapsed=5.0,
                          headline="fails for n = 257")
        store.add_attempt("reduce", "/w/reduce", "pass", "cpu", "def", score=0.8, elapsed=9.0)
        store.add_hint("reduce", 1)
        store.add_hint("reduce", 2)
        store.add_event("give-up", "scan")
    with Store(tmp_path / "kata.db") as store:
        attempts = store.attempts("reduce")
        assert [a.verdict for a in attempts] == ["fail", "pass"]
        assert attempts[0].headline == "fails for n = 257" and attempts[1].score == 0.8
        assert store.hints_taken("reduce") == 2 and store.hints_taken("scan") == 0
        assert store.last_event("give-up", "scan") is not None
        assert store.workspace_for_path("/w/reduce").started_at == 100.0


def test_sessions_freeze_and_outcomes(tmp_path):
    with Store(tmp_path / "kata.db") as store:
        store.add_session(Session("s1", 1.0, 2.0, "/s", 42, "open", None, None),
                          [("reduce", "/s/reduce"), ("scan", "/s/scan")])
        assert [k.kata for k in store.session_katas("s1")] == ["reduce", "scan"]
        store.freeze_session("s1", {"reduce": {"kernel.cu": "x"}})
        assert store.session("s1").state == "submitting"
        store.set_outcome("s1", "reduce", {"verdict": "pass"})
        store.finish_session("s1", "/s/report.html")
        first = store.session_katas("s1")[0]
        assert first.frozen_sources == {"kernel.cu": "x"} and first.outcome == {"verdict": "pass"}
        assert store.session("s1").state == "submitted"


def test_a_newer_schema_is_refused_with_the_next_step(tmp_path):
    db = sqlite3.connect(tmp_path / "kata.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.close()
    with pytest.raises(StoreError, match="upgrade kata"):
        Store(tmp_path / "kata.db")


# A writer that records attempts as fast as it can and prints each id once its commit returned;
# we SIGKILL it mid-stream. Every id it printed must be in the file afterwards.
_WRITER = textwrap.dedent("""
    import sys
    from grader.practice.store import Store
    store = Store(sys.argv[1])
    i = 0
    while True:
        a = store.add_attempt("reduce", "/w", "fail", "cpu", f"h{i}", headline="x" * 2000)
        print(a.id, flush=True)
        i += 1
""")


def test_killing_a_writer_mid_stream_loses_no_committed_attempt(tmp_path):
    path = tmp_path / "kata.db"
    with Store(path) as store:
        for i in range(5):
            store.add_attempt("reduce", "/w", "pass", "cpu", f"early{i}")
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE,
                            text=True)
    acknowledged = []
    deadline = time.time() + 30
    while len(acknowledged) < 40 and time.time() < deadline:
        acknowledged.append(int(proc.stdout.readline()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    acknowledged += [int(line) for line in proc.stdout.read().split()]
    with Store(path) as store:
        assert store.integrity_ok()
        ids = {a.id for a in store.attempts("reduce")}
        assert {a.source_hash for a in store.attempts("reduce")} >= {f"early{i}" for i in range(5)}
        assert set(acknowledged) <= ids
        store.add_attempt("reduce", "/w", "pass", "cpu", "after")  # still writable


def test_a_new_migration_upgrades_an_existing_file_in_place(tmp_path, monkeypatch):
    from grader.practice import store as store_module

    with Store(tmp_path / "kata.db") as store:
        store.add_attempt("reduce", "/w", "pass", "cpu", "kept")
    monkeypatch.setattr(store_module, "MIGRATIONS",
                        [*store_module.MIGRATIONS, "ALTER TABLE attempts ADD COLUMN note TEXT"])
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", len(store_module.MIGRATIONS))
    with Store(tmp_path / "kata.db") as store:
        assert store.schema_version == SCHEMA_VERSION + 1
        assert [a.source_hash for a in store.attempts("reduce")] == ["kept"]
