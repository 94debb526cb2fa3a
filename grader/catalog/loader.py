"""The catalogue: every katas/<id>/ folder loaded, validated once, and returned as a frozen Kata.

The loader knows no kata by name: file and function names are the contract (docs/kata-format.md).
Every problem is a CatalogError naming the file and the key, so a kata author can fix it without
reading this code.
"""
from __future__ import annotations

import ast
import difflib
import importlib.util
import operator
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import numpy as np
import tomllib

import solutions as _solutions_pkg
from grader.catalog.roots import add as _add_root, folders as _folders, katas_root
from grader.catalog.model_settings import ModelSettings, model_settings
from grader.errors import CatalogError, UnknownKata

FORMAT = 1
KATA_FILES = ("kata.toml", "statement.md", "stub.cu", "launch.py", "reference.py")
ROLES = ("in", "out", "inout", "scalar")
LEVELS = ("warm-up", "core", "advanced")
TOLERANCES = ("exact", "bound", "custom")
METRICS = ("roofline", "gteps", "library")
_ID = re.compile(r"^[a-z][a-z0-9-]*$")
PRIVATE_SOLUTION = "solution"  # a private kata's solution folder, inside its kata folder


@dataclass(frozen=True)
class Arg:
    name: str  # as the launch plan receives it
    dtype: np.dtype  # element type (arrays) or value type (scalars)
    role: str  # in | out | inout | scalar
    shape: tuple  # ints or expressions over params; () for scalars

    @property
    def is_array(self) -> bool:
        return self.role != "scalar"


@dataclass(frozen=True)
class Param:
    name: str
    low: int | float | str | None  # a number or an expression over earlier params
    high: int | float | str | None
    choices: tuple | None  # drawn from these instead of a range


@dataclass(frozen=True)
class Tolerance:
    kind: str  # exact | bound | custom
    rtol: float
    atol: float
    c: float  # multiplies eps32 * reference.error_scale()


@dataclass(frozen=True)
class Bench:
    cases: tuple[dict, ...]  # GPU shapes timed by the performance stage
    metric: str  # roofline | gteps | library
    baseline: str  # what a user would call instead
    targets: dict  # pass / good / excellent
    ceiling: str  # the algorithmic ceiling worth telling the learner ("" when none)


@dataclass(frozen=True, eq=False)
class Kata:
    id: str
    title: str
    summary: str  # one line for `kata list`
    level: str
    tags: tuple[str, ...]
    args: tuple[Arg, ...]  # in the order launch.py receives them
    params: tuple[Param, ...]  # in declaration order (later ranges may refer to earlier params)
    public: tuple[dict, ...]  # edge cases shown to the learner
    hidden: tuple[dict, ...]  # adversarial cases for interview submit and dev check
    tolerance: Tolerance
    bench: Bench
    hints: tuple[str, ...]
    folder: Path  # katas/<id>
    reference: ModuleType  # generate / reference / cost (+ error_scale, check, baseline)
    model: ModelSettings = ModelSettings()  # the [model] table (how the CPU performance model observes it)
    private: bool = False  # from a folder of katas beside the package's (roots.py): solution in folder/solution

    def file(self, name: str) -> Path:
        return self.folder / name

    @property
    def solution_dir(self) -> Path:
        if self.private:
            return self.folder / PRIVATE_SOLUTION
        return Path(_solutions_pkg.__file__).parent / self.id

    @property
    def arrays(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.is_array)


def ids() -> list[str]:
    return sorted(_folders())


def add_root(folder) -> None:
    """Katas in `folder`/<id>/ become loadable by id, in this process and the ones it starts."""
    if _add_root(folder):
        load.cache_clear()


@lru_cache(maxsize=None)
def load(kata_id: str) -> Kata:
    """The kata of that id, validated; UnknownKata (with a did-you-mean) when there is none."""
    folders = _folders()
    if kata_id not in folders:
        close = difflib.get_close_matches(kata_id, list(folders), n=1)
        hint = f"did you mean `kata start {close[0]}`?" if close else "run `kata list` to see them"
        raise UnknownKata(f"no kata named {kata_id!r}", hint=hint)
    return load_folder(folders[kata_id])


def load_folder(folder: Path) -> Kata:
    """A kata folder anywhere, validated; outside the package, its solution is in folder/solution."""
    kata = _load_folder(Path(folder))
    private = kata.folder.resolve().parent != katas_root().resolve()
    return replace(kata, private=True) if private else kata


