"""The house rules of the tree, read from the code's own imports (ast, nothing is imported):
no import cycle anywhere, nothing in harness/ imports grader, the emulator imports nothing of
the rest of harness, grader's packages import only the floors below them (GRADER_FLOORS), and
modules stay under ~300 lines unless their first lines say why not."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("grader", "harness")
LINE_LIMIT = 330  # ~300, with room for a docstring; longer modules must say why at the top


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def _imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """Project modules `path` imports, at any depth of the file (lazy imports count too: a cycle
    through a function-level import is still a cycle in the design)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        # importing a.b.c runs a/__init__ and a/b/__init__ too
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            candidate = ".".join(parts[:i])
            if candidate in known and candidate != name:
                found.add(candidate)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            add(base)
            for alias in node.names:
                add(f"{base}.{alias.name}")
    return found


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(path, name, known) for name, path in known.items()}


def _where(name: str) -> str:
    return str(_modules()[name].relative_to(ROOT))


def _is_ancestor_package(a: str, b: str) -> bool:
    """`a` is a package above `b`: importing b runs a's __init__, which is not a cycle by itself."""
    return b.startswith(a + ".")


def test_no_import_cycles():
    graph = _graph()
    # Tarjan's strongly connected components; a component of more than one module is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def edges(v: str):
        return [w for w in graph[v] if not _is_ancestor_package(w, v)]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    described = ["; ".join(f"{_where(m)} -> {', '.join(_where(t) for t in sorted(graph[m]) if t in c)}"
                           for m in c) for c in cycles]
    assert not cycles, "import cycles:\n" + "\n".join(described)


#: grader's packages from the ground floor up: each may import those below it, none above
GRADER_FLOORS = ("grader.errors", "grader.results", "grader.catalog", "grader.grading", "grader.performance",
                 "grader.pipeline", "grader.devcheck", "grader.practice", "grader.cli")
GRADER_UPWARD = [(lower, upper) for i, lower in enumerate(GRADER_FLOORS) for upper in GRADER_FLOORS[i + 1:]]


@pytest.mark.parametrize("lower, upper", [
    *GRADER_UPWARD,
    ("harness", "grader"),          # the harness runs kernels; it knows nothing of katas or grades
    ("harness.emulator", "harness.backends"),  # the emulator is a library of its own
    ("harness.emulator", "harness.sandbox"),
    ("harness.emulator", "harness.measure"),
    ("harness.emulator", "harness.frontends"),
    ("harness.frontends", "harness.backends"),  # a front end turns a file into PTX, nothing more
])
def test_no_upward_imports(lower, upper):
    graph = _graph()
    bad = [f"{_where(m)} imports {t}" for m, targets in sorted(graph.items())
           if m == lower or m.startswith(lower + ".")
           for t in sorted(targets) if t == upper or t.startswith(upper + ".")]
    assert not bad, f"{lower} must not import {upper}:\n" + "\n".join(bad)


def test_modules_stay_short_or_say_why():
    long = []
    for name, path in sorted(_modules().items()):
        lines = path.read_text().splitlines()
        head = "\n".join(lines[:12]).lower()
        if len(lines) > LINE_LIMIT and "longer than" not in head:
            long.append(f"{path.relative_to(ROOT)}: {len(lines)} lines")
    assert not long, ("modules over ~300 lines whose first lines do not say why they are "
                      "'longer than' that:\n" + "\n".join(long))


def test_the_rules_see_a_cycle(tmp_path, monkeypatch):
    """The walker itself: two modules importing each other lazily are found."""
    pkg = tmp_path / "grader"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from grader import b\n")
    (pkg / "b.py").write_text("from grader.a import f\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", ("grader",))
    with pytest.raises(AssertionError, match=r"grader/a\.py -> grader/b\.py"):
        test_no_import_cycles()
