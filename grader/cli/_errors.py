"""The CLI's one error boundary: a KataError prints its message and exits with its code; anything
else is a bug of ours, printed with its traceback and exit code 4."""
from __future__ import annotations

import sys
import traceback
from functools import wraps

import click
from rich.console import Console

from grader.errors import INTERNAL, KataError
from grader.grading.safe_text import clean


def console(err: bool = False) -> Console:
    return Console(file=sys.stderr if err else sys.stdout, highlight=False, soft_wrap=True)


def handled(fn):
    """KataError → its message and exit code; anything else is our bug: traceback, exit 4."""
    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KataError as exc:
            err = console(err=True)
            err.print(clean(f"kata: {exc.message}"), style="red", markup=False)
            if exc.hint:
                err.print(clean(f"  {exc.hint}"), markup=False)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except Exception:
            click.echo(traceback.format_exc(), err=True)
            click.echo("kata: internal error (a bug in kata, not in your kernel); please report it "
                       "with the traceback above", err=True)
            sys.exit(INTERNAL)
    return wrapper
