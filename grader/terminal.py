"""The one console every command prints through: text is text, and a pipe gets all of it.

Learner source, compiler messages and catalogue text contain square brackets (`x[i]`, `[in CUDA
C, triton]`) that rich would read as markup and drop, and may contain control characters (an
escape sequence in a printf, a stray carriage return) that would redraw the learner's terminal.
So markup and emoji codes are off for every print, styles are given as `style=`, and control
characters other than newline and tab are removed from every string and Text printed.

When stdout is not a terminal (`kata list | cat`, a file, CI), nothing is wrapped or cut at 80
columns: the console is as wide as the longest line needs, rules are short, code is printed as
plain numbered lines. A reader that stops early (`kata grade | head -1`) ends the output, not the
command: its exit code is still the verdict's.
"""
from __future__ import annotations

import os
import re
import sys

from rich.console import Console
from rich.syntax import Syntax
from rich.text import Text

PIPE_WIDTH = 10_000  # wide enough that no table cell of ours is ever wrapped or cut
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def plain(text: str) -> str:
    """text without control characters (newline and tab kept)."""
    return _CONTROL.sub("", text)


def _clean(obj):
    if isinstance(obj, str):
        return plain(obj)
    if isinstance(obj, Text) and _CONTROL.search(obj.plain):
        return Text(plain(obj.plain), style=obj.style)
    return obj


class Terminal(Console):
    """rich's Console with markup off, control characters stripped and a plain pipe layout."""

    def __init__(self, *, file=None, force_terminal: bool | None = None, **kwargs):
        file = file if file is not None else sys.stdout
        kwargs.setdefault("highlight", False)
        kwargs.setdefault("soft_wrap", True)
        super().__init__(file=file, markup=False, emoji=False, force_terminal=force_terminal, **kwargs)
        if not self.is_terminal and "width" not in kwargs:
            self.width = PIPE_WIDTH

    @property
    def piped(self) -> bool:
        return not self.is_terminal

    def print(self, *objects, **kwargs) -> None:
        kwargs.pop("markup", None)  # never markup: a caller's markup=True would eat `x[i]` again
        objects = tuple(self._plain_code(o) if isinstance(o, Syntax) and self.piped else _clean(o)
                        for o in objects)
        try:
            super().print(*objects, markup=False, **kwargs)
        except BrokenPipeError:
            stop_output(self.file)

    def rule(self, title="", **kwargs) -> None:
        if not self.piped:
            try:
                return super().rule(_clean(title), **kwargs)
            except BrokenPipeError:
                return stop_output(self.file)
        self.print(f"── {plain(str(title))} ──" if title else "──")

    @staticmethod
    def _plain_code(syntax: Syntax) -> Text:
        lines = syntax.code.rstrip("\n").split("\n")
        if not syntax.line_numbers:
            return Text(plain("\n".join(lines)))
        width = len(str(len(lines) + syntax.start_line - 1))
        return Text(plain("\n".join(f"{n:>{width}} │ {line}" for n, line in
                                    enumerate(lines, start=syntax.start_line))))


def stop_output(stream=None) -> None:
    """The reader went away: send the rest of this stream to /dev/null, quietly.

    Python would otherwise report the broken pipe again when it flushes the stream at exit."""
    stream = stream or sys.stdout
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def console(err: bool = False) -> Terminal:
    return Terminal(file=sys.stderr if err else sys.stdout)
