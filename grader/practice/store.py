"""The learner's history: attempts, hints, workspaces, interview sessions, in one SQLite file.

Why SQLite and these settings: `kata grade`, `kata watch` and an interview may write at the same
time from different processes, and a learner may press Ctrl-C (or the OS may kill us) in the
middle of a grade. WAL lets readers and one writer work together; every write is its own short
`BEGIN IMMEDIATE ... COMMIT` with synchronous=FULL, so a row is on disk before the call returns
and a killed process can lose at most the write it had not yet committed, never an earlier one.

The file lives in platformdirs' user data dir ("kata"), or in $KATA_HOME when that is set.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path

from grader.errors import EnvironmentProblem
from grader.practice.schema import MIGRATIONS, SCHEMA_VERSION  # noqa: F401  (SCHEMA_VERSION: re-exported)

DB_NAME = "kata.db"
FIX_HOME = "set KATA_HOME to a folder you can write (e.g. export KATA_HOME=~/.kata), or move a damaged kata.db aside"


class StoreError(EnvironmentProblem):
    """The history file cannot be used (unwritable folder, newer schema, unreadable): a setup
    problem, exit 3, with the next step; every command that touches the history says the same."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message, hint=hint or FIX_HOME)


@dataclass(frozen=True)
class Attempt:
    id: int  # row id, increasing with time
    kata: str  # kata id
    workspace: str  # absolute path of the graded folder
    time: float  # unix time the attempt was recorded
    verdict: str  # "pass" | "fail" | "error"
    score: float | None  # performance score (GPU) or memory efficiency (CPU), when known
    backend: str  # "cpu" | "gpu"
    source_hash: str  # sha256 of the graded sources, to tell re-grades of the same code apart
    elapsed: float | None  # seconds since the workspace's clock started
    session_id: str | None  # the interview session, None in practice
    phase: str  # "practice" | "public" (interview grade) | "hidden" (interview submit)
    headline: str  # one line: why it failed, or "" when it passed


@dataclass(frozen=True)
class Workspace:
    id: int  # row id; a reset adds a new row for the same path (a new clock)
    kata: str  # kata id
    path: str  # absolute path
    started_at: float  # unix time the clock started
    session_id: str | None  # the interview session it belongs to, None in practice


@dataclass(frozen=True)
class Session:
    id: str  # short id shown to the learner
    created_at: float  # unix time of `kata interview start`
    deadline: float  # unix time the countdown ends
    folder: str  # absolute path of the session folder holding one workspace per kata
    secret_seed: int  # hypothesis seed for the hidden tests; never shown before the report
    state: str  # "open" | "submitting" | "submitted"
    submitted_at: float | None  # unix time of the freeze
    report_path: str | None  # the HTML report, once written


@dataclass(frozen=True)
class SessionKata:
    session_id: str  # the session
    position: int  # order in the session (0-based)
    kata: str  # kata id
    workspace: str  # absolute path of its workspace
    frozen_sources: dict[str, str] | None  # file name → text, copied at the freeze
    outcome: dict | None  # the graded result as plain data, once submitted


def _row(cls, row: sqlite3.Row):
    """A row as its dataclass, ignoring columns a later migration added that cls does not know."""
    names = {f.name for f in fields(cls)}
    return cls(**{k: row[k] for k in row.keys() if k in names})


def default_home() -> Path:
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home)
    from platformdirs import user_data_dir

    return Path(user_data_dir("kata"))


