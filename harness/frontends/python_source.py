"""What the Python front ends (Triton, numba) share: loading the learner's kernel.py, the
compiled-kernel record, and compile errors at kernel.py:line.

kernel.py is Python the learner wrote, so it is imported only inside the worker process
(harness/sandbox/worker.py), never in the grader's; the grader only asks `language_of` (a look at
the text) and Python's own syntax check.
"""
from __future__ import annotations

import importlib.util
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

LANGUAGES = ("cuda", "triton", "numba")


def install_command(extra: str) -> str:
    """What installs one of kata's extras (pyproject.toml). kata is installed from its checkout,
    not from the package index, so `pip install 'kata[triton]'` would find nothing: name the
    extra's own pinned packages, read from kata's installed metadata, and the checkout's command."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        wanted = [r.split(";")[0].strip() for r in requires("kata") or ()
                  if re.search(rf"extra\s*==\s*['\"]{extra}['\"]", r)]
    except PackageNotFoundError:
        wanted = []
    packages = " ".join(f"'{w}'" for w in wanted)
    checkout = f"pip install -e '.[{extra}]' in your kata checkout"
    return f"pip install {packages} (or {checkout})" if packages else checkout


#: what installs each Python front end's compiler (the extras of pyproject.toml)
INSTALL = {"triton": install_command("triton"), "numba": install_command("numba")}

_IMPORTS = {"triton": re.compile(r"^\s*(import triton|from triton)", re.M),
            "numba": re.compile(r"^\s*(import numba|from numba)", re.M)}


def language_of(path: Path) -> str:
    """The kernel language of a submission file, from its name and imports (nothing is run)."""
    path = Path(path)
    if path.suffix != ".py":
        return "cuda"
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "triton"
    for lang, pattern in _IMPORTS.items():
        if pattern.search(text):
            return lang
    return "triton"


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
        for lang, cmd in INSTALL.items():
            if missing.split(".")[0] == lang:
                raise FrontendUnavailable(f"{path.name} uses {lang}, which is not installed: run `{cmd}`") from None
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
