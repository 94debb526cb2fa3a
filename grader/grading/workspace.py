"""Workspaces: the folder a learner edits (kernel.cu, launch.py, statement.md, .kata).

`kata start` makes one and never overwrites work (with --force it keeps a .bak of each file it
replaces); `kata grade` finds the kata through the folder's .kata marker or --kata.
"""
from __future__ import annotations

import shutil
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from grader import catalog
from grader.errors import EnvironmentProblem, UsageError, WorkspaceExists
from harness.frontends import languages as _languages
from harness.frontends.languages import language_of

MARKER = ".kata"
#: kata file → workspace file (CUDA C's)
FILES = _languages.CUDA.workspace_files()
#: the kernel languages (harness/frontends/languages.py); a kata offers a Python one when it has its stub and plan
LANGUAGES = _languages.NAMES


def files_for(lang: str) -> dict[str, str]:
    """kata file → workspace file for a kernel language."""
    return _languages.get(lang).workspace_files()


def languages(kata: catalog.Kata) -> tuple[str, ...]:
    """The languages kata offers: CUDA C always, a Python language where it has its stub and plan."""
    return (_languages.CUDA.name,) + tuple(lang.name for lang in _languages.PYTHON
                                           if all(kata.file(f).is_file() for f in lang.workspace_files()))


@dataclass(frozen=True)
class Submission:
    folder: Path  # the graded folder
    kata: catalog.Kata
    kernel: Path  # folder/kernel.cu
    launch: Path  # folder/launch.py, or the kata's default plan when the folder has none
    marker: bool  # the folder has a .kata marker naming the kata
    notes: tuple[str, ...]  # what the learner should know (a default launch plan was used)


def read_marker(folder: Path) -> str | None:
    path = Path(folder) / MARKER
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        raise UsageError(f"{path}: not a kata marker (expected a line like kata = \"reduce\")",
                         hint="delete it and pass --kata ID") from None
    katas = data.get("katas")
    if isinstance(katas, str):
        # a kata the package does not ship (a server interview's private kata): the folder of katas
        # its public files are in, relative to the workspace
        catalog.add_root((Path(folder) / katas).resolve())
    kata = data.get("kata")
    return kata if isinstance(kata, str) else None


def locate(folder, kata_id: str | None = None, launch_file: Path | None = None) -> Submission:
    """The submission in `folder`; UsageError (exit 2) when it cannot be graded at all."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise UsageError(f"{folder}: no such folder", hint="run `kata start ID` to make a workspace")
    marked = read_marker(folder)
    kata_id = kata_id or marked
    if kata_id is None:
        raise UsageError(f"{folder}: no {MARKER} marker says which kata this is",
                         hint="pass --kata ID (see `kata list`), or make a workspace with `kata start ID`")
    kata = catalog.load(kata_id)
    kernel = folder / "kernel.cu"
    if not kernel.is_file() and (folder / "kernel.py").is_file():
        kernel = folder / "kernel.py"  # a Triton or numba kernel (harness/frontends)
    if not kernel.is_file():
        raise UsageError(f"{kernel}: not found; kata grades the kernel in kernel.cu (CUDA C) or kernel.py "
                         "(Triton, numba)",
                         hint=f"run `kata start {kata.id} {folder}` to make a workspace, or grade another folder")
    notes: list[str] = []
    launch = Path(launch_file) if launch_file else folder / "launch.py"
    if not launch.is_file():
        notes.append(f"{folder.name}/launch.py is missing: graded with the kata's default launch plan")
        lang = language_of(kernel)
        launch = kata.file(_languages.get(lang).launch)
        if not launch.is_file():
            raise UsageError(f"{folder / 'launch.py'}: not found, and {kata.id} has no default {lang} plan",
                             hint="write a launch.py (see `kata start ID --lang LANG`)")
    return Submission(folder, kata, kernel, launch, marked == kata.id, tuple(notes))


def start(kata_id: str, folder: Path | None = None, force: bool = False, lang: str = "cuda") -> tuple[Path, list[str]]:
    """Make a workspace; returns (folder, files written). Refuses to replace edited files unless
    force, and then keeps each replaced file as <name>.bak. lang: cuda | triton | numba."""
    kata = catalog.load(kata_id)
    offered = languages(kata)
    if lang not in offered:
        raise UsageError(f"{kata.id} has no {lang} stub (it offers: {', '.join(offered)})",
                         hint="see `kata list` for the languages of each kata")
    _require_frontend(lang)
    files = files_for(lang)
    folder = Path(folder) if folder is not None else Path.cwd() / kata.id
    existing_marker = read_marker(folder) if folder.is_dir() else None
    other = [n for n in ("kernel.cu", "kernel.py") if n not in files.values() and (folder / n).exists()]
    clashes = [name for name in (*files.values(), MARKER, *other) if (folder / name).exists()
               and not _same(folder / name, kata, name, files)]
    if clashes and not force:
        other = f" (a workspace for {existing_marker})" if existing_marker and existing_marker != kata.id else ""
        raise WorkspaceExists(f"{folder} already has {', '.join(clashes)}{other}; kata start will not overwrite your work",
                              hint=f"grade it with `kata grade {folder}`, pick another folder, or add --force "
                                   "(your files are kept as .bak)")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name in other:  # the other language's kernel would be graded instead: moved aside
        shutil.move(folder / name, folder / (name + ".bak"))
    for source, target in files.items():
        dest = folder / target
        if dest.exists() and target in clashes:
            shutil.copy2(dest, dest.with_name(dest.name + ".bak"))
        dest.write_text(kata.file(source).read_text())
        written.append(target)
    extra = f'lang = "{lang}"\n' if lang != "cuda" else ""
    (folder / MARKER).write_text(f'kata = "{kata.id}"\nformat = {catalog.FORMAT}\n{extra}')
    written.append(MARKER)
    return folder, written


def restore_stub(folder: Path, kata: catalog.Kata) -> Path:
    """Put the kata's stub files back in folder (`kata reset`); the learner's current files are
    copied first to folder/.kata-backup/<time>/, which is returned."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = folder / ".kata-backup" / stamp
    for n in range(2, 10_000):  # two resets within a second keep both backups
        try:
            backup.mkdir(parents=True)
            break
        except FileExistsError:
            backup = folder / ".kata-backup" / f"{stamp}-{n}"
    for source, target in files_for(_marker_lang(folder)).items():
        if (folder / target).is_file():
            shutil.copy2(folder / target, backup / target)
        (folder / target).write_text(kata.file(source).read_text())
    return backup


def _marker_lang(folder: Path) -> str:
    try:
        lang = tomllib.loads((Path(folder) / MARKER).read_text()).get("lang", "cuda")
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return "cuda"
    return lang if lang in LANGUAGES else "cuda"


def _require_frontend(lang: str) -> None:
    """`--lang triton` without kata[triton]: exit 3 naming the install command."""
    if lang == "cuda":
        return
    import importlib.util

    if importlib.util.find_spec(lang) is None:
        raise EnvironmentProblem(f"--lang {lang}: {lang} is not installed", hint=f"run `{_languages.get(lang).install}`")


def _same(path: Path, kata: catalog.Kata, name: str, files: dict | None = None) -> bool:
    """An untouched file from the same kata (in any of its languages) is no work to lose."""
    if name == MARKER:
        try:
            return read_marker(path.parent) == kata.id
        except UsageError:
            return False
    return any(target == name and kata.file(src).is_file() and _bytes_equal(path, kata.file(src))
               for lang in LANGUAGES for src, target in files_for(lang).items())


def _bytes_equal(a: Path, b: Path) -> bool:
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False
