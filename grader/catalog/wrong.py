"""The classic mistakes of a kata: `solutions/<id>/wrong/<bug>.patch`, each a unified diff against the
solution's kernel.cu, so the bug is the diff and nothing else.

A patch file starts with the two lines every wrong kernel has (they stay the kernel's first lines):

    // kata-expect: race-raw
    // The tree step reads a neighbour's partial sum before the barrier that publishes it.
    --- a/kernel.cu
    +++ b/kernel.cu
    @@ -12,7 +12,6 @@
    ...

A mistake that needs a different algorithm from the solution's stays a full `<bug>.cu`, whose
last line says why (`// full file: ...`; last, so the kernel's line numbers stay those of a file
with the two header lines). `<bug>.launch.py` beside either replaces the
solution's launch plan. Hunks must match the solution exactly: when the solution changes and a
patch no longer applies, `materialise` raises a CatalogError naming the patch and the hunk, and
`kata dev check` reports it.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.errors import CatalogError
from harness.frontends import languages

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_EXPECT = re.compile(r"^(?://|#)\s*kata-expect:\s*([\w-]+)\s*$")
#: a Triton or numba solution (solutions/<id>/<lang>/) has wrong/<bug>.patch of its kernel.py, `#` comments
SUFFIXES = (".patch", ".cu", ".py")
#: the Python languages' solution folders under solutions/<id>/ (harness/frontends/languages.py)
LANGUAGE_DIRS = tuple(lang.solution_dir for lang in languages.PYTHON)


def solution_kernel(solution_dir: Path) -> Path:
    """kernel.cu, or kernel.py in a Python language's solution folder."""
    py = Path(solution_dir) / "kernel.py"
    return py if py.is_file() else Path(solution_dir) / "kernel.cu"


@dataclass(frozen=True)
class Mistake:
    kata: str
    name: str  # the bug's name: the file name without its suffix
    path: Path  # wrong/<name>.patch or wrong/<name>.cu
    expect: str | None  # the kata-expect kind (None when the first line lacks it)
    why: str  # the second line: one sentence on the bug
    launch: Path | None  # wrong/<name>.launch.py when the mistake has its own plan

    @property
    def is_patch(self) -> bool:
        return self.path.suffix == ".patch"

    def diff(self) -> str:
        """The bug as a unified diff against the solution (for a full file, computed here)."""
        if self.is_patch:
            text = self.path.read_text()
            return text[text.index("--- "):] if "--- " in text else text
        import difflib

        solution = solution_kernel(self.path.parent.parent).read_text().splitlines(True)
        return "".join(difflib.unified_diff(solution, _body_lines(self.path.read_text()),
                                            "a/kernel.cu", "b/kernel.cu"))


def mistakes(kata_id: str, solution_dir: Path) -> list[Mistake]:
    """Every wrong kernel of a kata, sorted by name."""
    folder = solution_dir / "wrong"
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        if path.suffix not in SUFFIXES or path.name.endswith(".launch.py"):
            continue
        lines = path.read_text().splitlines()
        m = _EXPECT.match(lines[0].strip()) if lines else None
        why = lines[1].lstrip("/# ").strip() if len(lines) > 1 and lines[1].startswith(("//", "#")) else ""
        plan = path.with_name(path.stem + ".launch.py")
        found.append(Mistake(kata_id, path.stem, path, m[1] if m else None, why,
                             plan if plan.is_file() else None))
    return found


def kernel_source(mistake: Mistake, header: bool = True) -> str:
    """The wrong kernel's full source: the patch applied to the solution (header lines first,
    unless header is False: then its lines are numbered as the diff's and the solution's)."""
    text = mistake.path.read_text()
    if not mistake.is_patch:
        return text if header else "".join(_body_lines(text))
    solution = solution_kernel(mistake.path.parent.parent)
    cut = text.find("\n--- ") + 1  # 0 when the patch has no hunks (the bug is in its launch.py)
    head, diff = (text[:cut], text[cut:]) if cut else (text, "")
    return (head if header else "") + apply(solution.read_text(), diff, where=mistake.path)


def materialise(kata_id: str, name: str, dest: Path | None = None, lang: str = "cuda",
                header: bool = True) -> Path:
    """A folder holding the wrong kernel as kernel.cu (kernel.py for triton, numba) and its
    launch.py, ready to grade."""
    from grader import catalog

    kata = catalog.load(kata_id)
    sol = kata.solution_dir if lang == "cuda" else kata.solution_dir / lang
    found = {m.name: m for m in mistakes(kata_id, sol)}
    if name not in found:
        raise CatalogError(f"{kata_id} has no wrong kernel {name!r}; it has: {', '.join(found) or 'none'}")
    mistake = found[name]
    folder = Path(dest) if dest else Path(tempfile.mkdtemp(prefix=f"kata-{kata_id}-")) / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / solution_kernel(sol).name).write_text(kernel_source(mistake, header))
    shutil.copy(mistake.launch or sol / "launch.py", folder / "launch.py")
    return folder


def apply(original: str, diff: str, *, where: Path) -> str:
    """Apply a unified diff exactly: every context and removed line must match the original."""
    old = original.splitlines(True)
    out: list[str] = []
    at = 0  # next line of `old` not yet copied
    lines = diff.splitlines(True)
    i = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        i += 1  # the ---/+++ file header
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            raise CatalogError(f"{where}: line {i + 1} of the diff is not a hunk header: {lines[i].rstrip()!r}")
        start = int(m[1]) - (1 if int(m[2] if m[2] is not None else 1) else 0)
        header = lines[i].rstrip()
        if start < at:
            raise CatalogError(f"{where}: hunk {header} overlaps the one before it")
        out += old[at:start]
        at = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][:1], lines[i][1:]
            if tag == "\\":  # "\ No newline at end of file"
                if out and out[-1].endswith("\n"):
                    out[-1] = out[-1][:-1]
            elif tag == "+":
                out.append(text)
            elif tag in (" ", "-"):
                if at >= len(old) or old[at].rstrip("\n") != text.rstrip("\n"):
                    got = old[at].rstrip() if at < len(old) else "end of file"
                    raise CatalogError(
                        f"{where}: hunk {header} no longer applies to the solution's kernel.cu: "
                        f"line {at + 1} is {got!r}, the patch expects {text.rstrip()!r}. Re-make the "
                        f"patch against the new solution (diff -u kernel.cu fixed.cu).")
                if tag == " ":
                    out.append(old[at])
                at += 1
            elif lines[i].strip():
                raise CatalogError(f"{where}: unexpected line in hunk {header}: {lines[i].rstrip()!r}")
            i += 1
    return "".join(out + old[at:])


FULL_FILE = "// full file:"


def full_file_reason(mistake: Mistake) -> str | None:
    """Why a mistake is a whole file rather than a patch (its last line), or None."""
    if mistake.is_patch:
        return None
    last = mistake.path.read_text().rstrip("\n").rsplit("\n", 1)[-1]
    return last[len(FULL_FILE):].strip() if last.startswith(FULL_FILE) else None


def _body_lines(text: str) -> list[str]:
    """A full-file wrong kernel less its two header lines and its closing 'full file' line."""
    lines = text.splitlines(True)[2:]
    return lines[:-1] if lines and lines[-1].startswith(FULL_FILE) else lines
