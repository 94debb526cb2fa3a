"""launch.py loaded, and an exception it raised placed at its line (the plan process and the
worker both use these)."""
from __future__ import annotations

import os
import traceback
from pathlib import Path

from harness.sandbox.protocol import Problem

#: code below the launch plan: an exception raised in these is ours, not the learner's
_BACKEND_MODULES = ("harness/backends/cpu.py", "harness/backends/gpu.py", "harness/backends/dialect.py",
                    "harness/frontends", "harness/emulator")


class _LaunchPyProblem(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem


def _load_launch(path: str, source: str | None = None):
    name = Path(path).name
    try:
        source = Path(path).read_text() if source is None else source
        code = compile(source, path, "exec")
        namespace: dict = {"__name__": "kata_launch_plan", "__file__": path}
        exec(code, namespace)
    except SyntaxError as exc:
        raise _LaunchPyProblem(Problem("launch-py", f"syntax error: {exc.msg}", name, exc.lineno,
                                       (exc.text or "").strip() or None)) from None
    except Exception as exc:
        raise _LaunchPyProblem(_launch_py_problem(exc, path)) from None
    fn = namespace.get("launch")
    if not callable(fn):
        raise _LaunchPyProblem(Problem("launch-py", "launch.py defines no launch(gpu, ...) function", name))
    return fn


def _launch_py_problem(exc: BaseException, path: str) -> Problem:
    """An exception raised in (or by a call from) launch.py: the learner's, at launch.py's line.
    Raised below the backends' own code instead, it is ours."""
    frames = traceback.extract_tb(exc.__traceback__)
    resolved = str(Path(path).resolve())
    mine = [i for i, f in enumerate(frames) if str(Path(f.filename).resolve()) == resolved]
    deeper = frames[mine[-1] + 1:] if mine else frames
    if not mine or any(m in f.filename.replace(os.sep, "/") for f in deeper for m in _BACKEND_MODULES):
        return Problem("internal", f"{type(exc).__name__}: {exc}", detail="".join(traceback.format_exception(exc)))
    frame = frames[mine[-1]]
    return Problem("launch-py", f"{type(exc).__name__}: {exc}", Path(path).name, frame.lineno,
                   (frame.line or "").strip() or None)
