"""The CLI's one error boundary: a KataError prints its message and exits with its code; anything
else is a bug of ours, printed with its traceback and exit code 4."""
from __future__ import annotations

import errno
import sys
import traceback
from functools import wraps

import click

from grader.errors import INTERNAL, EnvironmentProblem, KataError
from grader.grading.safe_text import clean
from grader.terminal import console  # noqa: F401 - the commands' console, re-exported


#: what an unwritable, full or misconfigured folder raises: the machine's setup, exit 3
SETUP_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR, errno.EISDIR}


def _print_error(exc: KataError) -> None:
    err = console(err=True)
    err.print(clean(f"kata: {exc.message}"), style="red")
    if exc.hint:
        err.print(clean(f"  {exc.hint}"))
    sys.exit(exc.exit_code)


def filesystem_problem(exc: OSError) -> KataError:
    """An OSError as the exit-3 message: what could not be done to which path, and what to do."""
    from grader.practice.store import FIX_HOME

    where = f" {exc.filename}" if exc.filename else ""
    return EnvironmentProblem(f"cannot write or read{where}: {exc.strerror or exc}",
                              hint=f"check that folder's permissions and free space; for kata's own data, {FIX_HOME}")


def handled(fn):
    """KataError → its message and exit code; anything else is our bug: traceback, exit 4."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KataError as exc:
            _print_error(exc)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, BrokenPipeError):
            raise
        except Exception as exc:  # noqa: BLE001 - the one place a bug of ours is reported
            if isinstance(exc, OSError) and exc.errno in SETUP_ERRNOS:  # a folder nobody can write: the setup
                _print_error(filesystem_problem(exc))
            click.echo(traceback.format_exc(), err=True)
            click.echo("kata: internal error (a bug in kata, not in your kernel); please report it "
                       "with the traceback above", err=True)
            sys.exit(INTERNAL)
    return wrapper


def confirm(question: str, *, yes_flag: str = "-y") -> bool:
    """Ask before a command replaces something; True to go on. Input that ends before an answer
    (`< /dev/null`, a script) is a usage error that names the flag that answers yes."""
    from grader.errors import UsageError

    try:
        return click.confirm(question, default=False)
    except click.Abort:  # end of input, or Ctrl-C at the question
        if sys.stdin is not None and sys.stdin.isatty():
            return False
        raise UsageError("kata asked before changing anything, and its input ended with no answer",
                         hint=f"pass {yes_flag} to answer yes (nothing was changed)") from None
