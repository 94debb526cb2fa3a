"""The interviewer's side as a library: make an assignment, invite candidates, watch progress, build
each candidate's report and export the results. `kata serve admin` renders what these return.
"""
from __future__ import annotations

import csv
import io
import json
import secrets
import time
from dataclasses import asdict, dataclass

from sqlalchemy import func, select

from grader.errors import UsageError
from grader.server import tokens
from grader.server.database import Database
from grader.server.models import Assignment, AuditEvent, Candidate, Submission

LANGUAGES = ("cuda", "triton", "numba")
SHOW = ("verdict", "public", "full")  # what a candidate sees of a hidden-test grade (views.py)


def create(db: Database, *, name: str, katas: list[str] | None = None, level: str | None = None,
           count: int = 1, minutes: float = 45, due_at: float | None = None,
           languages: tuple[str, ...] = ("cuda",), backend: str = "auto", show: str = "public",
           seed: int | None = None, hidden_cases: dict | None = None) -> Assignment:
    """An interview (each candidate's clock starts at their join) or, with due_at, a cohort
    assignment (nobody submits after due_at)."""
    from grader.practice.sessions import pick_katas

    if minutes <= 0:
        raise UsageError("--minutes must be positive")
    if katas and level:
        raise UsageError("--katas and --level pick the katas two ways; give one of them")
    bad = [lang for lang in languages if lang not in LANGUAGES]
    if bad or not languages:
        raise UsageError(f"--languages {','.join(bad) or '(none)'}: choose from {', '.join(LANGUAGES)}")
    if show not in SHOW:
        raise UsageError(f"--show {show}: choose from {', '.join(SHOW)}")
    if backend not in ("cpu", "gpu", "auto"):
        raise UsageError(f"--backend {backend}: choose cpu, gpu or auto")
    if due_at is not None and due_at <= time.time():
        raise UsageError("--due is in the past")
    chosen = pick_katas(katas, level, count, seed)
    hidden_cases = _checked_cases(hidden_cases or {}, chosen)
    assignment = Assignment(id=tokens.new_id(), name=name, kind="cohort" if due_at else "interview",
                            katas=chosen, level=level, minutes=float(minutes), due_at=due_at,
                            languages=list(languages), backend=backend, show=show,
                            secret_seed=secrets.randbits(62), created_at=time.time(),
                            hidden_cases=hidden_cases or None)
    with db.session() as s, s.begin():
        s.add(assignment)
        s.add(AuditEvent(time=time.time(), kind="assignment-created",
                         detail=f"{assignment.id} {','.join(chosen)} {minutes:g} min"))
    return assignment


def _checked_cases(cases: dict, katas: list[str]) -> dict:
    """Each kata's extra hidden cases, checked against its parameters as kata.toml's are."""
    from grader import catalog
    from grader.catalog.loader import _cases
    from grader.errors import CatalogError

    checked = {}
    for kata, items in cases.items():
        if kata not in katas:
            raise UsageError(f"--hidden-cases names {kata}, which is not in this assignment ({', '.join(katas)})")
        try:
            checked[kata] = list(_cases(items, catalog.load(kata).params, "--hidden-cases", kata))
        except CatalogError as exc:
            raise UsageError(exc.message, hint="write them as in kata.toml: "
                                               'vector-add = [ { n = 777777 } ]') from None
    return checked


def find_assignment(db: Database, assignment_id: str) -> Assignment:
    with db.session() as s:
        found = s.get(Assignment, assignment_id)
    if found is None:
        raise UsageError(f"no assignment {assignment_id}",
                         hint="`kata serve admin list` shows the assignments")
    return found


def assignments(db: Database) -> list[Assignment]:
    with db.session() as s:
        return list(s.scalars(select(Assignment).order_by(Assignment.created_at)))


def invite(db: Database, assignment_id: str, names: list[str]) -> list[tuple[Candidate, str]]:
    """One token per name; the token is returned once and only its hash is kept."""
    find_assignment(db, assignment_id)
    made = []
    with db.session() as s, s.begin():
        for name in names:
            token = tokens.new_token()
            candidate = Candidate(id=tokens.new_id(), assignment_id=assignment_id, name=name,
                                  token_hash=tokens.token_hash(token), created_at=time.time(),
                                  next_seq=0)
            s.add(candidate)
            s.add(AuditEvent(time=time.time(), kind="invited", candidate_id=candidate.id,
                             detail=name))
            made.append((candidate, token))
    return made


