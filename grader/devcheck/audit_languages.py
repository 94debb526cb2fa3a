"""`kata dev check` for the Python kernel languages (Triton, numba): a kata that offers one has
katas/<id>/<lang>/stub.py + launch.py, and solutions/<id>/<lang>/ holds kernel.py, launch.py
and wrong/<bug>.patch (diffs of that kernel.py, `# kata-expect: KIND` and `# why` first). Each is
checked as the CUDA C ones are: the stub has TODOs and fails, the solution passes (public, drawn,
hidden), every wrong kernel fails for the reason it names.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from grader.catalog import wrong
from harness.frontends import languages
from grader.errors import KataError

MIN_WRONG = 2
_FILES = {"kernel.py", "launch.py", "README.md", "wrong", "__pycache__"}


def stub_files(lang: str) -> tuple[str, str]:
    """The kata's stub and launch plan for a language (harness/frontends/languages.py)."""
    language = languages.get(lang)
    return language.stub, language.launch


def offered(kata) -> list[str]:
    """The Python languages whose stub, default plan or solution the kata has."""
    return [lang.name for lang in languages.PYTHON if any(kata.file(f).is_file() for f in stub_files(lang.name))
            or (kata.solution_dir / lang.solution_dir).is_dir()]


def checks(kata, backend: str, make_check) -> list:
    """make_check(item, expected, got, ok, detail) builds one audit.Check of this kata."""
    from grader import pipeline

    out = []
    for lang in offered(kata):
        stub, plan = (kata.file(f) for f in stub_files(lang))
        sol = kata.solution_dir / lang
        have = stub.is_file() and plan.is_file() and (sol / "kernel.py").is_file() and (sol / "launch.py").is_file()
        out.append(make_check(f"{lang} files", f"{stub.name}, {plan.name}, solutions/{lang}/kernel.py + launch.py",
                              "present" if have else "missing", have, ""))
        if not have:
            continue
        text = stub.read_text()
        out.append(make_check(stub.name, "has TODO", "has TODO" if "TODO" in text else "no TODO", "TODO" in text, ""))
        stray = sorted(f"solutions/{lang}/{p.name}" for p in sol.iterdir() if p.name not in _FILES)
        found = wrong.mistakes(kata.id, sol)
        out.append(make_check(f"{lang} files", "no stray files", ", ".join(stray) or "none", not stray, ""))
        out.append(make_check(f"{lang} wrong kernels", f">= {MIN_WRONG}", str(len(found)), len(found) >= MIN_WRONG, ""))
        with tempfile.TemporaryDirectory(prefix="kata-dev-") as tmp:
            ws = Path(tmp) / "stub"
            ws.mkdir()
            shutil.copy(stub, ws / "kernel.py")
            shutil.copy(plan, ws / "launch.py")
            report = pipeline.grade(kata.id, ws, backend=backend)
            out.append(make_check(f"{lang} stub", "fails", report.verdict, report.verdict == "fail", report.headline))
            report = pipeline.grade(kata.id, sol, backend=backend, hidden=True,
                                    with_estimate=False)  # verdicts only: no H200 estimate
            out.append(make_check(f"{lang} solution", "passes (public, drawn, hidden)", report.verdict,
                                  report.verdict == "pass", report.headline))
            for mistake in found:
                item = f"{lang}/wrong/{mistake.path.name}"
                if not mistake.expect or not mistake.why:
                    out.append(make_check(item, "kata-expect and why lines", "missing", False,
                                          "first lines: `# kata-expect: KIND` and `# <one sentence on the bug>`"))
                    continue
                if not mistake.is_patch:
                    out.append(make_check(item, "a patch of kernel.py", "a full file", False,
                                          f"store it as wrong/{mistake.name}.patch (diff -u kernel.py wrong.py)"))
                    continue
                try:
                    ws = wrong.materialise(kata.id, mistake.name, Path(tmp) / f"{lang}-{mistake.name}", lang=lang)
                except KataError as exc:
                    out.append(make_check(item, "applies to the solution", "does not apply", False, exc.message))
                    continue
                report = pipeline.grade(kata.id, ws, backend=backend)
                ok = report.verdict == "fail" and mistake.expect in report.reasons
                out.append(make_check(item, mistake.expect, ", ".join(report.reasons) or report.verdict, ok,
                                      report.headline))
    return out
