"""The bridge from grading to the learner's history (attempts, clock, hints).

The grade command calls these; the store behind them lives in grader/store.py.
"""
from __future__ import annotations

from pathlib import Path


def on_start(kata_id: str, workspace: Path) -> None:
    """A workspace was made: start the practice clock."""


def on_grade(kata_id: str, workspace: Path, report) -> str | None:
    """Record one attempt (report: grader.pipeline.GradeReport); return a line for the terminal
    such as 'attempt 3 · 12 min since start', or None."""
    return None


def next_hint(kata_id: str, hints: list[str]) -> tuple[int, str] | None:
    """Reveal and record the next hint: (1-based index, text), or None when all are shown."""
    return (1, hints[0]) if hints else None
