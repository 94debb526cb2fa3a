"""Hidden cases drawn from a secret: what a `kata serve` server grades with, so that reading a kata's
files (kata.toml ships in the open-source package, or a private kata's public part) does not tell a
candidate the inputs that decide their verdict.

Each of the kata's declared hidden cases is a template: the secret case keeps its shape (the same
extra keys and value distributions, its size's residue modulo a warp, so a ragged tail stays ragged
and a float4-aligned size stays aligned) and draws a size at most the template's (so it costs no more
to run) and at least half of it. Sizes up to a warp stay as declared: there the declared value is the
point (one row, three batches). A kata without hidden cases gets draws from its declared ranges,
biased to the range's top and to one past a power of two. The draw is a pure function of (secret,
kata), so a regrade after a crash runs the same cases, and different secrets give different cases.
"""
from __future__ import annotations

import hashlib
import json

import numpy as np

from grader.catalog import Kata, evaluate

WARP = 32  # a drawn size keeps the template's residue modulo this
FROM_RANGES = 3  # cases drawn for a kata that declares no hidden cases


def draw(kata: Kata, secret: int) -> tuple[dict, ...]:
    """The kata's secret hidden cases for this secret (one per declared hidden case)."""
    digest = hashlib.sha256(f"kata-secret-cases:{int(secret)}:{kata.id}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    known = {_key(c) for c in (*kata.public, *kata.hidden)}
    want = len(kata.hidden) or FROM_RANGES
    out: list[dict] = []
    for attempt in range(want * 8):  # a known case drawn again is drawn afresh
        template = kata.hidden[attempt % len(kata.hidden)] if kata.hidden else None
        case = _near(kata, template, rng) if template is not None else _in_ranges(kata, rng)
        if _key(case) not in known:
            known.add(_key(case))
            out.append(case)
        if len(out) == want:
            break
    return tuple(out)


def _key(case: dict) -> str:
    return json.dumps(case, sort_keys=True)


def _near(kata: Kata, template: dict, rng: np.random.Generator) -> dict:
    case = dict(template)
    env: dict = {}
    for p in kata.params:
        if p.choices is not None:
            if p.name not in case:  # the template left it to generate()'s default: a secret choice
                case[p.name] = p.choices[int(rng.integers(len(p.choices)))]
            env[p.name] = case[p.name]
            continue
        value = case[p.name]
        if isinstance(value, int) and not isinstance(value, bool) and value > WARP:
            steps = (value - value // 2) // WARP  # value - WARP * j stays >= value / 2
            drawn = value - WARP * int(rng.integers(0, steps + 1))
            met = _bound(p.high, template) is None or value <= _bound(p.high, template)
            case[p.name] = _within(drawn, value, _bound(p.low, env), _bound(p.high, env) if met else None)
        env[p.name] = case[p.name]
    return case


def _in_ranges(kata: Kata, rng: np.random.Generator) -> dict:
    case: dict = {}
    for p in kata.params:
        if p.choices is not None:
            case[p.name] = p.choices[int(rng.integers(len(p.choices)))]
            continue
        low, high = evaluate(p.low, case), evaluate(p.high, case)
        if isinstance(low, float) or isinstance(high, float):
            case[p.name] = float(rng.uniform(low, high))
            continue
        low, high = int(low), int(max(low, high))
        power = 1 << max(0, (high - 1).bit_length() - 1)
        hostile = [high, max(low, high - 1), min(high, power + 1), int(rng.integers(low, high + 1))]
        case[p.name] = hostile[int(rng.integers(len(hostile)))]
    return case


def _within(drawn: int, value: int, low, high) -> int:
    """A range over earlier parameters (k <= L) the template met stays met once they are drawn:
    the largest size of the drawn one's residue under the new bound, or the bound itself. (A
    template past a range's top is hidden on purpose: no upper bound is passed for it.)"""
    if high is not None and drawn > high:
        drawn -= WARP * -(-(drawn - high) // WARP)
        if drawn < max(1, low or 1):
            drawn = int(high)
    if low is not None and drawn < low <= value:
        drawn = value
    return drawn


def _bound(expr, env: dict):
    try:
        return evaluate(expr, env)
    except (KeyError, ValueError, SyntaxError):
        return None
