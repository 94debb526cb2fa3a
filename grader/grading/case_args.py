"""`--case KEY=VALUE` checked against the kata's declared parameters before anything is allocated.

A value outside what the kata declares is the learner's typo (exit 2 with the allowed range), not a
745 GiB allocation or a traceback. The allowed range of a parameter is its kata.toml range widened
to the catalogue's own public and hidden cases (a failing report's rerun command names those).
"""
from __future__ import annotations

from grader.catalog import Kata, evaluate
from grader.errors import UsageError


def _span(kata: Kata, name: str, low, high):
    """(low, high) widened to every public and hidden case's value of `name`."""
    values = [c[name] for c in (*kata.public, *kata.hidden) if isinstance(c.get(name), (int, float))]
    if values:
        low, high = min([low, *values]), max([high, *values])
    return low, high


def describe(kata: Kata) -> str:
    """'n (an integer in 1..1081344), dist (one of mixed, offset, negative)' for hints."""
    parts = []
    for p in kata.params:
        if p.choices is not None:
            parts.append(f"{p.name} (one of {', '.join(map(str, p.choices))})")
        else:
            try:
                low, high = _span(kata, p.name, evaluate(p.low, {}), evaluate(p.high, {}))
                kind = "a number" if isinstance(low, float) or isinstance(high, float) else "an integer"
                parts.append(f"{p.name} ({kind} in {low}..{high})")
            except KeyError:
                parts.append(f"{p.name} (its range depends on another parameter)")
    return ", ".join(parts)


def validate(kata: Kata, values: dict) -> dict:
    """The parsed --case values, checked; raises UsageError (exit 2) naming the allowed values."""
    names = [p.name for p in kata.params]
    hint = f"kata {kata.id}'s parameters: {describe(kata)}"
    for key in values:
        if key not in names:
            raise UsageError(f"--case {key}={values[key]}: kata {kata.id} has no parameter {key!r}", hint=hint)
    env: dict = {}
    for p in kata.params:
        if p.name not in values:
            continue
        value = values[p.name]
        shown = f"--case {p.name}={value}"
        if p.choices is not None:
            if value not in p.choices:
                raise UsageError(f"{shown}: choose one of {', '.join(map(str, p.choices))}", hint=hint)
            env[p.name] = value
            continue
        try:
            low, high = evaluate(p.low, {**env, **values}), evaluate(p.high, {**env, **values})
        except (KeyError, TypeError):
            env[p.name] = value
            continue
        low, high = _span(kata, p.name, low, high)
        integral = not (isinstance(low, float) or isinstance(high, float))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or integral and not isinstance(value, int):
            kind = "an integer" if integral else "a number"
            raise UsageError(f"{shown}: {p.name} must be {kind} in {low}..{high}", hint=hint)
        if not low <= value <= high:
            raise UsageError(f"{shown}: {p.name} must be in {low}..{high} for kata {kata.id}", hint=hint)
        env[p.name] = value
    return values