@dataclass(frozen=True)
class Progress:
    candidate: str  # candidate id
    name: str  # as invited
    assignment: str  # assignment id
    state: str  # invited | working | over
    left_s: float | None  # seconds on the clock (None before the join)
    submissions: int  # uploads accepted
    pending: int  # uploads waiting for or in grading
    late: int  # uploads refused after the deadline
    verdicts: dict  # {kata: verdict of its latest graded upload}
    passed: int  # katas whose latest graded upload passed


def progress(db: Database, assignment_id: str | None = None, now: float | None = None) -> list[Progress]:
    now = now or time.time()
    rows = []
    with db.session() as s:
        query = select(Candidate).order_by(Candidate.created_at)
        if assignment_id:
            query = query.where(Candidate.assignment_id == assignment_id)
        for c in s.scalars(query):
            subs = list(s.scalars(select(Submission).where(Submission.candidate_id == c.id)
                                  .order_by(Submission.seq)))
            verdicts = {}
            for sub in subs:
                if sub.state in ("done", "error") and sub.outcome:
                    verdicts[sub.kata] = _verdict(sub.outcome)
            late = s.scalar(select(func.count()).select_from(AuditEvent).where(
                AuditEvent.candidate_id == c.id, AuditEvent.kind == "late-upload"))
            state = "invited" if c.joined_at is None else ("over" if now >= c.deadline else "working")
            rows.append(Progress(c.id, c.name, c.assignment_id, state,
                                 None if c.deadline is None else max(0.0, c.deadline - now),
                                 len(subs), sum(x.state in ("queued", "running") for x in subs),
                                 int(late or 0), verdicts, sum(v == "pass" for v in verdicts.values())))
    return rows


def _verdict(outcome: dict) -> str:
    from grader.practice.interview_report import KataOutcome

    return KataOutcome.from_dict(outcome).verdict


def report(db: Database, candidate_id: str):
    """The candidate's InterviewReport (grader/practice/interview_report.py): per kata, the outcome
    of the latest graded upload; the secret seed is in it, so it is for the interviewer only."""
    from grader.practice.interview_report import InterviewReport, KataOutcome

    with db.session() as s:
        c = s.get(Candidate, candidate_id)
        if c is None:
            raise UsageError(f"no candidate {candidate_id}",
                             hint="`kata serve admin watch` lists the candidates")
        a = s.get(Assignment, c.assignment_id)
        subs = list(s.scalars(select(Submission).where(Submission.candidate_id == c.id)
                              .order_by(Submission.seq)))
    latest: dict[str, KataOutcome] = {}
    uploads = {k: sum(sub.kata == k for sub in subs) for k in a.katas}
    for sub in subs:
        if sub.state in ("done", "error") and sub.outcome:
            outcome = KataOutcome.from_dict(sub.outcome)
            latest[sub.kata] = _with(outcome, attempts=uploads[sub.kata],
                                     time_used_s=sub.received_at - (c.joined_at or sub.received_at))
    started = c.joined_at or c.created_at
    deadline = c.deadline or started + a.minutes * 60
    last = max((sub.received_at for sub in subs), default=started)
    outcomes = tuple(latest[k] for k in a.katas if k in latest)
    backend = next((o.backend for o in outcomes if o.backend), a.backend)
    return InterviewReport(f"{c.name} ({c.id})", started, deadline, last,
                           "deadline" if time.time() >= deadline else "submitted", backend,
                           a.secret_seed, outcomes)


def _with(outcome, **changes):
    from dataclasses import replace

    return replace(outcome, **changes)


def report_link(db: Database, base_url: str, candidate_id: str, minutes: float = 60) -> str:
    """A signed link to the candidate's HTML report, valid for `minutes`."""
    expires = int(time.time() + minutes * 60)
    with db.session() as s, s.begin():
        if s.get(Candidate, candidate_id) is None:
            raise UsageError(f"no candidate {candidate_id}",
                             hint="`kata serve admin watch` lists the candidates")
        key = tokens.link_key(s)
    signature = tokens.sign(key, candidate_id, expires)
    return f"{base_url.rstrip('/')}/reports/{candidate_id}?expires={expires}&sig={signature}"


def export(db: Database, assignment_id: str | None, fmt: str) -> str:
    """Every candidate's progress as CSV (one row per candidate and kata) or JSON."""
    rows = progress(db, assignment_id)
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=2)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["assignment", "candidate", "name", "state", "kata", "verdict", "submissions",
                     "late_uploads"])
    for r in rows:
        with db.session() as s:
            katas = s.get(Assignment, r.assignment).katas
        for kata in katas:
            writer.writerow([r.assignment, r.candidate, r.name, r.state, kata,
                             r.verdicts.get(kata, ""), r.submissions, r.late])
    return out.getvalue()
