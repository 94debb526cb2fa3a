"""`kata dev check`: the catalogue tested like code (rustlings' dev check, GPU MODE's wrong/ kernels).

Per kata: the files load and validate, the stub has TODOs and fails, the solution passes on public,
drawn and hidden cases, every wrong/ kernel fails for the reason its `// kata-expect:` line names,
and no stray files sit beside them.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.emulator.findings import KINDS

from grader import catalog
from grader.catalog import wrong
from grader.devcheck import audit_languages
from grader.errors import KataError

EXPECTABLE = ("compile-error", "wrong-answer", "launch-error", "crash", "timeout", *KINDS)
_SOLUTION_FILES = {"kernel.cu", "launch.py", "README.md", "wrong", "__pycache__", *wrong.LANGUAGE_DIRS}


@dataclass(frozen=True)
class Check:
    kata: str
    item: str  # what was checked: "files", "stub", "solution", "wrong/<name>.patch"
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
        # the same kata in Triton and numba (grader/devcheck/audit_languages.py)
        for c in audit_languages.checks(kata, backend, lambda *a, k=kata.id: Check(k, *a)):
            add(c)
    return results


def file_checks(kata, min_wrong: int = 4) -> list[Check]:
    """The checks on a kata's files alone, no grading (`kata serve admin kata add` runs them on a
    private kata, whose wrong kernels are optional: min_wrong=0)."""
    return _static(kata, min_wrong)


def graded_checks(kata, backend: str = "cpu") -> list[Check]:
    """The stub fails, the solution passes (public, drawn, hidden), each wrong kernel fails as it says."""
    return _graded(kata, backend)


def _static(kata, min_wrong: int = 4) -> list[Check]:
    out = []
    stub = kata.file("stub.cu").read_text()
    out.append(Check(kata.id, "stub.cu", "has TODO", "has TODO" if "TODO" in stub else "no TODO", "TODO" in stub))
    # a language's stub and plan sit in a folder named after it (harness/frontends/languages.py)
    dialect = [f for lang in audit_languages.offered(kata) for f in audit_languages.stub_files(lang)]
    folders = sorted({Path(f).parent.as_posix() for f in dialect} - {"."})
    own = (kata.solution_dir.name,) if kata.private else ()  # a private kata keeps its solution inside
    stray = sorted(p.name for p in kata.folder.iterdir()
                   if p.name not in (*catalog.KATA_FILES, *dialect, *folders, *own, "__pycache__"))
    stray += sorted(f"{d}/{p.name}" for d in folders if (kata.folder / d).is_dir()
                    for p in (kata.folder / d).iterdir() if f"{d}/{p.name}" not in dialect and p.name != "__pycache__")
    sol = kata.solution_dir
    if sol.is_dir():
        stray += sorted(f"solutions/{p.name}" for p in sol.iterdir() if p.name not in _SOLUTION_FILES)
        folder = sol / "wrong"
        if folder.is_dir():
            for p in folder.iterdir():
                base = p.name.removesuffix(".launch.py")
                ok = p.suffix in wrong.SUFFIXES or (p.name.endswith(".launch.py") and any(
                    (folder / f"{base}{s}").is_file() for s in wrong.SUFFIXES))
                if not ok and p.name != "__pycache__":
                    stray.append(f"solutions/wrong/{p.name}")
    out.append(Check(kata.id, "files", "no stray files", ", ".join(stray) or "none", not stray))
    has_solution = (sol / "kernel.cu").is_file() and (sol / "launch.py").is_file()
    out.append(Check(kata.id, "solution files", "kernel.cu + launch.py", "present" if has_solution else "missing",
                     has_solution))
    found = wrong.mistakes(kata.id, sol)
    if min_wrong:
        out.append(Check(kata.id, "wrong kernels", f">= {min_wrong}", str(len(found)), len(found) >= min_wrong))
    for m in found:
        if not m.is_patch and wrong.full_file_reason(m) is None:
            out.append(Check(kata.id, f"wrong/{m.path.name}", "a patch, or a last line saying why not",
                             "a full file without a reason", False,
                             f"store it as wrong/{m.name}.patch (diff -u kernel.cu wrong.cu), or end it with "
                             f"`{wrong.FULL_FILE} <why this mistake needs a different algorithm>`"))
    return out


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
            report = pipeline.grade(kata.id, sol, backend=backend, hidden=True,
                                    with_estimate=False)  # verdicts only: no H200 estimate
            out.append(Check(kata.id, "solution", "passes (public, drawn, hidden)", report.verdict,
                             report.verdict == "pass", report.headline))
        for mistake in wrong.mistakes(kata.id, sol):
            kind, why = mistake.expect, mistake.why
            item = f"wrong/{mistake.path.name}"
            if kind not in EXPECTABLE:
                out.append(Check(kata.id, item, "a kata-expect line", str(kind), False,
                                 f"first line must be `// kata-expect: KIND`, KIND one of {', '.join(EXPECTABLE)}"))
                continue
            if not why:
                out.append(Check(kata.id, item, "a second line saying why", "none", False,
                                 "second line: `// <one sentence on the bug>`"))
                continue
            try:
                ws = wrong.materialise(kata.id, mistake.name, Path(tmp) / mistake.name)
            except KataError as exc:  # the patch no longer applies to the solution
                out.append(Check(kata.id, item, "applies to the solution", "does not apply", False, exc.message))
                continue
            report = pipeline.grade(kata.id, ws, backend=backend)
            got = ", ".join(report.reasons) or report.verdict
            # The same demand on both backends: a GPU grade runs the sanitizer on the CPU emulator.
            ok = report.verdict == "fail" and kind in report.reasons
            out.append(Check(kata.id, item, kind, got, ok, report.headline))
    return out
