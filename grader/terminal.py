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
#: C0 and C1 control characters but tab and newline (ESC, BEL, CR, backspace, CSI included)
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

    def on_broken_pipe(self) -> None:
        """rich's default exits with status 1: here the command goes on, so a passing grade read
        by `head -1` still exits 0."""
        stop_output(self.file)

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


class StatusLine:
    """The grade's stage on stderr while it works: `⠋ cases 7/26 · 4 s`, shown once a grade has
    run for DELAY_S (a quick grade never flickers) and erased when it ends. On a terminal by
    default; piped or redirected only when asked (`--progress`), and then as one plain line per
    stage, so a log gets no spinner frames. Use as `with StatusLine(mode) as line:` and hand
    `line.update` to grader.grading.stage_progress.listening."""

    DELAY_S = 2.0

    def __init__(self, mode: str = "auto", console: Terminal | None = None):
        import time

        self._clock = time.monotonic
        self.console = console or Terminal(file=sys.stderr)
        self.shown = mode == "on" or (mode == "auto" and self.console.is_terminal)
        self.animated = self.shown and self.console.is_terminal
        self.started = self._clock()
        self.text = "starting"
        self._last_stage = None
        self._live = None
        self._spinner = None

    def update(self, stage: str, done: int | None = None, total: int | None = None) -> None:
        count = "" if done is None else (f" {done}/{total}" if total and done <= total else f" {done}")
        self.text = f"{stage}{count}"
        if self.shown and not self.animated and stage != self._last_stage:
            self.console.print(f"kata: {stage}", style="dim")
        self._last_stage = stage

    def __rich__(self):
        elapsed = self._clock() - self.started
        if elapsed < self.DELAY_S:
            return Text("")
        self._spinner.text = Text(f"{self.text} · {elapsed:.0f} s", style="dim")
        return self._spinner

    def __enter__(self) -> "StatusLine":
        if self.animated:
            from rich.live import Live
            from rich.spinner import Spinner

            self._spinner = Spinner("dots")
            self._live = Live(self, console=self.console, transient=True, refresh_per_second=8)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
