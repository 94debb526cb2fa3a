"""What the terminal shows of a report: no control characters, bounded lines, a bounded whole.

Much of a report is the learner's text (launch.py's prints and exceptions, compiler messages that
quote kernel.cu, device printf), and a terminal obeys escape sequences: `\\x1b[1A\\x1b[2K` erases
kata's FAIL line and `\\x1b[32m PASS` paints another. So every string the report prints passes
through `clean` here (at the one place where the report meets the console), markup off (learner
text such as "[green]PASS[/]" is text), each line capped, and the whole report capped. Control
characters are stripped by grader/terminal.py's `plain`, the one place that knows which they are.
"""
from __future__ import annotations

from rich.text import Text

from grader.terminal import plain

LINE_LIMIT = 2000  # characters of one line
REPORT_LIMIT = 48 << 10  # characters of a whole report on the terminal


def clean(text: str, line_limit: int = LINE_LIMIT) -> str:
    """`text` without control characters, each line cut at line_limit (with a note of the cut)."""
    text = plain(str(text))
    if len(text) <= line_limit:
        return text
    return "\n".join(line if len(line) <= line_limit else f"{line[:line_limit]}… ({len(line) - line_limit:,} "
                     "more characters)" for line in text.split("\n"))


class SafeConsole:
    """A rich Console whose print cleans every string and Text, prints no markup, and stops after
    REPORT_LIMIT characters with a line that says so (other attributes pass through)."""

    def __init__(self, console, limit: int = REPORT_LIMIT):
        self._console, self._limit, self._used, self._cut = console, limit, 0, False

    def print(self, *objects, **kwargs) -> None:
        if self._cut:
            return
        shown = []
        for obj in objects:
            if isinstance(obj, Text):
                obj = obj.copy()
                obj.plain = clean(obj.plain)
            elif isinstance(obj, str):
                obj = clean(obj)
            shown.append(obj)
        size = sum(len(o.plain) if isinstance(o, Text) else len(o) if isinstance(o, str) else 80 for o in shown)
        if self._used + size > self._limit:
            self._cut = True
            self._console.print(f"  … the rest of the report is not shown (over {self._limit >> 10} KiB; "
                                "`kata grade --json` has all of it)", markup=False)
            return
        self._used += size
        kwargs.setdefault("markup", False)
        self._console.print(*shown, **kwargs)

    def __getattr__(self, name):
        return getattr(self._console, name)
