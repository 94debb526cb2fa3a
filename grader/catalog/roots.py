"""Folders of katas beside the package's own: the private katas a `kata serve` server keeps in its
database, and the public part of them a candidate's session holds.

Kept in the environment (KATA_EXTRA_KATAS, folders separated by os.pathsep), so the grader's own
subprocesses (bench inputs, a server's grading process) find the same katas as the process that
started them.
"""
from __future__ import annotations

import os
from pathlib import Path

import katas as _katas_pkg

ENV = "KATA_EXTRA_KATAS"


def extra_roots() -> list[Path]:
    return [Path(p) for p in os.environ.get(ENV, "").split(os.pathsep) if p]


def add(folder) -> bool:
    """Add `folder` first among the extra roots; False when it was there already."""
    folder = Path(folder).resolve()
    known = extra_roots()
    if folder in known:
        return False
    os.environ[ENV] = os.pathsep.join(str(p) for p in (folder, *known))
    return True


def katas_root() -> Path:
    return Path(_katas_pkg.__file__).parent


def builtin_ids() -> list[str]:
    """The katas the package itself ships (open source: their solutions too)."""
    return sorted(p.name for p in katas_root().iterdir() if (p / "kata.toml").is_file())


def folders() -> dict[str, Path]:
    """Every kata's folder by id: the package's own, then the extra roots', which never replace a
    built-in kata (`kata serve admin kata add` refuses such an id)."""
    found: dict[str, Path] = {}
    for root in (katas_root(), *extra_roots()):
        if root.is_dir():
            for p in sorted(root.iterdir()):
                if (p / "kata.toml").is_file():
                    found.setdefault(p.name, p)
    return found
