"""Commands: `kata serve admin kata add | list | remove`, an interviewer's private katas (kept only in the
server's database; grader/server/private_katas.py). They parse, call grader.server, and render.
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

import click

from grader.cli._errors import console as _console, handled


def open_db(ctx):
    """The server's database (`kata serve admin --data/--db`), its private katas loadable by id."""
    from grader.server import private_katas
    from grader.server.database import open_database

    db = open_database(ctx.obj["db"], ctx.obj["data"])
    private_katas.register_all(db)
    return db


@click.group(name="kata")
def kata_group() -> None:
    """Private katas: your own kata folders, kept only on this server."""


@kata_group.command(name="add")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--no-grade", is_flag=True, help="Check the files only; do not grade the stub and the solution.")
@click.option("--backend", type=click.Choice(["cpu", "gpu", "auto"]), default="cpu", show_default=True,
              help="Where the stub and the solution are graded.")
@click.pass_context
@handled
def kata_add(ctx, folder, no_grade, backend) -> None:
    """Add the kata in FOLDER (kata.toml, statement.md, stub.cu, launch.py, reference.py, solution/).

    Candidates receive its statement, stub, launch plan, reference.py and kata.toml without its hidden
    cases; the hidden cases and solution/ stay on the server.
    """
    from rich.text import Text

    from grader.server import private_katas

    console = _console()

    def show(check) -> None:
        mark = ("ok", "green") if check.ok else ("FAILED", "bold red")
        console.print(Text.assemble("  ", mark, f" {check.item}: {check.got}"))

    if not no_grade:
        console.print("checking the files, then grading the stub and the solution (a minute or more on the CPU)")
    added = private_katas.add(open_db(ctx), folder, grade=not no_grade, backend=backend, on_check=show)
    console.print(f"private kata {added.kata} added ({added.files} files); use it with "
                  f"`kata serve admin create NAME --katas {added.kata}`", markup=False)


@kata_group.command(name="list")
@click.pass_context
@handled
def kata_list(ctx) -> None:
    """This server's private katas."""
    from grader.server import private_katas

    for found in private_katas.listing(open_db(ctx)):
        added = _dt.datetime.fromtimestamp(found.added_at).strftime("%Y-%m-%d %H:%M")
        click.echo(f"{found.id}  {len(found.files)} files · added {added} · sha256 {found.sha256[:12]}")


@kata_group.command(name="remove")
@click.argument("kata_id")
@click.pass_context
@handled
def kata_remove(ctx, kata_id) -> None:
    """Remove a private kata no assignment uses."""
    from grader.server import private_katas

    private_katas.remove(open_db(ctx), kata_id)
    click.echo(f"removed {kata_id}")
