"""What the learner's code printed, for the report: launch.py's prints and the kernels' printf.

Both are shown for one case (the failing one, else the first that printed), capped: a printf in a
kernel of a million threads would otherwise bury the verdict. Kernel lines are ordered by launch,
then block, then thread (the GPU interleaves them unpredictably; sorted they can be read), and what
was cut is counted.
"""
from __future__ import annotations

PRINT_LINES = 40  # of launch.py's output shown
PRINTF_LINES = 60  # of the kernels' printf output shown


def _case(printed: dict, failure) -> str:
    label = failure.case.label() if failure is not None else None
    return label if label in printed else next(iter(printed))


def plan_note(printed: dict, failure) -> tuple[str, ...]:
    """printed: case label -> launch.py's stdout and stderr."""
    if not printed:
        return ()
    label = _case(printed, failure)
    lines = printed[label].rstrip().splitlines()
    cut = f"\n    ... {len(lines) - PRINT_LINES} more lines" if len(lines) > PRINT_LINES else ""
    body = "\n    ".join(lines[:PRINT_LINES])
    return (f"launch.py printed (case {label}):\n    {body}{cut}",)


def printf_note(printed: dict, failure) -> tuple[str, ...]:
    """printed: case label -> ((kernel, lines, cut), ...) from the CPU backend (one per launch)."""
    if not printed:
        return ()
    label = _case(printed, failure)
    if isinstance(printed[label], str):  # the GPU's output: its order (lines carry no thread)
        lines = printed[label].rstrip().splitlines()
        more = (f"\n    ... {len(lines) - PRINTF_LINES} more lines cut (print from fewer threads, e.g. if (i < 4))"
                if len(lines) > PRINTF_LINES else "")
        body = "\n    ".join(lines[:PRINTF_LINES])
        return (f"kernel printf (case {label}, as the GPU printed it, in its order):\n    {body}{more}",)
    rows, cut = [], 0
    for kernel, lines, dropped in printed[label]:
        cut += int(dropped)
        for _, _, _, block, thread, text in sorted(lines, key=lambda r: (r[0], r[1], r[2])):
            rows.append(f"{kernel} block {_xyz(block)} thread {_xyz(thread)}: {text.rstrip()}")
    shown = rows[:PRINTF_LINES]
    cut += len(rows) - len(shown)
    more = f"\n    ... {cut} more lines cut (print from fewer threads, e.g. if (i < 4))" if cut else ""
    body = "\n    ".join(shown)
    return (f"kernel printf (case {label}), by block and thread:\n    {body}{more}",)


def accuracy_note(runs) -> tuple[str, ...]:
    """The first case whose check passed only within every summation order's bound (order_bound.py)."""
    for data, outcome in runs:
        notes = getattr(outcome.check, "notes", ()) if outcome.check is not None else ()
        if notes:
            return (f"{notes[0]} (case {outcome.case.label()})",)
    return ()


def _xyz(v) -> str:
    return "(" + ",".join(str(int(x)) for x in v) + ")"