class Store:
    """One connection to the history file; every public write is one committed transaction."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else default_home() / DB_NAME
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"kata cannot make its history folder {self.path.parent}: "
                             f"{exc.strerror or exc}") from None
        try:
            # isolation_level=None: we issue BEGIN/COMMIT ourselves, one per write.
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: cannot open kata's history ({exc})",
                             hint=f"{FIX_HOME}; kata then starts a fresh one") from exc

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextmanager
    def _write(self):
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # read-only file or folder, full disk, locked past the timeout
            raise StoreError(f"kata cannot write its history {self.path}: {exc}") from exc

    def check_writable(self) -> None:
        """Raise StoreError now, before a command changes anything, if a write would fail later."""
        with self._write() as db:  # a write that changes nothing: a read-only file fails here
            db.execute(f"PRAGMA user_version = {db.execute('PRAGMA user_version').fetchone()[0]}")

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} was written by a newer kata (schema {version}, this "
                             f"kata knows {SCHEMA_VERSION}); upgrade kata with `git pull && pip install -e .` "
                             "in your kata checkout")
        for number in range(version + 1, SCHEMA_VERSION + 1):
            with self._write() as db:
                for statement in MIGRATIONS[number - 1].split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {number}")

    @property
    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    # --- workspaces -------------------------------------------------------------------------

    def add_workspace(self, kata: str, path: str, started_at: float | None = None,
                      session_id: str | None = None) -> Workspace:
        started_at = time.time() if started_at is None else started_at
        with self._write() as db:
            cur = db.execute("INSERT INTO workspaces (kata, path, started_at, session_id) "
                             "VALUES (?, ?, ?, ?)", (kata, path, started_at, session_id))
        return Workspace(cur.lastrowid, kata, path, started_at, session_id)

    def workspace_for_path(self, path: str) -> Workspace | None:
        row = self._db.execute("SELECT * FROM workspaces WHERE path = ? ORDER BY id DESC LIMIT 1",
                               (path,)).fetchone()
        return _row(Workspace, row) if row else None

    def latest_workspace(self, kata: str, practice_only: bool = True) -> Workspace | None:
        sql = "SELECT * FROM workspaces WHERE kata = ?"
        sql += " AND session_id IS NULL" if practice_only else ""
        row = self._db.execute(sql + " ORDER BY id DESC LIMIT 1", (kata,)).fetchone()
        return _row(Workspace, row) if row else None

    # --- attempts ---------------------------------------------------------------------------

    def add_attempt(self, kata: str, workspace: str, verdict: str, backend: str, source_hash: str,
                    score: float | None = None, elapsed: float | None = None,
                    session_id: str | None = None, phase: str = "practice", headline: str = "",
                    at: float | None = None) -> Attempt:
        at = time.time() if at is None else at
        with self._write() as db:
            cur = db.execute(
                "INSERT INTO attempts (kata, workspace, time, verdict, score, backend, source_hash,"
                " elapsed, session_id, phase, headline) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (kata, workspace, at, verdict, score, backend, source_hash, elapsed, session_id,
                 phase, headline))
        return Attempt(cur.lastrowid, kata, workspace, at, verdict, score, backend, source_hash,
                       elapsed, session_id, phase, headline)

    def attempts(self, kata: str | None = None, *, since: float | None = None,
                 session_id: str | None = None, phase: str | None = None,
                 workspace: str | None = None) -> list[Attempt]:
        clauses, values = [], []
        for column, value in (("kata", kata), ("session_id", session_id), ("phase", phase),
                              ("workspace", workspace)):
            if value is not None:
                clauses.append(f"{column} = ?")
                values.append(value)
        if since is not None:
            clauses.append("time >= ?")
            values.append(since)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(f"SELECT * FROM attempts{where} ORDER BY id", values).fetchall()
        return [_row(Attempt, row) for row in rows]

    # --- hints and events -------------------------------------------------------------------

    def add_hint(self, kata: str, idx: int, session_id: str | None = None) -> None:
        with self._write() as db:
            db.execute("INSERT INTO hints (kata, idx, time, session_id) VALUES (?, ?, ?, ?)",
                       (kata, idx, time.time(), session_id))

    def hints_taken(self, kata: str, *, since: float | None = None,
                    session_id: str | None = None) -> int:
        """The highest hint index revealed (hints are revealed in order, so this is the count),
        in practice (session_id None) or in one interview session."""
        sql, values = "SELECT MAX(idx) FROM hints WHERE kata = ?", [kata]
        if since is not None:
            sql, values = sql + " AND time >= ?", values + [since]
        if session_id is None:
            sql += " AND session_id IS NULL"
        else:
            sql, values = sql + " AND session_id = ?", values + [session_id]
        return self._db.execute(sql, values).fetchone()[0] or 0

    def add_event(self, kind: str, kata: str | None = None, session_id: str | None = None,
                  detail: str = "") -> None:
        with self._write() as db:
            db.execute("INSERT INTO events (time, kind, kata, session_id, detail) "
                       "VALUES (?, ?, ?, ?, ?)", (time.time(), kind, kata, session_id, detail))

    def last_event(self, kind: str, kata: str | None = None) -> float | None:
        """Unix time of the latest event of this kind (for this kata), or None."""
        sql, values = "SELECT MAX(time) FROM events WHERE kind = ?", [kind]
        if kata is not None:
            sql, values = sql + " AND kata = ?", values + [kata]
        return self._db.execute(sql, values).fetchone()[0]

    def events(self, kind: str, *, kata: str | None = None,
               session_id: str | None = None) -> list[tuple[float, str]]:
        """(time, detail) of every event of this kind, oldest first."""
        sql, values = "SELECT time, detail FROM events WHERE kind = ?", [kind]
        for column, value in (("kata", kata), ("session_id", session_id)):
            if value is not None:
                sql, values = sql + f" AND {column} = ?", values + [value]
        return [tuple(r) for r in self._db.execute(sql + " ORDER BY id", values).fetchall()]

    # --- sessions ---------------------------------------------------------------------------

    def add_session(self, session: Session, katas: list[tuple[str, str]]) -> None:
        """The session and its (kata, workspace) pairs, in one transaction."""
        with self._write() as db:
            db.execute("INSERT INTO sessions (id, created_at, deadline, folder, secret_seed, state)"
                       " VALUES (?, ?, ?, ?, ?, ?)", (session.id, session.created_at,
                                                      session.deadline, session.folder,
                                                      session.secret_seed, session.state))
            for position, (kata, workspace) in enumerate(katas):
                db.execute("INSERT INTO session_katas (session_id, position, kata, workspace) "
                           "VALUES (?, ?, ?, ?)", (session.id, position, kata, workspace))
                db.execute("INSERT INTO workspaces (kata, path, started_at, session_id) "
                           "VALUES (?, ?, ?, ?)", (kata, workspace, session.created_at, session.id))

    def session(self, session_id: str) -> Session | None:
        row = self._db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _row(Session, row) if row else None

    def sessions(self, state: str | None = None) -> list[Session]:
        sql, values = "SELECT * FROM sessions", []
        if state is not None:
            sql, values = sql + " WHERE state = ?", [state]
        rows = self._db.execute(sql + " ORDER BY created_at", values).fetchall()
        return [_row(Session, row) for row in rows]

    def session_katas(self, session_id: str) -> list[SessionKata]:
        rows = self._db.execute("SELECT * FROM session_katas WHERE session_id = ? ORDER BY position",
                                (session_id,)).fetchall()
        out = []
        for row in rows:
            kata = _row(SessionKata, row)
            out.append(SessionKata(**{**kata.__dict__, **{
                key: json.loads(row[key]) if row[key] else None
                for key in ("frozen_sources", "outcome")}}))
        return out

    def freeze_session(self, session_id: str, sources: dict[str, dict[str, str]]) -> None:
        """Copy every kata's sources into the record and mark the session as being submitted."""
        with self._write() as db:
            for kata, files in sources.items():
                db.execute("UPDATE session_katas SET frozen_sources = ? "
                           "WHERE session_id = ? AND kata = ?", (json.dumps(files), session_id, kata))
            db.execute("UPDATE sessions SET state = 'submitting', submitted_at = ? WHERE id = ?",
                       (time.time(), session_id))

    def set_outcome(self, session_id: str, kata: str, outcome: dict) -> None:
        with self._write() as db:
            db.execute("UPDATE session_katas SET outcome = ? WHERE session_id = ? AND kata = ?",
                       (json.dumps(outcome), session_id, kata))

    def finish_session(self, session_id: str, report_path: str) -> None:
        with self._write() as db:
            db.execute("UPDATE sessions SET state = 'submitted', report_path = ? WHERE id = ?",
                       (report_path, session_id))

    def integrity_ok(self) -> bool:
        return self._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
