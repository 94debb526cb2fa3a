"""Mock interviews: a countdown, one workspace per kata, hidden tests revealed only at the end.

A session is a folder (one workspace per kata plus a `.kata-session` marker) and a row in the
store. `kata interview grade` runs the public tests; `kata interview submit`, or the first command
after the deadline, freezes the workspaces (sources copied into the store, files made read-only)
and grades the frozen copies on the hidden tests: the same pipeline as `kata grade`, given the
session's secret seed and the kata's hidden cases. Submitting is resumable: each kata's outcome is
stored as soon as it is known, so a submit killed midway picks up where it stopped.
"""
from __future__ import annotations

import contextlib
import json
import random
import shutil
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.practice.interview_report import InterviewReport, KataOutcome, outcome_from, write_html
from grader.practice.progress import SOURCE_SUFFIXES, record_attempt
from grader.practice.marker import MARKER, session_id_for
from grader.practice.store import Session, Store

REPORT_NAME = "report.html"


@dataclass(frozen=True)
class PublicGrade:
    kata: str  # kata id
    report: object  # grader.results.GradeReport of the public tests
    attempt: int  # 1-based attempt number on this kata in this session
    hidden_cases: int  # how many adversarial hidden cases wait for the submit (never which)
    secret_drawn: int  # how many cases the submit draws with the session's secret seed
    left_s: float  # seconds left on the countdown


def pick_katas(katas: list[str] | None, level: str | None, count: int, seed: int | None) -> list[str]:
    """The katas named, or `count` drawn from a level (all levels when none is given)."""
    available = _catalog_levels()
    if katas:
        unknown = [k for k in katas if k not in available]
        if unknown:
            raise UsageError(f"no kata named {', '.join(unknown)}",
                             hint="run `kata list` to see the katas")
        return list(dict.fromkeys(katas))
    pool = sorted(k for k, lvl in available.items() if level is None or lvl == level)
    if not pool:
        levels = ", ".join(sorted(set(available.values())))
        raise UsageError(f"no kata has level {level!r}", hint=f"levels: {levels}")
    return random.Random(seed).sample(pool, min(count, len(pool)))


def start(katas: list[str], minutes: float, folder: Path | None = None,
          seed: int | None = None) -> Session:
    """Make the session folder and workspaces, record the session, start the countdown."""
    if minutes <= 0:
        raise UsageError("--minutes must be positive")
    session_id = secrets.token_hex(3)
    folder = Path(folder or f"interview-{session_id}").resolve()
    if folder.exists() and any(folder.iterdir()):
        raise UsageError(f"{folder} already exists and is not empty",
                         hint="pick another folder with --dir")
    # --seed makes the whole session reproducible (an interviewer can hand the same one to
    # several people); without it the hidden seed is secret until the report.
    secret_seed = random.Random(seed).getrandbits(62) if seed is not None else secrets.randbits(62)
    workspaces = []
    for kata in katas:
        _make_workspace(kata, folder / kata)
        workspaces.append((kata, str(folder / kata)))
    now = time.time()
    session = Session(session_id, now, now + minutes * 60, str(folder), secret_seed, "open",
                      None, None)
    from grader.practice import deadline

    with Store() as store:
        store.add_session(session, workspaces)
        store.add_event("interview-start", session_id=session_id, detail=",".join(katas))
        for kata, workspace in workspaces:  # the stubs: what is graded if nothing else is seen in time
            deadline.snapshot(store, session, kata, _read_sources(Path(workspace)))
    (folder / MARKER).write_text(json.dumps({"session": session_id}))
    return session


def current(store: Store, where: Path | None = None, session_id: str | None = None) -> Session:
    """The session named, else the one whose folder we are in, else the latest one."""
    session_id = session_id or session_id_for(where or Path.cwd())
    if session_id is None:
        sessions = store.sessions()
        if not sessions:
            raise UsageError("no interview session yet",
                             hint="start one with `kata interview start`")
        return sessions[-1]
    session = store.session(session_id)
    if session is None:
        raise UsageError(f"no interview session {session_id}",
                         hint="`kata interview status` lists the sessions")
    return session


def is_over(session: Session, now: float | None = None) -> bool:
    return session.state != "open" or (now or time.time()) >= session.deadline


