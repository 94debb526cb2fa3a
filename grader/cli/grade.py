"""Commands: list, start, grade, hint, dev check. Parse, call the library, render; no logic here."""
from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from grader import catalog
from grader.grading import workspace
from grader.cli import _wiring
from grader.cli._errors import console, handled
from grader.errors import INTERNAL, UsageError


@click.command("list")
@click.option("--level", type=click.Choice(catalog.LEVELS), help="Only the katas of this level.")
@handled
def list_katas(level: str | None) -> None:
    """The katas, with your progress."""
    katas = [k for k in catalog.all_katas() if level is None or k.level == level]
    progress = {}
    try:
        from grader.practice import progress as _progress

        progress = _progress.summary([k.id for k in katas])
    except Exception as exc:  # the store is optional for listing; say why it is missing
        console(err=True).print(f"(progress unavailable: {exc})", style="dim")
    table = Table(box=None, pad_edge=False)
    for col in ("id", "level", "title", "progress", "best score"):
        table.add_column(col, no_wrap=col != "title")  # the long title wraps, the short cells never
    for k in katas:
        state, best = _progress_cells(progress.get(k.id))
        # CUDA C always; the Python languages the kata offers follow its summary
        also = [lang for lang in workspace.languages(k) if lang != "cuda"]
        langs = f" [in CUDA C, {', '.join(also)}]" if also else ""
        table.add_row(k.id, k.level, f"{k.title}: {k.summary}{langs}", state, best)
    console().print(table)
    console().print("start one with `kata start ID` (or `--lang triton|numba` where listed)", style="dim")


_STATE_STYLE = {"passing": "green", "failing": "red", "started": "yellow", "not started": "dim"}


def _progress_cells(row) -> tuple[Text | str, str]:
    """(state, best score) cells of `kata list`; a pass on the CPU emulator has no score."""
    if row is None:
        return "", ""
    state = Text(row.state, style=_STATE_STYLE.get(row.state, ""))
    if row.best_score is not None:
        best = f"{row.best_score:.2f}"
    else:
        best = "-" if row.state != "passing" else "- (no GPU grade yet)"
    return state, best


@click.command("start")
@click.argument("kata_id", metavar="ID")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="replace existing files (each is kept as <name>.bak)")
@click.option("--lang", type=click.Choice(workspace.LANGUAGES), default="cuda", show_default=True,
              help="the kernel language: CUDA C (kernel.cu), Triton or numba.cuda (kernel.py)")
@handled
def start(kata_id: str, folder: Path | None, force: bool, lang: str) -> None:
    """Make a workspace for kata ID in FOLDER (default ./ID): the kernel stub, launch.py, statement.md."""
    from grader.practice import progress

    catalog.load(kata_id)  # an unknown id is a usage error before anything else
    progress.require_store()  # an unwritable history: exit 3 before the workspace is made
    made, files = workspace.start(kata_id, folder, force=force, lang=lang)

    progress.on_start(kata_id, made)
    out = console()
    out.print(f"made {made}: {', '.join(files)}")
    out.print(f"read {made / 'statement.md'}, edit {files[0]}, then run `kata grade {_rel(made)}`")
    _bench_inputs_ahead(kata_id)


def _bench_inputs_ahead(kata_id: str) -> None:
    """On a GPU machine, the kata's bench inputs start being made now, detached, while the learner
    writes (grader/practice/bench_ahead.py); silent, and never a reason for `start` to fail."""
    try:
        from grader.practice import bench_ahead

        bench_ahead.start_ahead(kata_id)
    except Exception:  # noqa: BLE001 - an optimisation: the first grade makes what is missing
        pass


