"""Which inputs a grade runs: public edge cases, hypothesis-drawn cases, and (on request) hidden ones.

Hypothesis is used as a library: strategies come from kata.toml's [params], the seed is fixed per
run so a failure reproduces, there is no deadline and no example database (nothing is written into
the learner's folder), and a failing drawn case is shrunk to the smallest one that still fails.
Every case's data comes from reference.generate with an rng seeded from (run seed, case), so
`kata grade --case n=257 --seed S` rebuilds exactly the inputs that failed.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from grader.catalog import Kata, evaluate
from grader.errors import CatalogError, UsageError

DEFAULT_SEED = 0
DEFAULT_EXAMPLES = 12
SHRINK_BUDGET_S = 30.0  # after this, unseen shrink candidates count as passing (shrinking stops)


@dataclass(frozen=True)
class Case:
    params: dict  # the case's keys as kata.toml writes them (n, dist, ...)
    origin: str  # public | drawn | hidden | requested
    seed: int  # the run's seed; the data's rng derives from (seed, params)

    def label(self) -> str:
        return ", ".join(f"{k} = {v}" for k, v in self.params.items())

    def cli(self) -> str:
        return " ".join(f"--case {k}={v}" for k, v in self.params.items())

    def rng(self) -> np.random.Generator:
        digest = hashlib.sha256(json.dumps([self.seed, self.params], sort_keys=True).encode()).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@dataclass(frozen=True)
class CaseData:
    case: Case
    inputs: dict  # generate()'s arrays and data-dependent scalars
    expected: dict  # reference()'s outputs
    scalars: dict  # the value of every scalar arg
    elements: int  # input elements in total: how "large" the case is


def reference_params(kata: Kata, params: dict, inputs: dict) -> dict:
    """The case's parameters plus the scalar args generate() derived from the data (e.g. nnz): the
    keyword arguments reference(), cost() and check() receive."""
    env = dict(params)
    for arg in kata.args:
        if arg.role == "scalar" and arg.name in inputs:
            env[arg.name] = inputs[arg.name]
    return env


def materialize(kata: Kata, case: Case) -> CaseData:
    """Inputs, expected outputs and scalar values of one case; the kata's contract checked."""
    ref = kata.file("reference.py")
    inputs = dict(kata.reference.generate(case.rng(), **case.params))
    scalars = {}
    for arg in kata.args:
        if arg.role == "scalar":
            if arg.name in inputs:
                scalars[arg.name] = inputs[arg.name]
            elif arg.name in case.params:
                scalars[arg.name] = case.params[arg.name]
            else:
                raise CatalogError(f"{ref}: scalar arg {arg.name!r} is neither a case parameter nor "
                                   "returned by generate()")
            value = scalars[arg.name]
            scalars[arg.name] = value.item() if isinstance(value, np.generic) else value
        elif arg.role in ("in", "inout"):
            value = inputs.get(arg.name)
            if not isinstance(value, np.ndarray):
                raise CatalogError(f"{ref}: generate() did not return array {arg.name!r}")
            if value.dtype != arg.dtype:
                raise CatalogError(f"{ref}: generate() returned {arg.name} as {value.dtype}, "
                                   f"kata.toml declares {arg.dtype}")
    env = {**case.params, **scalars}
    for arg in kata.arrays:
        if arg.name in inputs:
            _check_shape(kata, arg, inputs[arg.name].size, env)
    expected = {k: np.asarray(v) for k, v in kata.reference.reference(inputs, **case.params).items()}
    for arg in kata.args:
        if arg.role in ("out", "inout") and arg.name not in expected:
            raise CatalogError(f"{ref}: reference() did not return output {arg.name!r}")
    elements = sum(int(inputs[a.name].size) for a in kata.arrays if a.name in inputs)
    return CaseData(case, inputs, expected, scalars, elements)


def _check_shape(kata: Kata, arg, size: int, env: dict) -> None:
    try:
        want = int(np.prod([evaluate(d, env) for d in arg.shape]))
    except KeyError:
        return  # shapes over names the case does not carry are documentation only
    if want != size:
        raise CatalogError(f"{kata.file('reference.py')}: generate() returned {arg.name} with {size} "
                           f"elements, kata.toml's shape {list(arg.shape)} says {want}")


def parse_overrides(pairs: tuple[str, ...], kata: Kata) -> dict:
    """`--case n=257 --case dist=offset` → {"n": 257, "dist": "offset"}, values typed like TOML."""
    out: dict = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--case {pair!r}: expected KEY=VALUE, e.g. --case n=257")
        key, raw = key.strip(), raw.strip()
        for convert in (int, float):
            try:
                value = convert(raw)
                break
            except ValueError:
                continue
        else:
            value = raw
        out[key] = value
    from grader.grading.case_args import describe, validate

    validate(kata, out)
    ranged = [p.name for p in kata.params if p.choices is None]
    missing = [n for n in ranged if n not in out]
    if missing:
        raise UsageError(f"--case needs {', '.join(missing)} for kata {kata.id}",
                         hint=f"parameters: {describe(kata)}")
    for p in kata.params:
        if p.choices is not None and p.name in out and out[p.name] not in p.choices:
            raise UsageError(f"--case {p.name}={out[p.name]}: choose one of {', '.join(map(str, p.choices))}")
    return out


