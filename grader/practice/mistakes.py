"""`kata mistakes ID`: a kata's classic mistakes, each as its diff against the solution and what
kata reports when it grades it, so a learner who passed sees how each bug looks and what catches it.

The report is the grade's own terminal text (grader/grading/report.py), cut before the resources
and counters, from a CPU grade of the materialised wrong kernel. Grading takes seconds per mistake,
so the text is cached in the data directory, keyed by everything that could change it (the wrong
kernel's source and plan, the kata's files, kata's version).
"""
from __future__ import annotations

import hashlib
import io
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from grader import catalog
from grader.catalog import wrong

#: the report's sections that say what is wrong end before these lines
_CUT = ("  resources", "  memory efficiency", "  sanitizer", "  backend:")


@dataclass(frozen=True)
class Shown:
    mistake: wrong.Mistake
    diff: str  # the bug as a unified diff against the solution
    report: str  # what `kata grade` prints for it (verdict, failing case, findings)
    cached: bool  # the report came from the cache


def show(kata_id: str, home: Path, on_grade=None) -> list[Shown]:
    """Every mistake of the kata with its diff and report; on_grade(name) before each fresh grade."""
    kata = catalog.load(kata_id)
    cache = home / "mistakes"
    out = []
    for mistake in wrong.mistakes(kata_id, kata.solution_dir):
        path = cache / f"{kata_id}.{mistake.name}.{_key(kata, mistake)}.txt"
        cached = path.is_file()
        if cached:
            text = path.read_text()
        else:
            if on_grade:
                on_grade(mistake.name)
            text = _graded(kata_id, mistake.name)
            try:
                cache.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            except OSError:
                pass  # an unwritable cache costs a regrade next time, nothing else
        out.append(Shown(mistake, mistake.diff(), text, cached))
    return out


def _graded(kata_id: str, name: str) -> str:
    from grader import pipeline
    from grader.grading import report as view
    from grader.terminal import Terminal

    with tempfile.TemporaryDirectory(prefix="kata-mistake-") as tmp:
        # without its two header lines, so the report's lines are the diff's and the solution's
        folder = wrong.materialise(kata_id, name, Path(tmp) / name, header=False)
        graded = pipeline.grade(kata_id, folder, backend="cpu")
        buffer = io.StringIO()
        view.render(graded, Terminal(file=buffer, color_system=None))
    lines = []
    for line in buffer.getvalue().splitlines():
        if line.startswith(_CUT) or line.startswith("  rerun:"):
            if line.startswith(_CUT):
                break
            continue  # the rerun command names a temporary folder
        lines.append(line)
    return "\n".join(lines).rstrip() + "\n"


def _key(kata, mistake: wrong.Mistake) -> str:
    digest = hashlib.sha256(b"unnumbered-header")  # reports cached before lines matched the diff are stale
    try:
        digest.update(version("kata").encode())
    except PackageNotFoundError:
        pass
    files = [mistake.path, mistake.launch or kata.solution_dir / "launch.py", kata.solution_dir / "kernel.cu",
             *(kata.folder / f for f in catalog.KATA_FILES)]
    for f in files:
        if f.is_file():
            digest.update(f.read_bytes())
    return digest.hexdigest()[:12]
