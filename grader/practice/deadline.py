"""An interview grades the workspace as kata saw it last before the deadline.

Nothing runs at the deadline itself, so kata records what it sees while the session runs: when it
starts (the stubs), at every grade inside it, and at a submit in time, it snapshots every kata's
source files. A snapshot is content-addressed (each file's bytes stored once under its sha256 in
kata's data folder, the snapshot an event in kata's store at the grader's clock), and at the
submit the kata is graded from the last snapshot taken before the deadline, its files checked
against their hashes. Files' mtimes decide nothing (a plan or a learner can set them), nor does
anything in the session folder (the `.snapshots` files of older versions are ignored). Where the
workspace differs from that snapshot at the submit, the report says that later edits exist and
were not graded. docs/threat-model.md says what this can and cannot guarantee on a machine the
learner owns.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

EVENT = "snapshot"


def _blobs() -> Path:
    from grader.practice.store import default_home

    return default_home() / "snapshots"


def read_sources(workspace: Path, suffixes) -> dict[str, str]:
    """{file name: text} of the workspace's source files (as the freeze reads them)."""
    workspace = Path(workspace)
    if not workspace.is_dir():
        return {}
    return {p.name: p.read_text(errors="replace") for p in sorted(workspace.iterdir())
            if p.is_file() and not p.is_symlink() and p.suffix in suffixes}


def _put(data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    path = _blobs() / digest[:2] / digest
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{digest}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
    return digest


def _get(digest: str) -> str | None:
    try:
        data = (_blobs() / digest[:2] / digest).read_bytes()
    except (OSError, ValueError):
        return None
    return data.decode("utf-8", "replace") if hashlib.sha256(data).hexdigest() == digest else None


def snapshot(store, session, kata: str, sources: dict[str, str], now: float | None = None) -> None:
    """Record `sources` as the kata's state now, if now is before the deadline."""
    now = time.time() if now is None else now
    if now >= session.deadline:
        return
    try:
        files = {name: _put(text.encode()) for name, text in sources.items()}
    except OSError:
        return  # an unwritable data folder: the submit grades the last snapshot it has
    store.add_event(EVENT, kata, session.id, detail=json.dumps({"files": files}))


def at_deadline(store, session, kata: str, sources: dict[str, str]):
    """(sources to grade, the grader's time of the snapshot used, or None when there is none).
    The last snapshot before the deadline whose every file is intact; `sources` (the files now)
    only for a session with no snapshot at all (one started by an older kata)."""
    for at, detail in reversed(store.events(EVENT, kata=kata, session_id=session.id)):
        if at >= session.deadline:
            continue
        try:
            files = json.loads(detail)["files"]
            kept = {str(name): _get(str(digest)) for name, digest in files.items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if all(text is not None for text in kept.values()):
            return kept, at
    return sources, None
