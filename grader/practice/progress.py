"""The bridge from grading to the learner's history (attempts, clock, hints).

The start, grade and hint commands call on_start, on_grade and next_hint; `kata list` and
`kata status` call summary. Everything is stored by grader/practice/store.py. A workspace inside an
interview session folder records against that session, so the same `kata grade` and `kata hint`
count in the session's report.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from grader.practice.marker import session_id_for
from grader.practice.store import Store

# Files whose content identifies a submission; anything else in a workspace (notes, backups) is not.
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".py")


@dataclass(frozen=True)
class ProgressRow:
    kata: str  # kata id
    state: str  # "not started" | "started" | "failing" | "passing"
    attempts: int  # practice grades since the last reset
    best_score: float | None  # best score among passing attempts (None: no pass, or CPU only)
    hints: int  # hints revealed since the last reset
    last_verdict: str | None  # "pass" | "fail" | "error" of the latest attempt
    last_time: float | None  # unix time of the latest attempt
    gave_up: bool  # `kata solution ID --give-up` was used
    workspace: str | None  # the latest practice workspace, if any


def source_hash(workspace: Path) -> str:
    """sha256 over the workspace's source files (names and contents), stable across machines."""
    digest = hashlib.sha256()
    folder = Path(workspace)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SOURCE_SUFFIXES) \
        if folder.is_dir() else []
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def format_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


def _open() -> Store:
    return Store()


def _session_of(workspace: Path) -> str | None:
    return session_id_for(workspace)


def _is_shipped_content(workspace: Path) -> bool:
    """Grading the shipped solutions or stubs (as `kata dev check` does) is not practice."""
    import katas
    import solutions

    roots = [Path(p).resolve() for module in (katas, solutions) for p in module.__path__]
    return any(workspace == root or root in workspace.parents for root in roots)


def _report_facts(report) -> tuple[str, str, float | None, str]:
    """(verdict, backend, score, headline) from a grader.results.GradeReport."""
    verdict = str(getattr(report, "verdict", "error"))
    backend = str(getattr(report, "backend", "") or "cpu")
    score = getattr(report, "score", None)
    if score is None:
        performance = getattr(report, "performance", None)
        score = getattr(performance, "score", None)
    headline = getattr(report, "headline", "") or ""
    return verdict, backend, (float(score) if score is not None else None), str(headline)


def require_store() -> None:
    """Fail now (StoreError, exit 3) if the history cannot take a write, before a command makes
    or changes anything it would then be unable to record."""
    with _open() as store:
        store.check_writable()


def on_start(kata_id: str, workspace: Path) -> None:
    """A workspace was made: start the practice clock."""
    with _open() as store:
        store.add_workspace(kata_id, str(Path(workspace).resolve()))
        store.add_event("start", kata_id, detail=str(Path(workspace).resolve()))


def record_attempt(store: Store, kata_id: str, workspace: Path, report, *,
                   session_id: str | None = None, phase: str = "practice"):
    """Store one graded attempt; returns (Attempt, its 1-based number in this workspace)."""
    path = str(Path(workspace).resolve())
    ws = store.workspace_for_path(path)
    if ws is None:  # graded without `kata start`: the clock starts at the first grade
        ws = store.add_workspace(kata_id, path, session_id=session_id)
    verdict, backend, score, headline = _report_facts(report)
    now = time.time()
    # The hash of the bytes the grade read (the files may have changed since); older reports lack it.
    digest = getattr(report, "sources", "") or source_hash(Path(workspace))
    attempt = store.add_attempt(kata_id, path, verdict, backend, digest,
                                score=score, elapsed=now - ws.started_at, session_id=session_id,
                                phase=phase, headline=headline, at=now)
    number = len(store.attempts(kata_id, workspace=path, since=ws.started_at))
    return attempt, number


def on_grade(kata_id: str, workspace: Path, report) -> str | None:
    """Record one attempt (report: grader.results.GradeReport); return a line for the terminal
    such as 'attempt 3 · 12 min since start', or None."""
    workspace = Path(workspace).resolve()
    if _is_shipped_content(workspace):
        return None
    session_id = _session_of(workspace)
    with _open() as store:
        phase = "diagnostic" if getattr(report, "diagnostic", False) else "public" if session_id else "practice"
        attempt, number = record_attempt(store, kata_id, workspace, report, session_id=session_id, phase=phase)
        line = f"attempt {number} · {format_duration(attempt.elapsed or 0)} since start"
        if session_id:
            session = store.session(session_id)
            if session is not None and phase != "diagnostic":
                from grader.practice import deadline

                deadline.snapshot(store, session, kata_id, deadline.read_sources(workspace, SOURCE_SUFFIXES))
            if session is not None:
                left = session.deadline - time.time()
                line += (f" · {format_duration(left)} left in interview {session_id}" if left > 0
                         else f" · interview {session_id} is over: run `kata interview submit`")
        return line


def next_hint(kata_id: str, hints: list[str], workspace: Path | None = None) -> tuple[int, str] | None:
    """Reveal and record the next hint: (1-based index, text), or None when all are shown.

    Hints count per practice run (since the last reset) or per interview session, decided by the
    workspace (default: the folder the learner is in)."""
    session_id = _session_of(Path(workspace) if workspace is not None else Path.cwd())
    with _open() as store:
        since = None if session_id else store.last_event("reset", kata_id)
        taken = store.hints_taken(kata_id, since=since, session_id=session_id)
        if taken >= len(hints):
            return None
        store.add_hint(kata_id, taken + 1, session_id=session_id)
        return taken + 1, hints[taken]


def has_passed(store: Store, kata_id: str) -> bool:
    """Passed in practice, or on the hidden tests of an interview."""
    return any(a.verdict == "pass" and a.phase in ("practice", "hidden")
               for a in store.attempts(kata_id))


def row(store: Store, kata_id: str) -> ProgressRow:
    since = store.last_event("reset", kata_id)
    attempts = store.attempts(kata_id, phase="practice", since=since)
    workspace = store.latest_workspace(kata_id)
    started = workspace is not None and (since is None or workspace.started_at >= since)
    passes = [a for a in attempts if a.verdict == "pass"]
    if passes:
        state = "passing"
    elif attempts:
        state = "failing"
    else:
        state = "started" if started else "not started"
    scores = [a.score for a in passes if a.score is not None]
    return ProgressRow(
        kata=kata_id, state=state, attempts=len(attempts),
        best_score=max(scores) if scores else None,
        hints=store.hints_taken(kata_id, since=since),
        last_verdict=attempts[-1].verdict if attempts else None,
        last_time=attempts[-1].time if attempts else None,
        gave_up=store.last_event("give-up", kata_id) is not None,
        workspace=workspace.path if workspace else None)


def summary(kata_ids: list[str]) -> dict[str, ProgressRow]:
    """Progress per kata, for `kata list` and `kata status`."""
    with _open() as store:
        return {kata_id: row(store, kata_id) for kata_id in kata_ids}
