"""The compile stage: the kernel file and launch.py read once, compiled (NVRTC, clang, or a
Python kernel's own check), their resources; then the Program the grade's workers run."""

from __future__ import annotations

import sys
from pathlib import Path

from grader.errors import EnvironmentProblem
from grader.grading import grade_notes as _notes
from grader.grading import stage_progress as _progress
from grader.grading.python_kernels import python_compile_stage
from grader.grading.workspace import Submission
from grader.pipeline.draft import ReportDraft
from grader.results import CompileStage, ResourceStage
from harness.frontends import interface as frontends
from harness.frontends.nvrtc import CompilerUnavailable
from harness.sandbox.isolation import Program

WINDOWS = (
    "kernel.cu compiles, but kata cannot run it on Windows: the launch plan runs in a sandboxed "
    "worker process (memory caps, signals, and the launch-plan sandbox) that needs Linux or macOS"
)


def compile_stage(draft: ReportDraft, sub: Submission, backend: str, on_gpu: bool, require_sandbox: bool):
    """Adds the compile stage (and the resources) to `draft`, ending it when the kernel does not
    compile. Returns (compiled, Program) for the next stages; (None, None) when ended."""
    # Read once: the bytes compiled and planned are the bytes whose hash the attempt records, whatever
    # happens to the files while the grade runs.
    raw, launch_text = sub.kernel.read_bytes(), _notes.read_text(sub.launch)
    draft.sources = _notes.sources_hash(sub, raw, launch_text)
    _progress.stage("compile")
    compiled, stage = _compile(sub, raw, launch_text)
    draft.compile = stage
    if compiled is not None and compiled.notes:  # e.g. clang without ptxas: no resources
        draft.note(*compiled.notes)
    if not stage.ok:
        draft.end("fail", "compile", stage.headline(), ("compile-error",))
        return None, None
    if _on_windows():  # the compile stage above works there (NVRTC has Windows wheels)
        raise EnvironmentProblem(WINDOWS, hint="install WSL 2 (`wsl --install`), then `pip install kata` inside it")
    draft.resources = ResourceStage(tuple(compiled.resources.values()), ())
    if on_gpu and compiled.cubin is None and sub.kernel.suffix != ".py":  # clang without ptxas: PTX only
        raise EnvironmentProblem(
            f"--backend gpu needs a cubin, and {compiled.frontend} made PTX only: " + " ".join(compiled.notes),
            hint="unset KATA_FRONTEND (NVRTC), or use --backend cpu",
        )
    program = Program(
        backend,
        compiled.ptx,
        compiled.cubin,
        sub.kernel.name,
        str(sub.launch.resolve()),
        launch_source=launch_text,
        kernel_source=raw.decode("utf-8", "replace"),
        require_sandbox=require_sandbox,
        kernel_path=python_kernel(sub),
    )
    return compiled, program


def _on_windows() -> bool:
    return sys.platform == "win32"


def python_kernel(sub: Submission) -> str:
    """The kernel file's path when it is a Python kernel (Triton, numba), else ""."""
    return str(sub.kernel.resolve()) if sub.kernel.suffix == ".py" else ""


def _compile(sub: Submission, raw: bytes, launch_text: str | None):
    name = sub.kernel.name
    if not raw.strip():
        return None, CompileStage(
            False,
            (),
            "",
            f"{name} is empty: write your kernel in it (or `kata start {sub.kata.id} {_notes.as_typed(sub.folder)} "
            "--force` for a fresh stub in this folder)",
        )
    if b"\0" in raw:
        return None, CompileStage(
            False,
            (),
            "",
            f"{name} is not a text file (it holds NUL bytes): is it a binary that was saved under this name?",
        )
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, CompileStage(
            False, (), "", f"{name} is not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x}); save it as UTF-8"
        )
    launch_problem = _check_launch_syntax(sub.launch, launch_text)
    if launch_problem:
        return None, CompileStage(False, (), "", launch_problem)
    if sub.kernel.suffix == ".py":
        return python_compile_stage(source, sub.kernel)
    try:
        compiled = frontends.compile(source, name, cubin=True, include_dir=sub.folder)
    except CompilerUnavailable as exc:  # its hint: what to install, or `kata setup` for clang's CUDA folder
        raise EnvironmentProblem(str(exc), hint=exc.hint) from None
    stage = CompileStage(
        compiled.ok,
        compiled.diagnostics,
        compiled.log,
        "",
        nvrtc_version=compiled.nvrtc_version,
        compiler=_notes.compiler(compiled),
    )
    return compiled, stage


def _check_launch_syntax(path: Path, text: str | None) -> str:
    try:
        compile(text if text is not None else path.read_text(), str(path), "exec")
    except SyntaxError as exc:
        return f"{path.name}:{exc.lineno}: syntax error in the launch plan: {exc.msg}"
    except (OSError, UnicodeDecodeError) as exc:
        return f"{path.name}: cannot be read as text ({exc})"
    return ""
