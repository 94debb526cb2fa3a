"""The grading queue, kept in the database: an upload is a `submissions` row in state "queued",
committed before the server answers; a worker claims it ("running", with a lease it renews), and
stores the outcome ("done"). A worker that dies (SIGKILL, a server restart) stops renewing its lease,
so the job returns to the queue and is graded again; after MAX_TRIES it is stored as an error.

A candidate's uploads are graded in the order they arrived: a job is claimed only while no earlier
upload of the same candidate is queued or running. The claim is one conditional UPDATE, so two
workers (threads, processes or servers sharing PostgreSQL) never take the same job.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass

from sqlalchemy import and_, exists, or_, select, update
from sqlalchemy.orm import Session, aliased

from grader.server import private_katas
from grader.server.database import Database
from grader.server.models import Assignment, AuditEvent, Candidate, PrivateKata, Submission

# a running job whose worker has not renewed its lease for this long is requeued
LEASE_S = float(os.environ.get("KATA_SERVER_LEASE_S", 30.0))
MAX_TRIES = 5  # a job whose worker died this many times is stored as an error


@dataclass(frozen=True)
class Job:
    """What a worker needs to grade one upload (the secret seed included: workers are the server's)."""
    submission: int  # submissions.id
    candidate: str  # candidate id
    kata: str  # kata id
    files: dict  # {file name: text}
    seed: int  # the assignment's secret seed
    backend: str  # cpu | gpu | auto
    tries: int  # this is the tries-th time a worker takes it
    extra_cases: tuple = ()  # the interviewer's hidden cases for this kata, after the kata's own
    kata_files: dict | None = None  # a private kata's files (its solution left out): the worker has no copy


def sources_hash(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return digest.hexdigest()


def enqueue(s: Session, candidate_id: str, kata: str, files: dict[str, str], now: float) -> Submission:
    """Add an upload to the queue inside the caller's transaction; its number comes from an atomic
    increment on the candidate's row, so concurrent uploads of one candidate get distinct, ordered
    numbers on SQLite and PostgreSQL alike."""
    seq = s.execute(update(Candidate).where(Candidate.id == candidate_id)
                    .values(next_seq=Candidate.next_seq + 1).returning(Candidate.next_seq)).scalar_one()
    sub = Submission(candidate_id=candidate_id, seq=seq, kata=kata, files=files,
                     sources_hash=sources_hash(files), received_at=now, state="queued", tries=0)
    s.add(sub)
    s.flush()
    return sub


def _blocked():
    """An earlier upload of the same candidate is still waiting or being graded."""
    other = aliased(Submission)
    return exists().where(other.candidate_id == Submission.candidate_id, other.id != Submission.id,
                          or_(other.state == "running",
                              and_(other.state == "queued", other.seq < Submission.seq)))


def claim(db: Database, worker: str, now: float | None = None) -> Job | None:
    """Take the oldest job that may run now, or None."""
    now = now or time.time()
    with db.session() as s, s.begin():
        waiting = s.execute(select(Submission.id, Submission.candidate_id)
                            .where(Submission.state == "queued").order_by(Submission.id).limit(32)).all()
        for sid, candidate_id in waiting:
            if db.engine.dialect.name == "postgresql":
                # Serialises claims per candidate: the UPDATE below then sees the other's commit.
                s.execute(select(Candidate.id).where(Candidate.id == candidate_id).with_for_update())
            taken = s.execute(update(Submission)
                              .where(Submission.id == sid, Submission.state == "queued", ~_blocked())
                              .values(state="running", worker=worker, lease_until=now + LEASE_S,
                                      tries=Submission.tries + 1, pid=None)
                              .execution_options(synchronize_session=False)).rowcount
            if taken == 1:
                sub = s.get(Submission, sid)
                s.refresh(sub)
                assignment = s.get(Assignment, s.get(Candidate, candidate_id).assignment_id)
                s.add(AuditEvent(time=now, kind="grading", candidate_id=candidate_id,
                                 submission_id=sid, detail=f"{worker} try {sub.tries}"))
                extra = tuple((assignment.hidden_cases or {}).get(sub.kata, ()))
                private = s.get(PrivateKata, sub.kata)
                kata_files = private_katas.grading_files(private.files) if private is not None else None
                return Job(sid, candidate_id, sub.kata, dict(sub.files), assignment.secret_seed,
                           assignment.backend, sub.tries, extra, kata_files)
    return None


def started(db: Database, job: Job, worker: str, pid: int) -> None:
    """Record the grading process, so an operator (or the fault benchmark) can find it."""
    with db.session() as s, s.begin():
        s.execute(update(Submission).where(Submission.id == job.submission, Submission.worker == worker)
                  .values(pid=pid))


def renew(db: Database, job: Job, worker: str, now: float | None = None) -> bool:
    """Extend the lease; False when the job is no longer this worker's (it was requeued)."""
    now = now or time.time()
    with db.session() as s, s.begin():
        return s.execute(update(Submission)
                         .where(Submission.id == job.submission, Submission.worker == worker,
                                Submission.state == "running")
                         .values(lease_until=now + LEASE_S)).rowcount == 1


def finish(db: Database, job: Job, worker: str, outcome: dict, state: str = "done") -> bool:
    """Store the outcome; False (and nothing stored) when the job was taken from this worker."""
    now = time.time()
    with db.session() as s, s.begin():
        done = s.execute(update(Submission)
                         .where(Submission.id == job.submission, Submission.worker == worker,
                                Submission.state == "running")
                         .values(state=state, outcome=outcome, finished_at=now, pid=None,
                                 lease_until=None)).rowcount == 1
        if done:
            s.add(AuditEvent(time=now, kind="graded" if state == "done" else "grade-error",
                             candidate_id=job.candidate, submission_id=job.submission,
                             detail=str(outcome.get("verdict", ""))))
    return done


def release(db: Database, job: Job, worker: str, why: str) -> None:
    """The grading process died: back to the queue (or an error after MAX_TRIES)."""
    now = time.time()
    with db.session() as s, s.begin():
        sub = s.get(Submission, job.submission)
        if sub is None or sub.worker != worker or sub.state != "running":
            return
        _requeue(s, sub, now, why)


def _requeue(s: Session, sub: Submission, now: float, why: str) -> None:
    if sub.tries >= MAX_TRIES:
        sub.state, sub.finished_at = "error", now
        sub.outcome = error_outcome(sub.kata, f"grading failed {sub.tries} times ({why}); "
                                              "the server's operator has the audit log")
        kind = "grade-error"
    else:
        sub.state = "queued"
        kind = "requeued"
    sub.worker, sub.pid, sub.lease_until = None, None, None
    s.add(AuditEvent(time=now, kind=kind, candidate_id=sub.candidate_id, submission_id=sub.id,
                     detail=why))


def requeue_stale(db: Database, now: float | None = None) -> int:
    """Jobs whose worker stopped renewing its lease (killed, or its server restarted)."""
    now = now or time.time()
    with db.session() as s, s.begin():
        stale = list(s.scalars(select(Submission).where(Submission.state == "running",
                                                        Submission.lease_until < now)))
        for sub in stale:
            _requeue(s, sub, now, f"lease of {sub.worker} expired")
    return len(stale)


def error_outcome(kata: str, problem: str) -> dict:
    """An outcome for a submission kata could not grade (not the candidate's verdict: an error)."""
    from grader.practice.interview_report import KataOutcome, SuiteResult

    failed = SuiteResult("error", 0, problem)
    outcome = KataOutcome(kata, kata, failed, SuiteResult("skipped", 0, "not run"))
    return {**outcome.to_dict(), "verdict": outcome.verdict}
