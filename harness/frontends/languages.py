"""The kernel languages kata grades, in one registry: each one's name, the files a kata and its
workspace hold for it, where its solution lives, what installs its compiler, and how a kernel.py
says it is written in it. Workspaces (`kata start`, `kata grade`), the front ends, the catalogue's
solution folders, the CLI's --lang and the dev check all read it: a new language is one entry here
and its front end module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


def install_command(extra: str) -> str:
    """What installs one of kata's extras (pyproject.toml). kata is installed from its checkout,
    not from the package index, so `pip install 'kata[triton]'` would find nothing: name the
    extra's own pinned packages, read from kata's installed metadata, and the checkout's command."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        wanted = [
            r.split(";")[0].strip() for r in requires("kata") or () if re.search(rf"extra\s*==\s*['\"]{extra}['\"]", r)
        ]
    except PackageNotFoundError:
        wanted = []
    packages = " ".join(f"'{w}'" for w in wanted)
    checkout = f"pip install -e '.[{extra}]' in your kata checkout"
    return f"pip install {packages} (or {checkout})" if packages else checkout


@dataclass(frozen=True)
class Language:
    name: str  # --lang value and the `lang` of a workspace's .kata marker
    title: str  # as a learner reads it
    kernel_file: str  # the workspace's kernel file
    # One naming scheme for a language's variant: a folder named after it, in the kata
    # (katas/<id>/<lang>/stub.py, launch.py) as in its solutions (solutions/<id>/<lang>/kernel.py, ...)
    stub: str  # the kata's stub for it (under katas/<id>/), copied to kernel_file by `kata start`
    launch: str  # the kata's launch plan for it, copied to launch.py
    solution_dir: str  # its solution under solutions/<id>/ ("": the folder itself)
    install: str = ""  # what installs its compiler ("": always there)
    imports: str = ""  # a regular expression: a kernel.py in this language imports it
    compilers: tuple[str, ...] = ()  # the front ends of its file suffix, preferred first
    frontend: str = ""  # a Python language's front end module, imported in the worker per launch

    @property
    def python(self) -> bool:
        """Compiled per launch in the worker (harness/backends/dialect.py), not to one PTX module."""
        return self.kernel_file.endswith(".py")

    def workspace_files(self) -> dict[str, str]:
        """kata file → workspace file."""
        return {self.stub: self.kernel_file, self.launch: "launch.py", "statement.md": "statement.md"}


CUDA = Language("cuda", "CUDA C", "kernel.cu", "stub.cu", "launch.py", "", compilers=("nvrtc", "clang"))
TRITON = Language(
    "triton",
    "Triton",
    "kernel.py",
    "triton/stub.py",
    "triton/launch.py",
    "triton",
    install=install_command("triton"),
    imports=r"^\s*(import triton|from triton)",
    frontend="harness.frontends.triton",
)
NUMBA = Language(
    "numba",
    "numba.cuda",
    "kernel.py",
    "numba/stub.py",
    "numba/launch.py",
    "numba",
    install=install_command("numba"),
    imports=r"^\s*(import numba|from numba)",
    frontend="harness.frontends.numba",
)

#: name → Language; CUDA C first (every kata has it), then the Python languages
LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (CUDA, TRITON, NUMBA)}
NAMES: tuple[str, ...] = tuple(LANGUAGES)
PYTHON: tuple[Language, ...] = tuple(lang for lang in LANGUAGES.values() if lang.python)
_IMPORTS = {lang.name: re.compile(lang.imports, re.M) for lang in PYTHON}


def get(name: str) -> Language:
    return LANGUAGES[name]


def compilers_for(filename: str) -> tuple[str, ...]:
    """The front ends that compile this file, preferred first (CUDA C's for any other suffix)."""
    suffix = Path(filename).suffix or ".cu"
    for lang in LANGUAGES.values():
        if lang.compilers and Path(lang.kernel_file).suffix == suffix:
            return lang.compilers
    return CUDA.compilers


def language_of(path: Path) -> str:
    """The kernel language of a submission file, from its name and imports (nothing is run);
    a kernel.py that imports neither is taken as Triton."""
    path = Path(path)
    if path.suffix != ".py":
        return CUDA.name
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return TRITON.name
    for name, pattern in _IMPORTS.items():
        if pattern.search(text):
            return name
    return TRITON.name
