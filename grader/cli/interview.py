"""Commands: `kata interview start | grade | submit | status` (a mock interview with hidden tests).

They parse, call grader.practice.sessions, and render. Every subcommand first checks the countdown: a
session whose deadline has passed is submitted before anything else happens.
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from grader.cli import interview_remote
from grader.cli._errors import confirm, console as _console, handled
from grader.errors import UsageError
from grader.grading.grade_notes import count

BACKENDS = click.Choice(["auto", "gpu", "cpu"])


def _duration(seconds: float) -> str:
    from grader.practice.progress import format_duration

    return format_duration(seconds)


def _submit_overdue(backend: str) -> None:
    """The deadline passing is noticed by the next command: freeze and grade those sessions."""
    from grader.practice.store import Store

    with Store() as store:
        overdue = [s for s in store.sessions("open") if s.deadline <= time.time()]
        overdue += store.sessions("submitting")  # a submit that was interrupted
    for session in overdue:
        click.secho(f"Interview {session.id} ended at the deadline: submitting it now.",
                    fg="yellow")
        _submit_and_render(session.id, backend)


def require_sandbox() -> None:
    """Hidden tests are graded only where the OS can sandbox launch.py (docs/sandbox.md): exit 3."""
    from grader.errors import EnvironmentProblem
    from harness.sandbox import os_sandbox

    missing = os_sandbox.probe()["missing"]
    if missing:
        raise EnvironmentProblem("this machine cannot sandbox launch.py, so an interview's hidden tests "
                                 "are not graded here: " + "; ".join(missing),
                                 hint="submit on Linux with Landlock (kernel 5.13 or later) and libseccomp2 "
                                      "installed; practice grades (`kata grade`) still work here")


def _submit_and_render(session_id: str | None, backend: str) -> None:
    from grader.practice import sessions
    from grader.practice.interview_report import render_terminal

    require_sandbox()

    from grader.grading import stage_progress
    from grader.terminal import StatusLine

    with StatusLine() as status, stage_progress.listening(status.update):
        report = sessions.submit(session_id, backend=backend,
                                 progress=lambda kata: click.echo(f"grading {kata} on the hidden tests"))
    render_terminal(report, _console())
    from grader.practice.store import Store

    with Store() as store:
        path = store.session(report.session_id).report_path
    if path:
        click.echo(f"Report: {path}")


@click.group()
def interview() -> None:
    """Timed mock interviews with hidden tests.

    \b
      kata interview start --minutes 45 --level core
      kata interview grade          public tests only; tells how many hidden tests wait
      kata interview submit         freeze, run the hidden tests, write the report
      kata interview status         time left, attempts and hints per kata
      kata interview report         show a submitted interview's report again

    \b
    On an interviewer's server (`kata serve`):
      kata interview join URL TOKEN    make the workspaces; the server's clock starts
      kata interview grade             public tests, here
      kata interview submit            upload; the server grades with the hidden tests
    """


@interview.command()
@click.option("--minutes", type=click.FloatRange(min=0, min_open=True), default=45,
              show_default=True, help="Length of the countdown.")
@click.option("--katas", "kata_list", metavar="A,B", help="These katas (comma-separated).")
@click.option("--level", type=click.Choice(["warm-up", "core", "advanced"]),
              help="Draw the katas from this level.")
@click.option("--count", type=click.IntRange(min=1), default=1, show_default=True,
              help="How many katas to draw (with --level or from all).")
@click.option("--seed", type=int, help="Make the draw and the hidden tests reproducible.")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="Session folder [default: ./interview-<id>].")
@click.option("--backend", type=BACKENDS, default="auto", show_default=True,
              help="Backend for grading a session whose time ran out.")
@handled
def start(minutes: float, kata_list: str | None, level: str | None, count: int, seed: int | None,
          folder: Path | None, backend: str) -> None:
    """Pick katas, make their workspaces and start the countdown."""
    from grader.practice import sessions
    from grader.practice.store import Store

    if kata_list and level:
        raise UsageError("--katas and --level pick the katas two ways; give one of them")
    _submit_overdue(backend)
    with Store() as store:
        running = store.sessions("open")
    if running:
        raise UsageError(f"interview {running[-1].id} is still running "
                         f"({_duration(running[-1].deadline - time.time())} left)",
                         hint="finish it with `kata interview submit` first")
    names = [k.strip() for k in kata_list.split(",") if k.strip()] if kata_list else None
    chosen = sessions.pick_katas(names, level, count, seed)
    session = sessions.start(chosen, minutes, folder, seed)
    console = _console()
    console.print(f"Interview {session.id} started: {_duration(minutes * 60)} on the "
                  f"clock, ends at {time.strftime('%H:%M', time.localtime(session.deadline))}.")
    for kata in chosen:
        console.print(f"  {kata:<12} {Path(session.folder) / kata}")
    console.print("Read statement.md, edit kernel.cu (and launch.py), then:\n"
                  "  kata interview grade      public tests (as often as you like)\n"
                  "  kata interview submit     when you are done; hidden tests run then")


@interview.command()
@click.argument("kata", required=False)
@click.option("--backend", type=BACKENDS, default="auto", show_default=True,
              help="Where to run the kernel.")
@handled
def grade(kata: str | None, backend: str) -> None:
    """Run the public tests on KATA (default: the workspace you are in)."""
    from grader.practice import sessions
    from grader.practice.store import Store

    remote = interview_remote.find()
    if remote is not None:
        interview_remote.grade(remote, kata, backend)
        return

    _submit_overdue(backend)
    with Store() as store:
        session = sessions.current(store)
        if session.state != "open":
            raise UsageError(f"interview {session.id} is over",
                             hint="`kata interview status` shows where its report is")
        kata = sessions.kata_for(store, session, kata)
    from grader.grading import report as report_view, stage_progress
    from grader.terminal import StatusLine

    with StatusLine() as status, stage_progress.listening(status.update):
        result = sessions.grade_public(session, kata, backend)

    # The pipeline's own rendering, so an interview grade reads the same as `kata grade`.
    report_view.render(result.report, _console(),
                       extra=f"attempt {result.attempt} · {_duration(result.left_s)} left · "
                             f"{result.hidden_cases} hidden adversarial cases and "
                             f"{result.secret_drawn} drawn with a secret seed run at "
                             "`kata interview submit`")
    raise SystemExit(0 if result.report.verdict == "pass" else 1)


@interview.command()
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--backend", type=BACKENDS, default="auto", show_default=True,
              help="Where to run the hidden tests.")
@click.option("--kata", "kata", help="Server interview: upload this kata only [default: the workspace "
              "you are in, else all].")
@click.option("--no-wait", is_flag=True, help="Server interview: do not wait for the grade.")
@handled
def submit(yes: bool, backend: str, kata: str | None, no_wait: bool) -> None:
    """Freeze the workspaces, run the hidden tests and write the report (on a server interview:
    upload, and the server grades)."""
    from grader.practice import sessions
    from grader.practice.store import Store

    remote = interview_remote.find()
    if remote is not None:
        interview_remote.submit(remote, kata, not no_wait)
        return

    with Store() as store:
        session = sessions.current(store)
    if session.state == "open" and session.deadline > time.time() and not yes:
        if not confirm(f"Submit interview {session.id} with {_duration(session.deadline - time.time())} "
                       "left? Your files become read-only"):
            click.echo("Not submitted; the clock is still running.")
            return
    _submit_and_render(session.id, backend)


@interview.command()
@click.option("--backend", type=BACKENDS, default="auto", show_default=True,
              help="Backend for grading a session whose time ran out.")
@handled
def status(backend: str) -> None:
    """Time left, attempts and hints of the interviews, newest last."""
    from grader.practice.store import Store

    remote = interview_remote.find()
    if remote is not None:
        interview_remote.status(remote)
        return

    _submit_overdue(backend)
    console = _console()
    with Store() as store:
        all_sessions = store.sessions()
        if not all_sessions:
            console.print("No interview yet: `kata interview start` begins one.")
            return
        for session in all_sessions[-5:]:
            if session.state == "open":
                state = f"{_duration(session.deadline - time.time())} left"
            else:
                state = f"submitted · report {session.report_path or '(not written)'}"
            console.print(f"interview {session.id} · {session.folder} · {state}")
            for k in store.session_katas(session.id):
                attempts = len(store.attempts(k.kata, session_id=session.id, phase="public"))
                hints = store.hints_taken(k.kata, session_id=session.id)
                verdict = f" · {_verdict(k.outcome)}" if k.outcome else ""
                console.print(f"  {k.kata:<12} {count(attempts, 'attempt')} · "
                              f"{count(hints, 'hint')}{verdict}")


@interview.command()
@click.argument("session_id", metavar="[ID]", required=False)
@handled
def report(session_id: str | None) -> None:
    """Show a submitted interview's report again (default: the latest)."""
    from grader.practice import sessions
    from grader.practice.interview_report import render_terminal
    from grader.practice.store import Store

    with Store() as store:
        session = sessions.current(store, session_id=session_id)
        if session.state != "submitted":
            raise UsageError(f"interview {session.id} has no report yet",
                             hint="`kata interview submit` grades it and writes one")
        render_terminal(sessions.report_for(store, session), _console())
    if session.report_path:
        click.echo(f"Report: {session.report_path}")


def _verdict(outcome: dict) -> str:
    from grader.practice.interview_report import KataOutcome

    return KataOutcome.from_dict(outcome).verdict


interview.add_command(interview_remote.join)
commands = [interview]
