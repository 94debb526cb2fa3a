"""Which stage a grade is in, for whoever shows progress (the CLI's status line), and nobody else.

The pipeline calls `stage("compile")`, `stage("cases", done, total)`, ... as it goes; a listener
installed with `listening(fn)` receives (stage, done, total). With no listener (tests, --json
into a file, the library used directly) the calls cost a global lookup and print nothing.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Callable

Listener = Callable[[str, "int | None", "int | None"], None]

_listener: Listener | None = None
_lock = threading.Lock()


def stage(name: str, done: int | None = None, total: int | None = None) -> None:
    """The grade entered stage `name` (compile, cases, sanitizer, screen, model, timing)."""
    listener = _listener
    if listener is not None:
        try:
            listener(name, done, total)
        except Exception:  # noqa: BLE001 - showing progress must never fail a grade
            pass


@contextlib.contextmanager
def listening(listener: Listener):
    global _listener
    with _lock:
        previous, _listener = _listener, listener
    try:
        yield
    finally:
        with _lock:
            _listener = previous
