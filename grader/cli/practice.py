"""Commands: `kata status`, `kata solution`, `kata reset`, `kata watch`.

They parse, call grader.practice.progress / grader.practice.store / grader.catalog, and render.
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from grader.cli._errors import confirm, console as _console, handled
from grader.errors import KataError, UsageError
from harness.frontends import languages

WATCHED_SUFFIXES = (".cu", ".cuh", ".h", ".py")


def _ago(ts: float | None) -> str:
    from grader.practice.progress import format_duration

    return "-" if ts is None else f"{format_duration(time.time() - ts)} ago"


def _short(path: str | None) -> str:
    """A path as the learner would type it: relative to here, or from ~."""
    if not path:
        return ""
    p = Path(path)
    for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
        try:
            return prefix + str(p.relative_to(base))
        except ValueError:
            continue
    return path


@click.command()
@handled
def status() -> None:
    """Show your progress on each kata, and any interview running."""
    from rich.table import Table
    from rich.text import Text

    from grader import catalog
    from grader.practice import progress
    from grader.practice.store import Store

    rows = progress.summary(catalog.ids())
    table = Table(box=None, pad_edge=False, collapse_padding=True)  # 80 columns fit the longest id
    for column in ("kata", "state", "attempts", "best score", "hints", "last attempt"):
        table.add_column(column, no_wrap=True)
    table.add_column("workspace", overflow="fold")
    style = {"passing": "green", "failing": "red", "started": "yellow", "not started": "dim"}
    for kata_id, row in rows.items():
        best = f"{row.best_score:.2f}" if row.best_score is not None else "-"
        state = row.state + (" (gave up)" if row.gave_up else "")
        table.add_row(kata_id, Text(state, style=style[row.state]), str(row.attempts), best,
                      str(row.hints), _ago(row.last_time), _short(row.workspace))
    console = _console()
    console.print(table)
    with Store() as store:
        for session in store.sessions("open") + store.sessions("submitting"):
            left = session.deadline - time.time()
            katas = ", ".join(k.kata for k in store.session_katas(session.id))
            when = (f"{progress.format_duration(left)} left" if left > 0 and session.state == "open"
                    else "time is up: run `kata interview submit`")
            console.print(f"interview {session.id} ({katas}) in {session.folder}: {when}")


@click.command()
@click.argument("kata_id", metavar="ID")
@click.option("--give-up", is_flag=True, help="Show it before you have passed (recorded).")
@click.option("--lang", type=click.Choice(languages.NAMES), default="cuda", show_default=True,
              help="the solution in this kernel language (where the kata has one)")
@handled
def solution(kata_id: str, give_up: bool, lang: str) -> None:
    """Show a kata's reference solution (after you pass it).

    \b
    The solution unlocks when your kernel passes `kata grade`. Stuck? `kata hint` first;
    `--give-up` shows it anyway and records that you did.
    """
    from rich.syntax import Syntax

    from grader import catalog
    from grader.practice import progress
    from grader.practice.store import Store

    kata = catalog.load(kata_id)
    with Store() as store:
        for session in store.sessions("open"):
            if kata_id in {k.kata for k in store.session_katas(session.id)}:
                raise UsageError(f"{kata_id} is part of interview {session.id}, still running",
                                 hint="finish it with `kata interview submit`; the report shows "
                                      "the solution")
        passed = progress.has_passed(store, kata_id)
        if not passed and not give_up:
            raise UsageError(f"the solution of {kata_id} unlocks once your kernel passes",
                             hint=f"`kata hint` for a nudge, or `kata solution {kata_id} "
                                  "--give-up` to see it now (recorded)")
        store.add_event("solution" if passed else "give-up", kata_id)
    from grader.practice.interview_report import solution_of

    source, explanation = solution_of(kata)
    console = _console()
    folder, shown = (kata.solution_dir, "") if lang == "cuda" else (kata.solution_dir / lang, f"{lang}/")
    if not (folder / "launch.py").is_file():
        raise UsageError(f"{kata_id} has no {lang} solution", hint=f"`kata solution {kata_id}` shows the CUDA C one")
    if explanation and lang == "cuda":  # a Python solution's docstring is its explanation
        console.print(explanation, soft_wrap=True)
        console.print()
    for name in ("kernel.cu", "kernel.py", "launch.py"):
        path = folder / name
        if path.is_file():
            console.rule(f"solutions/{kata_id}/{shown}{name}")
            console.print(Syntax(path.read_text(), "cuda" if name.endswith(".cu") else "python",
                                 line_numbers=True))


@click.command()
@click.argument("kata_id", metavar="ID")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@handled
def reset(kata_id: str, yes: bool) -> None:
    """Restore a kata's stub and restart its clock.

    The clock and the hint count start again. Your current files are kept in the workspace's
    .kata-backup/ folder, and your earlier attempts stay in the history (`kata status` counts from the reset).
    """
    from grader import catalog
    from grader.practice.store import Store
    from grader.grading.workspace import restore_stub

    kata = catalog.load(kata_id)
    with Store() as store:
        store.check_writable()  # a read-only history: exit 3 before the stub replaces anything
        workspace = store.latest_workspace(kata_id)
        folder = Path(workspace.path) if workspace else None
        if folder is not None and folder.is_dir():
            if not yes and not confirm(f"Restore the stub of {kata_id} in {folder}?"):
                click.echo("Nothing changed.")
                return
            backup = restore_stub(folder, kata)
            click.echo(f"Restored {kata_id}'s stub in {folder} (your files: {backup}).")
        else:
            click.echo(f"No workspace of {kata_id} to restore; its progress starts over.")
        store.add_event("reset", kata_id)
        if folder is not None:
            store.add_workspace(kata_id, str(folder))
    click.echo("The clock and the hints start again now.")


def _is_source(path: Path, folder: Path) -> bool:
    # Hidden folders (.kata-backup, .hypothesis, editors' swap folders) are never the learner's
    # sources, and grading itself may write there: watching them would regrade in a loop.
    try:
        parts = path.resolve().relative_to(folder).parts
    except ValueError:
        return False
    return path.suffix in WATCHED_SUFFIXES and not any(part.startswith(".") for part in parts)


def watch_folder(folder: Path, regrade, *, stop_event=None, debounce_ms: int = 300) -> int:
    """Call regrade(changed_paths) after every save of a source file in folder, until
    stop_event is set or Ctrl-C; returns how many regrades ran."""
    import watchfiles  # imported here: only `kata watch` needs it

    runs = 0
    folder = Path(folder).resolve()
    for changes in watchfiles.watch(folder, watch_filter=lambda _, p: _is_source(Path(p), folder),
                                    debounce=debounce_ms,
                                    stop_event=stop_event, raise_interrupt=False):
        regrade(sorted({Path(p) for _, p in changes}))
        runs += 1
    return runs


@click.command()
@click.argument("directory", required=False, default=".",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--backend", type=click.Choice(["auto", "gpu", "cpu"]), default="auto",
              show_default=True, help="Where to run the kernel.")
@click.option("--html", "as_html", is_flag=True,
              help="rewrite kata-grade.html in DIRECTORY after each grade (keep it open in a browser)")
@handled
def watch(directory: Path, backend: str, as_html: bool) -> None:
    """Regrade a workspace on every save.

    Grades DIRECTORY (default: the current folder) now, then again each time a .cu or .py file
    in it is saved. Ctrl-C stops.
    """
    from grader.cli.grade import grade as command

    def regrade(changed: list[Path]) -> None:
        what = f"{', '.join(p.name for p in changed)} changed" if changed else "first grade"
        click.secho(f"\n── {time.strftime('%H:%M:%S')} · {what} · grading", bold=True)
        try:
            command.main(args=[str(directory), "--backend", backend, *(["--html"] if as_html else [])],
                         prog_name="kata grade",
                         standalone_mode=False)
        except SystemExit:
            pass  # grade's exit code says pass/fail; watching goes on either way
        except KataError as exc:
            click.secho(f"kata: {exc}", fg="red", err=True)
        click.secho(f"watching {directory.resolve()} · Ctrl-C stops", dim=True)

    regrade([])
    watch_folder(directory, regrade)


@click.command()
@click.argument("kata_id", metavar="ID")
@handled
def mistakes(kata_id: str) -> None:
    """The classic mistakes of a kata you have passed, each with what kata reports for it.

    Each mistake is shown as its diff against the solution, followed by the grade kata gives it
    (graded on the CPU emulator the first time, then cached).
    """
    from rich.syntax import Syntax
    from rich.text import Text

    from grader import catalog
    from grader.practice import mistakes as _mistakes, progress
    from grader.practice.store import Store, default_home

    catalog.load(kata_id)
    with Store() as store:
        if not progress.has_passed(store, kata_id):
            raise UsageError(f"the mistakes of {kata_id} unlock once your kernel passes",
                             hint="`kata grade` your workspace first; `kata hint` for a nudge")
    console = _console()
    shown = _mistakes.show(kata_id, default_home(),
                           on_grade=lambda name: console.print(f"grading {name} ...", style="dim"))
    for item in shown:
        m = item.mistake
        console.rule(f"{kata_id} · {m.name}")
        console.print(f"{m.why}", soft_wrap=True)
        if not m.is_patch:
            console.print("(a whole file: this mistake lives in a different design from the solution's)", style="dim")
        console.print(Syntax(item.diff.rstrip(), "diff"))
        console.print(Text(item.report.rstrip()), soft_wrap=True)
        console.print()


commands = [status, solution, reset, watch, mistakes]
