"""Commands: `kata serve` (the grading server) and `kata serve admin ...` (the interviewer's side).

They parse, call grader.server, and render. docs/server.md describes a deployment.
"""
from __future__ import annotations

import datetime as _dt
import time
from pathlib import Path

import click

from grader.cli._errors import console as _console, handled
from grader.cli.serve_katas import kata_group, open_db
from grader.errors import UsageError

DEFAULT_URL = "http://127.0.0.1:8000"


@click.group(invoke_without_command=True)
@click.option("--data", "data", type=click.Path(file_okay=False, path_type=Path),
              help="The server's folder (SQLite database) [default: $KATA_HOME/server].")
@click.option("--db", "db_url", metavar="URL", help="postgresql://USER@HOST/DB instead of SQLite.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; keep loopback behind a reverse proxy for HTTPS.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--backend", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True,
              help="Where the workers grade (an assignment may ask for cpu or gpu).")
@click.option("--workers", type=click.IntRange(min=1), help="Grading slots [default: one per GPU, "
              "or one per --cores-per-worker cores].")
@click.option("--cores-per-worker", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--dispatch", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Grade on this machine, or send each job to a Ray cluster.")
@click.option("--ray-address", metavar="ADDR", help="An existing Ray cluster [default: start a local one].")
@click.option("--no-estimate", is_flag=True, help="CPU backend: skip the H200 time estimate on a pass.")
@click.option("--grade-function", hidden=True, help="Tests: a stand-in for the pipeline (module:function).")
@click.pass_context
@handled
def serve(ctx, data, db_url, host, port, backend, workers, cores_per_worker, dispatch, ray_address,
          no_estimate, grade_function) -> None:
    """Run the grading server: hidden tests stay on this machine.

    \b
      kata serve                                     SQLite in the data folder, port 8000
      kata serve admin create "Onsite" --katas reduce --minutes 45 --invite ada
      kata interview join http://HOST:8000 TOKEN     (the candidate, elsewhere)
      kata serve admin watch                         progress, live
      kata serve admin report CANDIDATE              the report and a link to its HTML page
    """
    if ctx.invoked_subcommand is not None:
        return
    import logging
    from dataclasses import replace

    import uvicorn

    from grader.pipeline import choose_backend
    from grader.server import pool as pools
    from grader.server.app import create_app
    from grader.server.database import open_database

    db = open_database(db_url, data)
    chosen = choose_backend(backend).name if backend == "auto" else backend
    config = replace(pools.plan(workers, chosen, cores_per_worker), dispatch=dispatch,
                     ray_address=ray_address, estimate=not no_estimate, grade_function=grade_function)
    pool = (pools.RayPool if dispatch == "ray" else pools.LocalPool)(db, config)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    shown = db.engine.url.render_as_string(hide_password=True)
    click.echo(f"kata serve: http://{host}:{port} · database {shown} · {config.workers} "
               f"{chosen} grading slot(s), {dispatch}")
    uvicorn.run(create_app(db, pool=pool), host=host, port=port, log_level="info",
                proxy_headers=True, forwarded_allow_ips="127.0.0.1")


@serve.group()
@click.option("--data", "data", type=click.Path(file_okay=False, path_type=Path),
              help="The server's folder [default: $KATA_HOME/server].")
@click.option("--db", "db_url", metavar="URL", help="The server's PostgreSQL database, if not SQLite.")
@click.pass_context
def admin(ctx, data, db_url) -> None:
    """The interviewer's commands (they use the server's database directly)."""
    ctx.obj = {"data": data, "db": db_url}


def _db(ctx):
    return open_db(ctx)


def _due(text: str | None) -> float | None:
    if not text:
        return None
    try:
        when = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--due {text}: not a date and time", hint="e.g. --due 2026-12-08T18:00") from None
    return when.timestamp()


def _print_invites(made, url: str) -> None:
    console = _console()
    for candidate, token in made:
        console.print(f"{candidate.name} (candidate {candidate.id}): "
                      f"kata interview join {url} {token}", markup=False)
    if made:
        console.print("Each token is shown once; kata keeps only its hash.")


@admin.command()
@click.argument("name")
@click.option("--katas", "kata_list", metavar="A,B", help="These katas (comma-separated).")
@click.option("--level", type=click.Choice(["warm-up", "core", "advanced"]), help="Draw from this level.")
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=45, show_default=True,
              help="Each candidate's time, from their join.")
@click.option("--due", metavar="WHEN", help="A cohort assignment: nobody submits after this (ISO date-time).")
@click.option("--languages", default="cuda", show_default=True, help="Allowed: cuda,triton,numba.")
@click.option("--backend", type=click.Choice(["cpu", "gpu", "auto"]), default="auto", show_default=True,
              help="Where the hidden tests run; auto: the server's own backend.")
@click.option("--show", type=click.Choice(["verdict", "public", "full"]), default="public", show_default=True,
              help="What a candidate sees of a grade.")
