"""What the Python front ends (Triton, numba) share: loading the learner's kernel.py, the
compiled-kernel record, and compile errors at kernel.py:line.

kernel.py is Python the learner wrote, so it is imported only inside the worker process
(harness/sandbox/worker.py), never in the grader's; the grader only asks `language_of` (a look at
the text) and Python's own syntax check.
"""
from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from .languages import PYTHON


class KernelCompileError(Exception):
    """The learner's kernel did not compile: a message at kernel.py:line (the worker sends it back
    as a Problem of kind compile-error, the grade shows it as the compile stage)."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 source: str | None = None):
        self.message, self.file, self.line, self.source = message, file, line, source
        super().__init__((f"{file}:{line}: " if file and line else "") + message)


class FrontendUnavailable(RuntimeError):
    """The language's compiler is not installed (a setup problem: exit 3 with the install command)."""


@dataclass(frozen=True)
class CompiledKernel:
    """One specialisation of a Python kernel, compiled to PTX (and a cubin where the compiler gives one)."""

    entry: str  # the PTX .entry name
    ptx: str
    cubin: bytes | None
    threads: int | None  # the block size the PTX requires (.reqntid), None when free
    shared: int  # dynamic shared bytes the launch must give (Triton's metadata.shared)
    scratch: tuple[int, ...] = ()  # bytes per program of each trailing scratch pointer (Triton)


def source_line(path: str | Path, line: int | None) -> str | None:
    try:
        return Path(path).read_text().splitlines()[line - 1].strip() if line else None
    except (OSError, IndexError, UnicodeDecodeError):
        return None


def load_module(path: str | Path):
    """Import the learner's kernel.py (worker only). An exception while importing it is the
    learner's: KernelCompileError at its line."""
    path = Path(path).resolve()
    name = f"kata_kernel_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Triton reads a jit function's source with inspect, which needs the module registered.
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise KernelCompileError(f"syntax error: {exc.msg}", path.name, exc.lineno,
                                 (exc.text or "").strip() or None) from None
    except ImportError as exc:
        missing = getattr(exc, "name", "") or ""
        for lang in PYTHON:
            if missing.split(".")[0] == lang.name:
                raise FrontendUnavailable(f"{path.name} uses {lang.name}, which is not installed: "
                                          f"run `{lang.install}`") from None
        raise KernelCompileError(f"{type(exc).__name__}: {exc}", path.name, *_frame_in(exc, path)) from None
    except Exception as exc:
        raise KernelCompileError(f"{type(exc).__name__} while importing it: {exc}", path.name,
                                 *_frame_in(exc, path)) from None
    return module


def _frame_in(exc: BaseException, path: Path) -> tuple[int | None, str | None]:
    """(line, text) of the innermost frame of `exc` in the learner's file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() == path]
    if not frames:
        return None, None
    return frames[-1].lineno, (frames[-1].line or "").strip() or None


def def_line(path: Path, first: int) -> int:
    """The `def` line of a function whose code starts at `first` (decorators come before it)."""
    lines = Path(path).read_text().splitlines()
    for i in range(max(first, 1) - 1, len(lines)):
        if lines[i].lstrip().startswith("def "):
            return i + 1
    return first
