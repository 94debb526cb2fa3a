"""One exception hierarchy for everything a user can cause, mapped to the CLI's exit codes.

Exit codes: 0 passed, 1 the submission failed, 2 usage error, 3 environment problem, 4 internal
error (a bug of ours). A KataError is expected: the CLI prints its message, never a traceback.
"""
from __future__ import annotations

PASS, FAIL, USAGE, ENVIRONMENT, INTERNAL = 0, 1, 2, 3, 4


class KataError(Exception):
    """An expected failure with a message that names the file, whose fault it is and the next step."""

    exit_code = USAGE

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint  # the next command or step, printed on its own line

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n{self.hint}"


class UsageError(KataError):
    """The command line or the workspace is not what the command needs (your input)."""

    exit_code = USAGE


class UnknownKata(UsageError):
    """A kata id that is not in the catalogue."""


class WorkspaceExists(UsageError):
    """`kata start` would overwrite the learner's work."""


class EnvironmentProblem(KataError):
    """Not the learner's fault: something to install, or a backend this machine lacks."""

    exit_code = ENVIRONMENT


class CatalogError(KataError):
    """A kata's files break docs/kata-format.md (the kata's author's fault, reported by file and key)."""

    exit_code = INTERNAL

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message, hint=hint or "the kata format is described in docs/kata-format.md; "
                         "`kata dev check ID` checks a kata's files")