@click.option("--hidden-cases", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Your own hidden cases, kept on the server (TOML: vector-add = [ { n = 777777 } ]).")
@click.option("--invite", "names", metavar="A,B", help="Invite these candidates now.")
@click.option("--url", default=DEFAULT_URL, show_default=True, help="The server's address, for the join lines.")
@click.pass_context
@handled
def create(ctx, name, kata_list, level, count, minutes, due, languages, backend, show, hidden_cases, names,
           url) -> None:
    """Make an interview (or, with --due, a cohort assignment)."""
    import tomllib

    from grader.server import assignments

    cases = None
    if hidden_cases:
        try:
            cases = tomllib.loads(hidden_cases.read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"{hidden_cases}: not TOML ({exc})") from None

    db = _db(ctx)
    katas = [k.strip() for k in kata_list.split(",") if k.strip()] if kata_list else None
    made = assignments.create(db, name=name, katas=katas, level=level, count=count, minutes=minutes,
                              due_at=_due(due), languages=tuple(x.strip() for x in languages.split(",")),
                              backend=backend, show=show, hidden_cases=cases)
    click.echo(f"assignment {made.id}: {', '.join(made.katas)} · {minutes:g} min · {backend} · shows {show}")
    if names:
        _print_invites(assignments.invite(db, made.id, [n.strip() for n in names.split(",") if n.strip()]), url)


@admin.command()
@click.argument("assignment")
@click.argument("names", nargs=-1, required=True)
@click.option("--url", default=DEFAULT_URL, show_default=True)
@click.pass_context
@handled
def invite(ctx, assignment, names, url) -> None:
    """Per-candidate invite tokens for ASSIGNMENT."""
    from grader.server import assignments

    _print_invites(assignments.invite(_db(ctx), assignment, list(names)), url)


@admin.command(name="list")
@click.pass_context
@handled
def list_(ctx) -> None:
    """The assignments."""
    from grader.server import assignments

    for a in assignments.assignments(_db(ctx)):
        due = f" · due {_dt.datetime.fromtimestamp(a.due_at):%Y-%m-%d %H:%M}" if a.due_at else ""
        click.echo(f"{a.id}  {a.name} · {', '.join(a.katas)} · {a.minutes:g} min{due} · {a.backend}")


def _table(rows):
    from rich.table import Table

    from grader.practice.progress import format_duration

    table = Table(title="kata serve · candidates", title_justify="left")
    for column in ("candidate", "name", "state", "left", "uploads", "grading", "late", "verdicts"):
        table.add_column(column)
    for r in rows:
        table.add_row(r.candidate, r.name, r.state, "-" if r.left_s is None else format_duration(r.left_s),
                      str(r.submissions), str(r.pending), str(r.late),
                      " ".join(f"{k}:{v}" for k, v in r.verdicts.items()) or "-")
    return table


@admin.command()
@click.argument("assignment", required=False)
@click.option("--every", type=click.FloatRange(min=0.5), default=2.0, show_default=True)
@click.option("--once", is_flag=True, help="Print once and exit.")
@click.pass_context
@handled
def watch(ctx, assignment, every, once) -> None:
    """Each candidate's clock, uploads and verdicts, refreshed live (Ctrl-C stops)."""
    from rich.live import Live

    from grader.server import assignments

    db = _db(ctx)
    if once:
        _console().print(_table(assignments.progress(db, assignment)))
        return
    with Live(_table(assignments.progress(db, assignment)), console=_console(), auto_refresh=False) as live:
        try:
            while True:
                time.sleep(every)
                live.update(_table(assignments.progress(db, assignment)), refresh=True)
        except KeyboardInterrupt:
            pass


@admin.command()
@click.argument("candidate")
@click.option("--url", default=DEFAULT_URL, show_default=True, help="The server's address, for the link.")
@click.option("--minutes", type=click.FloatRange(min=1), default=60, show_default=True,
              help="How long the link works.")
@click.pass_context
@handled
def report(ctx, candidate, url, minutes) -> None:
    """CANDIDATE's report (hidden tests revealed) and a signed link to its HTML page."""
    from grader.practice.interview_report import render_terminal
    from grader.server import assignments

    db = _db(ctx)
    render_terminal(assignments.report(db, candidate), _console())
    click.echo(f"HTML report (valid {minutes:g} min): {assignments.report_link(db, url, candidate, minutes)}")


@admin.command()
@click.argument("assignment", required=False)
@click.option("--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to a file.")
@click.pass_context
@handled
def export(ctx, assignment, fmt, output) -> None:
    """Results of every candidate (of ASSIGNMENT) as CSV or JSON."""
    from grader.server import assignments

    text = assignments.export(_db(ctx), assignment, fmt)
    if output:
        output.write_text(text)
        click.echo(f"wrote {output}")
    else:
        click.echo(text, nl=False)


@admin.command()
@click.argument("candidate", required=False)
@click.option("--last", type=click.IntRange(min=1), default=50, show_default=True)
@click.pass_context
@handled
def audit(ctx, candidate, last) -> None:
    """The audit log: joins, uploads (late ones too), grades, regrades."""
    from sqlalchemy import select

    from grader.server.models import AuditEvent

    db = _db(ctx)
    with db.session() as s:
        query = select(AuditEvent).order_by(AuditEvent.id.desc()).limit(last)
        if candidate:
            query = query.where(AuditEvent.candidate_id == candidate)
        events = list(s.scalars(query))[::-1]
    for e in events:
        when = _dt.datetime.fromtimestamp(e.time).strftime("%Y-%m-%d %H:%M:%S")
        click.echo(f"{when} {e.kind:<18} {e.candidate_id or '-':<9} {e.submission_id or '':>5} "
                   f"{e.remote or ''} {e.detail}")


admin.add_command(kata_group)

commands = [serve]