@click.command("grade")
@click.argument("folder", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--kata", "kata_id", metavar="ID", help="which kata (default: the folder's .kata marker)")
@click.option("--backend", type=click.Choice(["auto", "gpu", "cpu"]), default="auto", show_default=True,
              help="auto: the GPU when CuPy sees one, else kata's CPU emulator")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object instead of the report")
@click.option("--case", "case_pairs", multiple=True, metavar="KEY=VALUE",
              help="run only this case, e.g. --case n=257 (as a failing report prints it)")
@click.option("--seed", type=int, default=None, help="hypothesis seed and data seed (default 0)")
@click.option("--examples", type=click.IntRange(0, 1000), default=None,
              help="how many cases hypothesis draws (default 12)")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="the stage being run, on stderr (default: only when stderr is a terminal)")
@click.option("--html", "as_html", is_flag=True,
              help="also write the grade as a page to look at: kata-grade.html in the graded folder")
@handled
def grade(folder: Path, kata_id, backend, as_json, case_pairs, seed, examples, show_progress, as_html) -> None:
    """Grade the kernel in FOLDER (default: here): compile, test, sanitize, measure."""
    from grader.grading import report as _report, stage_progress
    from grader.grading.cases import parse_overrides
    from grader.pipeline import run
    from grader.practice import progress
    from grader.terminal import StatusLine

    only, target = None, folder
    if case_pairs:  # located once: the case's values are checked against this kata, then graded
        target = workspace.locate(folder, kata_id)
        only = parse_overrides(case_pairs, target.kata)
    mode = {None: "auto", True: "on", False: "off"}[show_progress]
    with StatusLine(mode) as status, stage_progress.listening(status.update):
        result = run.grade(kata_id, target, backend=_wiring.backend(backend), seed=seed, examples=examples,
                           case=only)
    line, unrecorded = None, None
    try:
        line = progress.on_grade(result.kata, Path(result.workspace), result)
    except Exception as exc:  # a broken store must not hide the grade, nor pass unnoticed
        unrecorded = store_problem(exc)
        line = f"(attempt NOT recorded: {unrecorded.message})"
    if result.diagnostic:
        line = (line + " · " if line else "") + "diagnostic run: recorded as such, not as a grade of the kata"
    if as_json:
        click.echo(_report.to_json(result))
    else:
        _report.render(result, console(), extra=line)
    if as_html:
        from grader.performance import report_html

        page = report_html.write(result)
        console(err=True).print(f"wrote {page} (open it in a browser)", style="dim")
    if unrecorded is not None:
        raise unrecorded  # exit 3: the grade was shown, the history is what needs fixing
    sys.exit({"pass": 0, "fail": 1}.get(result.verdict, INTERNAL))


def store_problem(exc: Exception):
    """The EnvironmentProblem (exit 3) for a history store that cannot take an attempt."""
    from grader.errors import EnvironmentProblem
    from grader.practice.store import DB_NAME, default_home

    try:
        where = default_home() / DB_NAME
    except Exception:  # noqa: BLE001 - the path itself may be what is broken
        where = "the kata store"
    return EnvironmentProblem(f"your attempt was not recorded in {where}: {exc}",
                              hint="set KATA_HOME to a folder you can write (e.g. export KATA_HOME=~/.kata), "
                                   f"or move a damaged {DB_NAME} aside; then grade again to record it")


@click.command("hint")
@click.argument("folder", required=False, default=".", type=click.Path(path_type=Path))
@click.option("--kata", "kata_id", metavar="ID", help="which kata (default: the folder's .kata marker)")
@handled
def hint(folder: Path, kata_id: str | None) -> None:
    """Reveal the next hint for the kata in FOLDER (recorded in your progress)."""
    kata_id = kata_id or workspace.read_marker(Path(folder))
    if kata_id is None:
        raise UsageError(f"{Path(folder).resolve()}: no .kata marker says which kata this is",
                         hint="pass --kata ID, or run it inside a workspace made by `kata start`")
    kata = catalog.load(kata_id)
    from grader.practice import progress

    # The folder, not the cwd, decides whether the hint counts in an interview session.
    got = progress.next_hint(kata.id, list(kata.hints), workspace=Path(folder))
    if got is None:
        console().print(f"all {len(kata.hints)} hints for {kata.id} are shown; "
                         f"`kata solution {kata.id} --give-up` shows the solution")
        return
    index, text = got
    console().print(f"hint {index}/{len(kata.hints)} for {kata.id}: {text}")


@click.group("dev")
def dev() -> None:
    """Commands for kata authors."""


@dev.command("check")
@click.argument("kata_ids", nargs=-1, metavar="[ID ...]")
@click.option("--backend", type=click.Choice(["cpu", "gpu"]), default="cpu", show_default=True,
              help="cpu: all on the emulator; gpu: cases on the GPU, the sanitizer on the emulator")
@handled
def dev_check(kata_ids: tuple[str, ...], backend: str) -> None:
    """Test the katas' content: stubs fail, solutions pass, wrong/ kernels fail for their reason."""
    from grader.devcheck import audit
    from grader import pipeline

    backend = _wiring.backend(backend)
    pipeline.choose_backend(backend)  # no GPU: exit 3 before any work

    for kata_id in kata_ids:
        catalog.load(kata_id)  # unknown ids fail fast, with a did-you-mean
    out = console()

    def show(c) -> None:
        detail = f" · {c.detail}" if c.detail and not c.ok else ""
        line = Text.assemble(("ok  ", "green") if c.ok else ("FAIL", "red"),
                             f" {c.kata:<10} {c.item:<36} expected {c.expected}; got {c.got}{detail}")
        out.print(line)

    results = audit.check(list(kata_ids) or None, backend=backend, on_result=show)
    bad = [c for c in results if not c.ok]
    out.print(f"{len(results) - len(bad)}/{len(results)} checks passed")
    sys.exit(1 if bad else 0)


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


commands = [list_katas, start, grade, hint, dev]
