"""What a grade notes about itself: the bytes it graded, whether launch.py was sandboxed, whether
it was a diagnostic --case run."""
from __future__ import annotations

from pathlib import Path


def read_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def sources_hash(sub, raw: bytes, launch_text: str | None) -> str:
    """sha256 of the kernel's and the plan's bytes as graded (the store records it)."""
    import hashlib

    digest = hashlib.sha256(sub.kernel.name.encode() + b"\0" + raw + b"\0")
    digest.update(sub.launch.name.encode() + b"\0" + (launch_text or "").encode() + b"\0")
    return digest.hexdigest()[:16]


def sandbox_notes(python_kernel: bool = False) -> tuple[str, ...]:
    """A warning when this machine cannot sandbox launch.py fully (docs/sandbox.md), and for a
    Triton or numba kernel.py what of its process's jail (scratch quota, process cap) it lacks."""
    from harness.sandbox import jail, os_sandbox

    notes = []
    missing = os_sandbox.probe()["missing"]
    if missing:
        notes.append("launch.py ran without the full OS sandbox (" + "; ".join(missing) + "): practice "
                     "grades still count, `kata interview submit` refuses on this machine")
    unjailed = jail.probe() if python_kernel else []
    if unjailed:
        notes.append("kernel.py's process ran with weaker limits here: " + "; ".join(unjailed))
    return tuple(notes)


def diagnostic(case: dict | None) -> str:
    return "" if case is None else (" (a --case run is diagnostic: it never marks the kata passing; "
                                    "`kata grade` without --case grades it)")


def count(n: int, noun: str) -> str:
    """'1 case', '26 cases'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def as_typed(folder: Path) -> str:
    """A folder as the learner would type it here: '.', a relative path, else the absolute one
    (`kata start ID FOLDER --force` must name the workspace, or it makes one inside it)."""
    try:
        rel = Path(folder).resolve().relative_to(Path.cwd().resolve())
    except (ValueError, OSError):
        return str(Path(folder).resolve())
    return str(rel) if str(rel) != "." else "."


def compiler(compiled) -> str:
    """Who compiled the kernel, as the report's backend line names it: every grade says so, and a
    clang grade (where NVRTC is missing, or KATA_FRONTEND=clang) says why."""
    if compiled.frontend == "nvrtc":
        major, minor = compiled.nvrtc_version
        return f"NVRTC {major}.{minor}" if major else "NVRTC"
    why = next((n[len(f"compiled with {compiled.frontend} "):] for n in compiled.notes
                if n.startswith(f"compiled with {compiled.frontend} (")), "")
    return f"{compiled.frontend} {why}".strip()