def all_katas() -> list[Kata]:
    return [load(i) for i in ids()]


# -- expressions over params (shapes, ranges): + - * // ** and parentheses, nothing else ----------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.USub: operator.neg}


def evaluate(expr, env: dict):
    """An int/float, or an expression string over the names in env."""
    if isinstance(expr, (int, float)):
        return expr

    def walk(node):
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in env:
                raise KeyError(node.id)
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.operand))
        raise ValueError(f"only + - * // ** and parentheses over parameter names are allowed, not {ast.dump(node)[:40]}")

    return walk(ast.parse(str(expr), mode="eval"))


# -- loading and validation ------------------------------------------------------------------------

def _load_folder(folder: Path) -> Kata:
    for name in KATA_FILES:
        if not (folder / name).is_file():
            raise CatalogError(f"{folder / name}: missing (every kata has {', '.join(KATA_FILES)})")
    toml_path = folder / "kata.toml"
    try:
        data = tomllib.loads(toml_path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{toml_path}: not valid TOML: {exc}") from None
    where = str(toml_path)

    def need(table: dict, key: str, kind, ctx: str = ""):
        if key not in table:
            raise CatalogError(f"{where}: missing key {ctx}{key}")
        value = table[key]
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise CatalogError(f"{where}: {ctx}{key} should be {getattr(kind, '__name__', kind)}, "
                               f"not {type(value).__name__}")
        return value

    if need(data, "format", int) != FORMAT:
        raise CatalogError(f"{where}: format = {data['format']}, this grader reads format {FORMAT}")
    kata_id = need(data, "id", str)
    if kata_id != folder.name or not _ID.match(kata_id):
        raise CatalogError(f"{where}: id {kata_id!r} must equal the folder name {folder.name!r} "
                           "(lowercase letters, digits, '-')")
    level = need(data, "level", str)
    if level not in LEVELS:
        raise CatalogError(f"{where}: level {level!r} is not one of {', '.join(LEVELS)}")

    params = _params(need(data, "params", dict), where)
    args = _args(need(data, "args", list), where)
    cases = need(data, "cases", dict)
    public = _cases(need(cases, "public", list, "cases."), params, where, "cases.public")
    hidden = _cases(cases.get("hidden", []), params, where, "cases.hidden")
    if not public:
        raise CatalogError(f"{where}: cases.public is empty; list the kata's edge cases")
    tol = need(data, "tolerance", dict)
    tolerance = Tolerance(need(tol, "kind", str, "tolerance."), float(tol.get("rtol", 0.0)),
                          float(tol.get("atol", 0.0)), float(tol.get("c", 0.0)))
    if tolerance.kind not in TOLERANCES:
        raise CatalogError(f"{where}: tolerance.kind {tolerance.kind!r} is not one of {', '.join(TOLERANCES)}")
    bench = _bench(need(data, "bench", dict), params, where)
    # TOML puts a key written after [bench] inside bench: accept hints there too (the format
    # document's first example did exactly that).
    hints_table = data if "hints" in data else data.get("bench", {}) if "hints" in data.get("bench", {}) else data
    hints = tuple(need(hints_table, "hints", list))
    if len(hints) < 3 or not all(isinstance(h, str) and h.strip() for h in hints):
        raise CatalogError(f"{where}: hints needs at least 3 non-empty strings, from gentle to nearly the answer")

    reference = _reference(folder / "reference.py", kata_id, tolerance)
    _check_launch_py(folder / "launch.py")
    tags = data.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise CatalogError(f"{where}: tags should be a list of strings")
    return Kata(id=kata_id, title=need(data, "title", str), summary=need(data, "summary", str),
                level=level, tags=tuple(tags), args=args, params=params, public=public,
                hidden=hidden, tolerance=tolerance, bench=bench, hints=hints, folder=folder,
                reference=reference, model=model_settings(data.get("model"), len(bench.cases), where))


def _params(table: dict, where: str) -> tuple[Param, ...]:
    out: list[Param] = []
    for name, spec in table.items():
        if not isinstance(spec, dict):
            raise CatalogError(f"{where}: params.{name} should be a table like {{ min = 1, max = 100 }}")
        if "choices" in spec:
            choices = spec["choices"]
            if not isinstance(choices, list) or not choices:
                raise CatalogError(f"{where}: params.{name}.choices should be a non-empty list")
            out.append(Param(name, None, None, tuple(choices)))
            continue
        if "min" not in spec or "max" not in spec:
            raise CatalogError(f"{where}: params.{name} needs min and max (or choices)")
        env = {p.name: p.high if isinstance(p.high, (int, float)) else 1 for p in out}
        for key in ("min", "max"):
            try:
                evaluate(spec[key], env)
            except (KeyError, ValueError, SyntaxError) as exc:
                raise CatalogError(f"{where}: params.{name}.{key} = {spec[key]!r}: {exc} "
                                   "(expressions may use parameters declared above)") from None
        out.append(Param(name, spec["min"], spec["max"], None))
    return tuple(out)


def _args(items: list, where: str) -> tuple[Arg, ...]:
    out: list[Arg] = []
    for i, spec in enumerate(items):
        ctx = f"args[{i}]"
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise CatalogError(f"{where}: {ctx} needs a name")
        ctx = f"args[{i}] ({spec['name']})"
        role = spec.get("role")
        if role not in ROLES:
            raise CatalogError(f"{where}: {ctx}.role {role!r} is not one of {', '.join(ROLES)}")
        try:
            dtype = np.dtype(spec.get("dtype"))
        except TypeError:
            raise CatalogError(f"{where}: {ctx}.dtype {spec.get('dtype')!r} is not a numpy dtype name") from None
        shape = spec.get("shape")
        if role != "scalar":
            if not isinstance(shape, list) or not shape:
                raise CatalogError(f"{where}: {ctx}.shape is required for arrays (a list of ints or expressions)")
        elif shape is not None:
            raise CatalogError(f"{where}: {ctx} is a scalar and takes no shape")
        if any(a.name == spec["name"] for a in out):
            raise CatalogError(f"{where}: {ctx} repeats the name {spec['name']!r}")
        out.append(Arg(spec["name"], dtype, role, tuple(shape or ())))
    if not any(a.role in ("out", "inout") for a in out):
        raise CatalogError(f"{where}: args has no out or inout argument: nothing to grade")
    return tuple(out)


def _cases(items, params: tuple[Param, ...], where: str, key: str) -> tuple[dict, ...]:
    if not isinstance(items, list) or not all(isinstance(c, dict) for c in items):
        raise CatalogError(f"{where}: {key} should be a list of tables like {{ n = 32 }}")
    ranged = [p.name for p in params if p.choices is None]
    for i, case in enumerate(items):
        missing = [name for name in ranged if name not in case]
        if missing:
            raise CatalogError(f"{where}: {key}[{i}] = {case} lacks {', '.join(missing)} "
                               "(every case names each ranged parameter)")
        for p in params:
            if p.choices is not None and p.name in case and case[p.name] not in p.choices:
                raise CatalogError(f"{where}: {key}[{i}].{p.name} = {case[p.name]!r} is not one of {list(p.choices)}")
    return tuple(dict(c) for c in items)


def _bench(table: dict, params, where: str) -> Bench:
    metric = table.get("metric", "roofline")
    if metric not in METRICS:
        raise CatalogError(f"{where}: bench.metric {metric!r} is not one of {', '.join(METRICS)}")
    targets = table.get("targets", {})
    if not isinstance(targets, dict) or not {"pass", "good", "excellent"} <= set(targets):
        raise CatalogError(f"{where}: bench.targets needs pass, good and excellent")
    cases = _cases(table.get("cases", []), params, where, "bench.cases")
    return Bench(cases, metric, str(table.get("baseline", "")), dict(targets), str(table.get("ceiling", "")))


def _reference(path: Path, kata_id: str, tolerance: Tolerance) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"kata_reference_{kata_id.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the author's module failed to import: name it, keep the cause
        raise CatalogError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from exc
    for fn in ("generate", "reference", "cost"):
        if not callable(getattr(module, fn, None)):
            raise CatalogError(f"{path}: missing function {fn}() (see docs/kata-format.md)")
    if tolerance.kind == "custom" and not callable(getattr(module, "check", None)):
        raise CatalogError(f"{path}: tolerance.kind is custom but check() is missing")
    return module


def _check_launch_py(path: Path) -> None:
    try:
        tree = ast.parse(path.read_text(), str(path))
    except SyntaxError as exc:
        raise CatalogError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == "launch" for n in tree.body):
        raise CatalogError(f"{path}: defines no launch(gpu, ...) function")
