"""The server's tables (SQLAlchemy 2 declarative). The schema itself is built by the Alembic
migrations in migrations/versions; a change here needs a new migration there.

Times are unix seconds (float) on the server's clock, the only clock a deadline is measured on.
"""
from __future__ import annotations

from sqlalchemy import (JSON, BigInteger, Float, ForeignKey, Integer, String, Text, UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Assignment(Base):
    """An interview (one candidate's clock starts at their join) or a cohort assignment (one due time
    for everyone)."""
    __tablename__ = "assignments"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))  # "interview" | "cohort"
    katas: Mapped[list] = mapped_column(JSON)  # kata ids, in the order shown
    level: Mapped[str | None] = mapped_column(String(32), nullable=True)  # the level drawn from, if any
    minutes: Mapped[float] = mapped_column(Float)  # each candidate's time from their join
    due_at: Mapped[float | None] = mapped_column(Float, nullable=True)  # cohort: nobody submits after
    languages: Mapped[list] = mapped_column(JSON)  # kernel languages allowed: cuda, triton, numba
    backend: Mapped[str] = mapped_column(String(16))  # "cpu" | "gpu" | "auto": where hidden tests run
    show: Mapped[str] = mapped_column(String(16))  # what a candidate sees: verdict | public | full
    secret_seed: Mapped[int] = mapped_column(BigInteger)  # draws the hidden cases; never sent out
    # the interviewer's own hidden cases, {kata: [case, ...]}, run after the kata's; never sent out
    hidden_cases: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[float] = mapped_column(Float)


class Candidate(Base):
    """One invite: a token (stored as its hash) for one person on one assignment."""
    __tablename__ = "candidates"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    assignment_id: Mapped[str] = mapped_column(ForeignKey("assignments.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the invite token
    created_at: Mapped[float] = mapped_column(Float)
    joined_at: Mapped[float | None] = mapped_column(Float, nullable=True)  # first join: the clock starts
    deadline: Mapped[float | None] = mapped_column(Float, nullable=True)  # set at the join
    language: Mapped[str | None] = mapped_column(String(16), nullable=True)  # chosen at the join
    next_seq: Mapped[int] = mapped_column(Integer, default=0)  # the last submission number handed out


class Submission(Base):
    """One upload, durable before the server answers, and the queue's job for grading it."""
    __tablename__ = "submissions"
    __table_args__ = (UniqueConstraint("candidate_id", "seq"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    candidate_id: Mapped[str] = mapped_column(ForeignKey("candidates.id"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # 1, 2, ... per candidate: the order of grading
    kata: Mapped[str] = mapped_column(String(64))
    files: Mapped[dict] = mapped_column(JSON)  # {file name: text}, as uploaded
    sources_hash: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[float] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(16), index=True)  # queued | running | done | error
    tries: Mapped[int] = mapped_column(Integer, default=0)  # times a worker took it
    worker: Mapped[str | None] = mapped_column(String(120), nullable=True)  # who holds it now
    pid: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the grading process, while running
    lease_until: Mapped[float | None] = mapped_column(Float, nullable=True)  # requeued once passed
    outcome: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # KataOutcome.to_dict()
    finished_at: Mapped[float | None] = mapped_column(Float, nullable=True)


class AuditEvent(Base):
    """Every join, upload (accepted, late or refused), grade and regrade, in order."""
    __tablename__ = "audit_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    time: Mapped[float] = mapped_column(Float, index=True)
    kind: Mapped[str] = mapped_column(String(32))
    candidate_id: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    submission_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    remote: Mapped[str | None] = mapped_column(String(64), nullable=True)  # client address
    detail: Mapped[str] = mapped_column(Text, default="")


class ServerKey(Base):
    """Server secrets kept in the database, so every process sharing it agrees (report links)."""
    __tablename__ = "server_keys"
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))


class PrivateKata(Base):
    """An interviewer's own kata (`kata serve admin kata add DIR`): it exists only on the server. A
    candidate who joins receives its public part (private_katas.public_files); its hidden cases and
    its solution never leave."""
    __tablename__ = "private_katas"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # the kata id (its folder's name)
    files: Mapped[dict] = mapped_column(JSON)  # {path in the kata folder: text}, solution/ included
    sha256: Mapped[str] = mapped_column(String(64))  # of the files: names a materialised copy
    added_at: Mapped[float] = mapped_column(Float)
