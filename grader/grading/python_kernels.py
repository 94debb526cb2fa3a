"""The compile stage of a Python kernel (Triton, numba): kernel.py is the learner's Python, so the
grader's process only checks its syntax (Python's compile(), which runs nothing) and that its
compiler is installed. The kernel is imported and compiled in the worker at its first launch
(harness/backends/dialect.py); an error there comes back as a compile-error Problem, shown here as
the compile stage at kernel.py:line.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from grader.errors import EnvironmentProblem
from grader.results import CompileStage
from harness.frontends.nvrtc import CompileResult, Diagnostic
from harness.frontends import languages


def python_compile_stage(source: str, kernel: Path):
    """(CompileResult without PTX, CompileStage) for kernel.py."""
    name = kernel.name
    lang = languages.get(languages.language_of(kernel))
    if importlib.util.find_spec(lang.name) is None:
        raise EnvironmentProblem(f"{name} is a {lang.name} kernel, and {lang.name} is not installed",
                                 hint=f"run `{lang.install}`")
    try:
        compile(source, str(kernel), "exec")
    except SyntaxError as exc:
        diag = Diagnostic(name, exc.lineno, "error", f"syntax error: {exc.msg}", (exc.text or "").strip() or None)
        return None, CompileStage(False, (diag,), f"{name}:{exc.lineno}: syntax error: {exc.msg}")
    compiled = CompileResult(ok=True, filename=name, log="", diagnostics=())
    return compiled, CompileStage(True, (), "")


def python_compile_failure(problem) -> CompileStage:
    """The compile stage of a kernel.py whose compile in the worker failed (Problem kind compile-error)."""
    diag = Diagnostic(problem.file or "kernel.py", problem.line, "error", problem.message, problem.source)
    where = f"{diag.file}:{diag.line}: " if diag.line else ""
    if diag.line is None:
        return CompileStage(False, (), problem.message, message=f"{diag.file}: {problem.message}")
    return CompileStage(False, (diag,), f"{where}{problem.message}")
