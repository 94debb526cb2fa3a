"""Private katas: an interviewer's own kata folders, kept in the server's database and nowhere else.

`kata serve admin kata add DIR` validates the folder with `kata dev check`'s own checks (the files
load, the stub has a TODO and fails, the solution passes its public, drawn and hidden cases) and
stores its files. Every server process sharing the database, and every grading process it starts
(on this host or a Ray worker), writes them to a private folder and loads the kata from there.

A candidate who joins receives the public part (public_files): statement, stub, launch plans,
reference.py (the local public grade computes the expected outputs with it: it is the problem's
numpy definition, not a kernel) and kata.toml without its hidden cases and without its comments
(which may talk about them). The hidden cases and the solution never leave the server.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sqlalchemy import select

from grader.errors import KataError, UsageError
from grader.server.database import Database
from grader.server.models import Assignment, PrivateKata

SOLUTION = "solution"  # the solution folder inside a private kata's folder (never sent)
MAX_BYTES = 2 * 1024 * 1024  # a kata folder's text, all files together
_SKIPPED = ("__pycache__", ".pytest_cache", ".DS_Store")
_materialised: dict[str, Path] = {}  # sha256 → the root folder written in this process
_cache_root: Path | None = None


@dataclass(frozen=True)
class Added:
    kata: str  # the kata id
    files: int  # files stored
    checks: tuple  # devcheck.audit.Check, each passed


def read_folder(folder: Path) -> dict[str, str]:
    """Every text file of a kata folder, by its path inside it (POSIX separators)."""
    files: dict[str, str] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in _SKIPPED for part in rel.parts) or path.suffix == ".pyc" or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{path}: not a UTF-8 text file; a kata folder holds text files only",
                             hint="remove it, or keep binary data out of the kata folder") from None
        total += len(text.encode())
        if total > MAX_BYTES:
            raise UsageError(f"{folder}: more than {MAX_BYTES // 1024} KiB of files",
                             hint="a kata's inputs come from reference.generate(), not from data files")
        files[rel.as_posix()] = text
    return files


def add(db: Database, folder: Path, *, grade: bool = True, backend: str = "cpu", on_check=None) -> Added:
    """Validate the kata folder and store it; UsageError naming the file when it is not a kata."""
    from grader import catalog
    from grader.devcheck import audit

    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder", hint="kata serve admin kata add DIR (a kata folder)")
    kata_id = folder.name
    if kata_id in catalog.builtin_ids():
        raise UsageError(f"{kata_id} is a kata the package ships (its files are public)",
                         hint="rename your kata's folder and its kata.toml id")
    with db.session() as s:
        if s.get(PrivateKata, kata_id) is not None:
            raise UsageError(f"this server already has a private kata {kata_id}",
                             hint=f"kata serve admin kata remove {kata_id}, then add it again")
    files = read_folder(folder)
    try:
        kata = catalog.load_folder(folder)
    except KataError as exc:
        raise UsageError(f"{exc.message}", hint="fix the file named above (docs/kata-format.md), then run "
                                                "`kata serve admin kata add` again") from None
    checks = audit.file_checks(kata, min_wrong=0)
    if grade:
        catalog.add_root(folder.parent)  # the pipeline loads katas by id
        checks += audit.graded_checks(kata, backend)
    for check in checks:
        if on_check:
            on_check(check)
    failed = [c for c in checks if not c.ok]
    if failed:
        lines = "; ".join(f"{c.item}: expected {c.expected}, got {c.got}" + (f" ({c.detail})" if c.detail else "")
                          for c in failed)
        raise UsageError(f"{folder}: {lines}", hint="fix the kata, then run `kata serve admin kata add` again "
                                                    "(`--no-grade` skips grading the stub and solution)")
    with db.session() as s, s.begin():
        s.add(PrivateKata(id=kata_id, files=files, sha256=_digest(files), added_at=time.time()))
    return Added(kata_id, len(files), tuple(checks))


def _digest(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return digest.hexdigest()


def remove(db: Database, kata_id: str) -> None:
    with db.session() as s, s.begin():
        found = s.get(PrivateKata, kata_id)
        if found is None:
            raise UsageError(f"no private kata {kata_id} on this server", hint="kata serve admin kata list")
        users = [a.name for a in s.scalars(select(Assignment)) if kata_id in a.katas]
        if users:
            raise UsageError(f"{kata_id} is part of {len(users)} assignment(s) ({', '.join(users[:3])})",
                             hint="its candidates need it until they are graded; keep it")
        s.delete(found)


def listing(db: Database) -> list[PrivateKata]:
    with db.session() as s:
        return list(s.scalars(select(PrivateKata).order_by(PrivateKata.id)))


def files_of(db: Database, kata_id: str) -> dict[str, str] | None:
    """The private kata's files, or None for a kata of the package."""
    with db.session() as s:
        found = s.get(PrivateKata, kata_id)
        return dict(found.files) if found is not None else None


def grading_files(files: dict[str, str]) -> dict[str, str]:
    """What a grading process needs: all but the solution."""
    return {name: text for name, text in files.items() if PurePosixPath(name).parts[0] != SOLUTION}


def public_files(files: dict[str, str]) -> dict[str, str]:
    """What a candidate receives: all but the solution, kata.toml without hidden cases or comments."""
    import tomli_w

    out = grading_files(files)
    data = tomllib.loads(out["kata.toml"])
    data.get("cases", {}).pop("hidden", None)
    out["kata.toml"] = tomli_w.dumps(data)
    return out


def register_all(db: Database) -> None:
    """Make every private kata loadable by id in this process (catalog.add_root)."""
    for found in listing(db):
        _materialise(found.id, found.sha256, found.files)


def register(db: Database, kata_id: str) -> bool:
    """The one kata, if it is private (a kata added after this process started); False otherwise."""
    with db.session() as s:
        found = s.get(PrivateKata, kata_id)
        if found is None:
            return False
        _materialise(found.id, found.sha256, found.files)
    return True


def candidate_copy(s, kata_id: str) -> tuple[dict[str, str], tuple[str, ...]] | None:
    """For a private kata (None for the package's): the files a joining candidate receives, and the
    texts that must never reach them (its solution's files), made loadable in this process first."""
    found = s.get(PrivateKata, kata_id)
    if found is None:
        return None
    _materialise(found.id, found.sha256, found.files)
    secret = tuple(text for name, text in found.files.items()
                   if PurePosixPath(name).parts[0] == SOLUTION and text.strip())
    return public_files(found.files), secret


def _materialise(kata_id: str, sha: str, files: dict[str, str]) -> Path:
    global _cache_root
    from grader import catalog

    if sha in _materialised:
        return _materialised[sha]
    if _cache_root is None:
        _cache_root = Path(tempfile.mkdtemp(prefix="kata-private-katas-"))  # mode 700: this user's only
    root = _cache_root / sha[:16]
    write_files(root / kata_id, files)
    catalog.add_root(root)
    _materialised[sha] = root
    return root


def write_files(folder: Path, files: dict[str, str]) -> None:
    """Write a kata's files under folder; a name that would land outside it is refused."""
    for name, text in files.items():
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or not rel.parts:
            raise UsageError(f"refused to write {name!r}: a kata's file names stay inside its folder")
        path = folder.joinpath(*rel.parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    os.chmod(folder, 0o700)