def kata_for(store: Store, session: Session, kata: str | None, where: Path | None = None) -> str:
    """The kata named, else the workspace we are in, else the session's only kata."""
    names = [k.kata for k in store.session_katas(session.id)]
    if kata is None:
        here = (where or Path.cwd()).resolve()
        for k in store.session_katas(session.id):
            if here == Path(k.workspace) or Path(k.workspace) in here.parents:
                return k.kata
        if len(names) == 1:
            return names[0]
        raise UsageError(f"session {session.id} has several katas ({', '.join(names)})",
                         hint="name one, or run the command inside its workspace")
    if kata not in names:
        raise UsageError(f"{kata} is not part of session {session.id} ({', '.join(names)})")
    return kata


def grade_public(session: Session, kata: str, backend: str = "auto") -> PublicGrade:
    """The public tests only, on the live workspace; counts as an attempt."""
    if is_over(session):
        raise UsageError(f"interview {session.id} is over",
                         hint="run `kata interview submit` for the final report")
    with Store() as store:
        workspace = next(k.workspace for k in store.session_katas(session.id) if k.kata == kata)
        report = _grade(kata, Path(workspace), backend=backend, hidden=False)
        _, number = record_attempt(store, kata, Path(workspace), report, session_id=session.id,
                                   phase="public")
        from grader.practice import deadline

        deadline.snapshot(store, session, kata, _read_sources(Path(workspace)))
    return PublicGrade(kata, report, number, _hidden_case_count(kata), _drawn_case_count(),
                       session.deadline - time.time())


def _read_sources(workspace: Path) -> dict[str, str]:
    if not workspace.is_dir():
        return {}
    return {p.name: p.read_text(errors="replace") for p in sorted(workspace.iterdir())
            if p.is_file() and p.suffix in SOURCE_SUFFIXES}


def _make_read_only(workspace: Path) -> None:
    for p in workspace.iterdir() if workspace.is_dir() else ():
        if p.is_file():
            p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def freeze(store: Store, session: Session) -> None:
    """Fix every kata's submission in the store, then make the files read-only.

    The submission is the last snapshot kata took before the deadline (grader/practice/deadline.py;
    a submit in time takes one now). Files' mtimes decide nothing; where the workspace differs from
    that snapshot, the report says later edits exist and were not graded ("late-save")."""
    from grader.practice import deadline

    katas = store.session_katas(session.id)
    frozen = {}
    now = time.time()
    for k in katas:
        current = _read_sources(Path(k.workspace))
        deadline.snapshot(store, session, k.kata, current, now)  # nothing after the deadline
        frozen[k.kata], snapped = deadline.at_deadline(store, session, k.kata, current)
        if snapped is not None and frozen[k.kata] != current:
            store.add_event("graded-snapshot", k.kata, session.id, detail=f"{session.deadline - snapped:.3f}")
            # when the later edit was saved is not known (mtimes are not evidence): at most this late
            store.add_event("late-save", k.kata, session.id, detail=f"{max(now - session.deadline, 0.1):.1f}")
    store.freeze_session(session.id, frozen)
    for k in katas:
        _make_read_only(Path(k.workspace))


def submit(session_id: str | None = None, backend: str = "auto", where: Path | None = None,
           progress=None) -> InterviewReport:
    """Freeze (if not yet), grade every kata's frozen sources on public and hidden tests, write
    the HTML report into the session folder. `progress(kata)` is called before each kata."""
    with Store() as store:
        session = current(store, where, session_id)
        reason = "deadline" if time.time() >= session.deadline else "submitted"
        if session.state == "open":
            freeze(store, session)
            store.add_event("interview-submit", session_id=session.id, detail=reason)
        session = store.session(session.id)
        for k in store.session_katas(session.id):
            if k.outcome is not None:
                continue  # graded before an interrupted submit stopped
            if progress:
                progress(k.kata)
            outcome = _grade_frozen(store, session, k.kata, k.frozen_sources or {}, backend)
            store.set_outcome(session.id, k.kata, outcome.to_dict())
        report = report_for(store, session)
        path = write_html(report, Path(session.folder) / REPORT_NAME) \
            if Path(session.folder).is_dir() else None
        store.finish_session(session.id, str(path or ""))
    return report


