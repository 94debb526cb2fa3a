"""The shapes a model run is made at: the kata's bench shape where its inputs and the run fit,
else smaller ones, halved along the kata's `model_halve` dimensions (those that shorten a
thread's loop, not only the grid) until they do; the estimate extrapolates the counts back."""
from __future__ import annotations

import numpy as np

#: inputs larger than this are not made at the bench shape: the model shape is halved until they fit
REAL_INPUT_BYTES = 192 << 20
MAX_HALVINGS = 14
#: a model dimension is not halved below this (a grid of whole blocks would turn into one
#: part-filled block, whose per-block counts no longer grow as the bench shape's do)
MODEL_LEAST = 64


def _env(kata, params: dict, scalars: dict) -> dict:
    return {**params, **scalars}


def _count(arg, env) -> int:
    from grader.catalog import evaluate

    n = 1
    for dim in arg.shape:
        n *= int(evaluate(dim, env))
    return n


def _scalars(kata, params: dict, extra: dict, inputs: dict | None = None, missing=None) -> dict:
    """Every scalar's value from the inputs, the case or extra; a missing one is `missing` when
    given and the scalar a float (a dry run: adamw's lr, which no launch geometry depends on),
    else a ValueError."""
    out = {}
    for arg in kata.args:
        if arg.role != "scalar":
            continue
        value = (inputs or {}).get(arg.name, params.get(arg.name, extra.get(arg.name)))
        if value is None and missing is not None and np.dtype(arg.dtype).kind == "f":
            value = missing  # a float (a learning rate, an epsilon): integers may size the grid
        if value is None:
            raise ValueError(f"no value for scalar {arg.name} at {params}")
        out[arg.name] = value.item() if isinstance(value, np.generic) else value
    return out


def input_bytes(kata, params: dict, extra: dict | None = None) -> float:
    """The bytes of the arrays the generator makes at params (from their shapes, else the cost
    model's compulsory bytes, which count every input once)."""
    try:
        scalars = _scalars(kata, params, extra or {})
        env = _env(kata, params, scalars)
        return float(sum(_count(a, env) * a.dtype.itemsize for a in kata.arrays))
    except (ValueError, KeyError, TypeError):
        try:
            return float(kata.reference.cost(**{**params, **(extra or {})}).get("bytes", 0) or 0)
        except (KeyError, TypeError, ValueError):  # a cost model that needs values only the inputs carry
            return 0.0


def halve(params: dict, names, least: int = 1) -> dict | None:
    """params with every named dimension above `least` halved, or None when none is left to halve."""
    out, changed = dict(params), False
    for name in names:
        v = out.get(name)
        if isinstance(v, int) and not isinstance(v, bool) and v // 2 >= least:
            out[name], changed = v // 2, True
    return out if changed else None


def halve_model(params: dict, names) -> dict | None:
    """A smaller model shape: a dimension is not halved below MODEL_LEAST, where a grid of whole
    blocks turns into one part-filled block and per-block counts stop growing as they will."""
    return halve(params, names, MODEL_LEAST)


def _halvable(kata, lib: dict, case: dict, model: bool = False) -> list:
    """The dimensions a model shape is halved along: the kata's `model_halve` (those that shorten
    a thread's loop, not only the grid), else its `check_halve`, else every integer above 1."""
    names = (lib.get("model_halve") if model else None) or lib.get("check_halve")
    return names or [k for k, v in case.items() if isinstance(v, int) and v > 1]


def _halvings_between(start: dict, end: dict, names) -> int:
    n, p = 0, dict(start)
    while p != end and n < MAX_HALVINGS:
        p = halve_model(p, names)
        if p is None:
            return 0
        n += 1
    return n if p == end else 0


def _model_cases(kata, lib: dict, entry: dict) -> list[dict]:
    """The model shapes to run first: the entry's, halved (in pairs) until the inputs fit. Where
    the arrays' sizes come from the inputs only (adamw's arena), the bench's (bench_scalars)
    shrink with the product of the halved dimensions."""
    cases = [dict(entry["model_case"])] + ([dict(entry["model_case2"])] if entry.get("model_case2") else [])
    names = _halvable(kata, lib, cases[-1], model=True)
    bench = dict(entry["case"])
    at_bench = input_bytes(kata, bench, entry.get("bench_scalars", {}))

    def size(params):
        exact = input_bytes(kata, params)
        if exact > 0:
            return exact
        ratio = 1.0
        for name in names:
            if isinstance(bench.get(name), int) and bench[name] > 0:
                ratio *= params.get(name, bench[name]) / bench[name]
        return at_bench * ratio

    if size(cases[-1]) <= REAL_INPUT_BYTES:
        return cases
    big = cases[-1]
    for _ in range(MAX_HALVINGS):
        smaller = halve(big, names)
        if smaller is None:
            break
        big = smaller
        if size(big) <= REAL_INPUT_BYTES:
            break
    small = halve(big, names)
    return [small, big] if small is not None else [big]
