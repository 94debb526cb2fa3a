"""`kata dev check`: the catalogue tested like code (rustlings' dev check, GPU MODE's wrong/ kernels).

Per kata: the files load and validate, the stub has TODOs and fails, the solution passes on public,
drawn and hidden cases, every wrong/ kernel fails for the reason its `// kata-expect:` line names,
and no stray files sit beside them.
"""
from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.emulator.findings import KINDS

from grader import catalog
from grader.errors import KataError

EXPECTABLE = ("compile-error", "wrong-answer", "launch-error", "crash", "timeout", *KINDS)
_EXPECT = re.compile(r"^//\s*kata-expect:\s*([\w-]+)\s*$")
_SOLUTION_FILES = {"kernel.cu", "launch.py", "README.md", "wrong", "__pycache__"}


@dataclass(frozen=True)
class Check:
    kata: str
    item: str  # what was checked: "files", "stub", "solution", "wrong/<name>.cu"
    expected: str  # what should happen
    got: str  # what happened
    ok: bool
    detail: str = ""  # the grade's headline or the problem found


def check(kata_ids: list[str] | None = None, backend: str = "cpu", on_result=None) -> list[Check]:
    """Every check of every kata named (all when None); on_result(Check) is called as each lands."""
    results: list[Check] = []

    def add(c: Check) -> None:
        results.append(c)
        if on_result:
            on_result(c)

    for kata_id in kata_ids or catalog.ids():
        try:
            kata = catalog.load(kata_id)
        except KataError as exc:
            add(Check(kata_id, "kata.toml", "valid", "invalid", False, exc.message))
            continue
        for c in _static(kata):
            add(c)
        for c in _graded(kata, backend):
            add(c)
    return results


def _static(kata) -> list[Check]:
    out = []
    stub = kata.file("stub.cu").read_text()
    out.append(Check(kata.id, "stub.cu", "has TODO", "has TODO" if "TODO" in stub else "no TODO", "TODO" in stub))
    stray = sorted(p.name for p in kata.folder.iterdir() if p.name not in (*catalog.KATA_FILES, "__pycache__"))
    sol = kata.solution_dir
    if sol.is_dir():
        stray += sorted(f"solutions/{p.name}" for p in sol.iterdir() if p.name not in _SOLUTION_FILES)
        wrong = sol / "wrong"
        if wrong.is_dir():
            for p in wrong.iterdir():
                base = p.name.removesuffix(".launch.py")
                ok = p.suffix == ".cu" or (p.name.endswith(".launch.py") and (wrong / f"{base}.cu").is_file())
                if not ok and p.name != "__pycache__":
                    stray.append(f"solutions/wrong/{p.name}")
    out.append(Check(kata.id, "files", "no stray files", ", ".join(stray) or "none", not stray))
    has_solution = (sol / "kernel.cu").is_file() and (sol / "launch.py").is_file()
    out.append(Check(kata.id, "solution files", "kernel.cu + launch.py", "present" if has_solution else "missing",
                     has_solution))
    wrongs = sorted((sol / "wrong").glob("*.cu")) if (sol / "wrong").is_dir() else []
    out.append(Check(kata.id, "wrong kernels", ">= 4", str(len(wrongs)), len(wrongs) >= 4))
    return out


def expectation(path: Path) -> tuple[str | None, str]:
    """(kind, why) from a wrong kernel's first two lines."""
    lines = path.read_text().splitlines()
    m = _EXPECT.match(lines[0].strip()) if lines else None
    why = lines[1].lstrip("/ ").strip() if len(lines) > 1 and lines[1].startswith("//") else ""
    return (m[1] if m else None), why


def _graded(kata, backend: str) -> list[Check]:
    from grader import pipeline

    out = []
    sol = kata.solution_dir
    with tempfile.TemporaryDirectory(prefix="kata-dev-") as tmp:
        ws = Path(tmp) / "stub"
        ws.mkdir()
        shutil.copy(kata.file("stub.cu"), ws / "kernel.cu")
        shutil.copy(kata.file("launch.py"), ws / "launch.py")
        report = pipeline.grade(kata.id, ws, backend=backend)
        out.append(Check(kata.id, "stub", "fails", report.verdict, report.verdict == "fail", report.headline))
        if (sol / "kernel.cu").is_file():
            report = pipeline.grade(kata.id, sol, backend=backend, hidden=True)
            out.append(Check(kata.id, "solution", "passes (public, drawn, hidden)", report.verdict,
                             report.verdict == "pass", report.headline))
        for path in sorted((sol / "wrong").glob("*.cu")) if (sol / "wrong").is_dir() else []:
            kind, why = expectation(path)
            item = f"wrong/{path.name}"
            if kind not in EXPECTABLE:
                out.append(Check(kata.id, item, "a kata-expect line", str(kind), False,
                                 f"first line must be `// kata-expect: KIND`, KIND one of {', '.join(EXPECTABLE)}"))
                continue
            if not why:
                out.append(Check(kata.id, item, "a second line saying why", "none", False,
                                 "second line: `// <one sentence on the bug>`"))
                continue
            ws = Path(tmp) / path.stem
            ws.mkdir()
            shutil.copy(path, ws / "kernel.cu")
            plan = path.with_name(path.stem + ".launch.py")
            shutil.copy(plan if plan.is_file() else sol / "launch.py", ws / "launch.py")
            report = pipeline.grade(kata.id, ws, backend=backend)
            got = ", ".join(report.reasons) or report.verdict
            # The same demand on both backends: a GPU grade runs the sanitizer on the CPU emulator.
            ok = report.verdict == "fail" and kind in report.reasons
            out.append(Check(kata.id, item, kind, got, ok, report.headline))
    return out