def _grade_frozen(store: Store, session: Session, kata: str, sources: dict[str, str],
                  backend: str) -> KataOutcome:
    # Grade the copy in the store, not the folder: what was frozen is what gets graded. One run:
    # the pipeline checks the public cases first, then cases drawn with the secret seed, then the
    # kata's hidden cases, so the public verdict comes out of the same run (and, on a GPU, the
    # performance stage is paid once).
    # The copy lives in the session folder (.submitted/KATA), not a temporary one: the report's rerun
    # lines name it, and they must still work after the session has ended.
    with contextlib.ExitStack() as stack:
        if Path(session.folder).is_dir():
            root = Path(session.folder) / ".submitted"
        else:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"kata-{session.id}-")))
        folder = root / kata
        shutil.rmtree(folder, ignore_errors=True)  # a resumed submit grades the frozen sources afresh
        folder.mkdir(parents=True)
        for name, text in sources.items():
            (folder / name).write_text(text)
        (folder / ".kata").write_text(f'kata = "{kata}"\n')
        report = _grade(kata, folder, backend=backend, hidden=True, seed=session.secret_seed)
        page = _grade_page(report, folder, Path(session.folder))
    workspace = next(k.workspace for k in store.session_katas(session.id) if k.kata == kata)
    store.add_attempt(kata, workspace, str(getattr(report, "verdict", "error")),
                      str(getattr(report, "backend", backend)), _hash(sources),
                      score=getattr(report, "score", None),
                      elapsed=(session.submitted_at or time.time()) - session.created_at,
                      session_id=session.id, phase="hidden",
                      headline=str(getattr(report, "headline", "") or ""))
    attempts = store.attempts(kata, session_id=session.id, phase="public")
    last = attempts[-1].time if attempts else (session.submitted_at or time.time())
    late = store.events("late-save", kata=kata, session_id=session.id)
    snapped = store.events("graded-snapshot", kata=kata, session_id=session.id)
    return outcome_from(kata, report, attempts=len(attempts),
                        hints=store.hints_taken(kata, session_id=session.id),
                        time_used_s=min(last, session.deadline) - session.created_at,
                        late_save_s=float(late[-1][1]) if late else 0.0,
                        snapshot_before_s=max(float(snapped[-1][1]), 1e-3) if snapped else 0.0,
                        grade_page=page)


def _grade_page(report, folder: Path, session_folder: Path) -> str:
    """The submit's grade as `kata grade --html` draws it, beside the frozen sources; its path
    relative to the session folder for the report's link ("" when it could not be written)."""
    from grader.performance import report_html

    try:
        page = report_html.write(report, folder / report_html.PAGE_NAME)
        return str(page.relative_to(session_folder))
    except Exception:  # noqa: BLE001 - a picture of the grade never decides the interview
        return ""


def _hash(sources: dict[str, str]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode() + b"\0")
    return digest.hexdigest()[:16]


def report_for(store: Store, session: Session) -> InterviewReport:
    outcomes = tuple(KataOutcome.from_dict(k.outcome) for k in store.session_katas(session.id)
                     if k.outcome is not None)
    submitted = session.submitted_at or time.time()
    backend = next((o.backend for o in outcomes if o.backend), "cpu")
    return InterviewReport(session.id, session.created_at, session.deadline, submitted,
                           "deadline" if submitted >= session.deadline else "submitted",
                           backend, session.secret_seed, outcomes)


# --- the catalogue and the pipeline, as grader/catalog/loader.py and grader/pipeline/ provide them ---
# Kept in these few functions so the session logic above stays independent of their details.

def _catalog_levels() -> dict[str, str]:
    from grader import catalog

    return {kata.id: kata.level for kata in catalog.all_katas()}


def _make_workspace(kata_id: str, folder: Path) -> None:
    """The same workspace `kata start` makes (with its .kata marker, so `kata grade` and
    `kata hint` work inside it too)."""
    from grader.grading import workspace

    workspace.start(kata_id, folder)


def _hidden_case_count(kata_id: str) -> int:
    from grader import catalog

    return len(catalog.load(kata_id).hidden)


def _drawn_case_count() -> int:
    from grader.grading import cases

    return cases.DEFAULT_EXAMPLES


def _grade(kata_id: str, folder: Path, *, backend: str, hidden: bool, seed: int | None = None):
    """One run of the grading pipeline: public tests, or (hidden=True) the kata's hidden cases
    plus cases drawn with the session's secret seed."""
    from grader import pipeline

    return pipeline.grade(kata_id, folder, backend=backend, hidden=hidden, seed=seed, require_sandbox=hidden)
