"""`kata interview join` and the server side of `kata interview grade | submit | status`: an
interview on an interviewer's `kata serve`. They parse, call grader.server.client, and render.
"""
from __future__ import annotations

from pathlib import Path

import click

from grader.cli._errors import console as _console, handled
from grader.errors import UsageError


def _duration(seconds: float) -> str:
    from grader.practice.progress import format_duration

    return format_duration(seconds)


def find():
    """The server interview whose folder we are in, or None (a local mock interview)."""
    from grader.server import client

    return client.find()


@click.command()
@click.argument("url")
@click.argument("token")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
              help="Session folder [default: ./interview].")
@click.option("--lang", type=click.Choice(["cuda", "triton", "numba"]),
              help="Kernel language, if the interviewer allows several.")
@handled
def join(url: str, token: str, folder: Path | None, lang: str | None) -> None:
    """Join an interview on a kata server: make the workspaces; the server's clock starts."""
    from grader.server import client

    session = client.join(url, token, folder, lang)
    console = _console()
    console.print(f"Joined: {_duration(session.left_s())} on the server's clock.")
    for kata in session.katas:
        console.print(f"  {kata:<12} {session.folder / kata}")
    console.print("Read statement.md, edit the kernel, then:\n"
                  "  kata interview grade      public tests, on this machine\n"
                  "  kata interview submit     upload; the server runs the hidden tests")


def grade(remote, kata: str | None, backend: str) -> None:
    """A server interview's public tests, on this machine (the hidden ones never come here)."""
    from grader import pipeline
    from grader.grading import report as report_view
    from grader.server import client

    katas = client.kata_here(remote, kata)
    if len(katas) > 1:
        raise UsageError(f"this interview has several katas ({', '.join(katas)})",
                         hint="name one, or run the command inside its workspace")
    result = pipeline.grade(katas[0], remote.folder / katas[0], backend=backend)
    left = remote.left_s()
    report_view.render(result, _console(),
                       extra=(f"{_duration(left)} left on the server's clock" if left > 0 else
                              "time is up on the server's clock: uploads are refused") +
                       " · the hidden tests run on the server at `kata interview submit`")
    raise SystemExit(0 if result.verdict == "pass" else 1)


def submit(remote, kata: str | None, wait: bool) -> None:
    from grader.server import client

    console = _console()
    failed = False
    for name in client.kata_here(remote, kata):
        view = client.upload(remote, name)
        console.print(f"{name}: upload #{view['seq']} received by the server (kept, queued for grading)")
        if not wait:
            continue
        view = client.wait(remote, view["id"])
        client.render(view, console)
        failed |= (view.get("result") or {}).get("verdict") != "pass"
    raise SystemExit(1 if failed else 0)


def status(remote) -> None:
    from grader.server import client

    data = client.status(remote)
    left = data["deadline"] - data["server_time"]
    console = _console()
    console.print(f"server interview · {_duration(left) + ' left' if left > 0 else 'time is up'} "
                  f"(server clock) · {remote.url}")
    for view in data["submissions"]:
        client.render(view, console)
