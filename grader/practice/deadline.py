"""An interview grades the workspace as it was at the deadline.

Nothing runs at the deadline itself, so kata keeps what it needs to know it afterwards: every grade
inside a session before the deadline snapshots the workspace's sources (`.snapshots/KATA.json` in
the session folder, the latest one only). At the submit, a workspace whose files were all last
saved before the deadline is graded as it is (that is how it was at the deadline); one saved later
is graded from the last snapshot before the deadline, and the report says that later edits exist
and were not graded. Without a snapshot the files are graded as saved, and the report says so.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

SNAPSHOTS = ".snapshots"


def _path(session, kata: str) -> Path:
    return Path(session.folder) / SNAPSHOTS / f"{kata}.json"


def read_sources(workspace: Path, suffixes) -> dict[str, str]:
    """{file name: text} of the workspace's source files (as the freeze reads them)."""
    workspace = Path(workspace)
    if not workspace.is_dir():
        return {}
    return {p.name: p.read_text(errors="replace") for p in sorted(workspace.iterdir())
            if p.is_file() and p.suffix in suffixes}


def snapshot(session, kata: str, sources: dict[str, str], now: float | None = None) -> None:
    """Keep `sources` as the kata's latest in-time state (a grade after the deadline keeps none)."""
    now = time.time() if now is None else now
    if now >= session.deadline or not Path(session.folder).is_dir():
        return
    path = _path(session, kata)
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"at": now, "sources": sources}))
        tmp.replace(path)  # a submit never reads half a snapshot
    except OSError:
        pass  # a read-only session folder: the submit grades the files as saved and says so


def at_deadline(session, kata: str, sources: dict[str, str], last_save: float | None):
    """(sources to grade, unix time of the snapshot used or None). `sources`: the files now."""
    if last_save is None or last_save <= session.deadline:
        return sources, None
    try:
        data = json.loads(_path(session, kata).read_text())
        at, kept = float(data["at"]), dict(data["sources"])
    except (OSError, ValueError, KeyError, TypeError):
        return sources, None
    if at >= session.deadline or kept == sources:
        return sources, None
    return kept, at