def strategy(kata: Kata):
    """A hypothesis strategy drawing one params dict; later ranges may depend on earlier draws."""
    from hypothesis import strategies as st

    @st.composite
    def draw_params(draw):
        values: dict = {}
        for p in kata.params:
            if p.choices is not None:
                values[p.name] = draw(st.sampled_from(p.choices))
                continue
            low, high = evaluate(p.low, values), evaluate(p.high, values)
            if isinstance(low, float) or isinstance(high, float):
                values[p.name] = draw(st.floats(low, high, allow_nan=False, allow_infinity=False))
            else:
                values[p.name] = draw(st.integers(int(low), int(max(low, high))))
        return values

    return draw_params()


@dataclass(frozen=True)
class Search:
    """What the correctness loop ran, and the smallest failure it found."""

    public: int  # public cases run
    drawn: int  # hypothesis-drawn cases run (including shrink attempts)
    hidden: int  # hidden cases run
    failure: object  # the failing outcome (pipeline's CaseOutcome) or None

    @property
    def cases_run(self) -> int:
        return self.public + self.drawn + self.hidden


def search(kata: Kata, attempt: Callable[[Case], object], *, seed: int = DEFAULT_SEED,
           examples: int = DEFAULT_EXAMPLES, hidden: bool = False, only: dict | None = None,
           shrink_budget_s: float = SHRINK_BUDGET_S, hidden_cases: tuple[dict, ...] | None = None) -> Search:
    """Run cases until one fails. `attempt(case)` runs and checks one case and returns an object
    with a boolean `failed`. Order: public, drawn (shrunk on failure), hidden: kata.toml's, or
    `hidden_cases` where the caller has its own (a server's secret ones, secret_cases.py)."""
    if only is not None:
        outcome = attempt(Case(dict(only), "requested", seed))
        return Search(1, 0, 0, outcome if outcome.failed else None)
    public = 0
    for params in kata.public:
        public += 1
        outcome = attempt(Case(dict(params), "public", seed))
        if outcome.failed:
            return Search(public, 0, 0, outcome)
    drawn, failure = _drawn(kata, attempt, seed, examples, shrink_budget_s) if examples > 0 else (0, None)
    if failure is not None:
        return Search(public, drawn, 0, failure)
    ran_hidden = 0
    if hidden:
        for params in kata.hidden if hidden_cases is None else hidden_cases:
            ran_hidden += 1
            outcome = attempt(Case(dict(params), "hidden", seed))
            if outcome.failed:
                return Search(public, drawn, ran_hidden, outcome)
    return Search(public, drawn, ran_hidden, None)


def _cache_dir() -> Path:
    home = os.environ.get("KATA_HOME")
    if home:
        return Path(home) / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("kata"))


class _Failed(AssertionError):
    pass


@contextlib.contextmanager
def _no_local_constants():
    """Hypothesis mixes into its draws the literal constants of every loaded module outside
    site-packages: for an editable install that is kata's own code, so any edit anywhere (or a
    command that imports other modules) changed which cases a seed draws, and a wheel install drew
    others again. Without them a seed draws the same cases everywhere. (An internal of Hypothesis:
    where it is missing, nothing is patched.)"""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another Hypothesis layout
        yield
        return
    real = getattr(providers, "_get_local_constants", None)
    empty = getattr(providers, "Constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if real is None or empty is None:
        yield
        return
    none = empty()
    providers._get_local_constants = lambda: none
    if cache is not None:
        cache.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = real
        if cache is not None:
            cache.cache.clear()


def _drawn(kata: Kata, attempt, seed: int, examples: int, budget_s: float):
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.configuration import set_hypothesis_home_dir

    # Hypothesis keeps caches in ./.hypothesis by default: never in the learner's folder.
    set_hypothesis_home_dir(_cache_dir() / "hypothesis")

    seen: dict[str, object] = {}
    state = {"runs": 0, "first_failure_at": None, "last_failure": None}

    def key(params: dict) -> str:
        return json.dumps(params, sort_keys=True)

    def body(params: dict) -> None:
        k = key(params)
        if k not in seen:
            started = state["first_failure_at"]
            if started is not None and time.monotonic() - started > budget_s:
                return  # shrinking has had its time: stop paying for new runs
            seen[k] = attempt(Case(dict(params), "drawn", seed))
            state["runs"] += 1
        outcome = seen[k]
        if outcome.failed:
            if state["first_failure_at"] is None:
                state["first_failure_at"] = time.monotonic()
            state["last_failure"] = outcome
            raise _Failed(k)

    test = settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                    phases=(Phase.generate, Phase.shrink), report_multiple_bugs=False,
                    suppress_health_check=list(HealthCheck), print_blob=False)(
        hypothesis_seed(seed)(given(strategy(kata))(body)))
    try:
        with _no_local_constants():
            test()
    except _Failed as exc:
        # Hypothesis re-runs the minimal failing example last; its key is the exception's text.
        return state["runs"], seen.get(str(exc), state["last_failure"])
    return state["runs"], None
