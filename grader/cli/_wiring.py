"""What a caller of the `kata` command may pass in through click's context object: the backend that
stands for a --backend value (`cli.main(obj={"backends": {"auto": BackendChoice(...)}})`; the
tests pass their numpy fake, or the CPU emulator on a machine with a GPU, this way). `kata` itself
passes nothing, so each value means what its help says."""

from __future__ import annotations

import click


def backend(requested: str):
    """The --backend value as given, or the BackendChoice the caller wired in for it."""
    ctx = click.get_current_context(silent=True)
    wired = (ctx.find_root().obj or {}) if ctx is not None else {}
    return wired.get("backends", {}).get(requested, requested)
