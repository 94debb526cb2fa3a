"""The catalogue loader: every shipped kata validates; broken ones are named by file and key."""
import shutil

import pytest

from grader import catalog
from grader.errors import CatalogError, UnknownKata


def test_every_shipped_kata_loads():
    ids = catalog.ids()
    assert "reduce" in ids
    for kata in catalog.all_katas():
        assert len(kata.hints) >= 3 and kata.public and kata.summary
        assert any(a.role in ("out", "inout") for a in kata.args)


def test_reduce_declares_the_edge_cases_katas_md_lists():
    kata = catalog.load("reduce")
    ns = {c["n"] for c in kata.public}
    assert {1, 31, 32, 33, 255, 256, 257, 1023, 1081343, 1081345} <= ns
    assert {"n": 16777217} in kata.hidden
    assert kata.tolerance.kind == "bound" and kata.bench.cases == ({"n": 268435456},)


def test_unknown_id_suggests_the_closest():
    with pytest.raises(UnknownKata) as info:
        catalog.load("redcue")
    assert "no kata named 'redcue'" in info.value.message and "reduce" in info.value.hint


@pytest.fixture
def broken(tmp_path):
    folder = tmp_path / "reduce"
    shutil.copytree(catalog.katas_root() / "reduce", folder, ignore=shutil.ignore_patterns("__pycache__"))

    def load(edit=None, file="kata.toml"):
        if edit:
            path = folder / file
            path.write_text(edit(path.read_text()))
        return catalog.loader._load_folder(folder)
    return folder, load


def error(load, edit, file="kata.toml") -> str:
    with pytest.raises(CatalogError) as info:
        load(edit, file)
    return info.value.message


def test_a_copy_loads(broken):
    _, load = broken
    assert load().id == "reduce"


def test_missing_file(broken):
    folder, load = broken
    (folder / "stub.cu").unlink()
    with pytest.raises(CatalogError, match="stub.cu: missing"):
        load()


@pytest.mark.parametrize("edit, expect", [
    (lambda s: s.replace('title = "Sum reduction"\n', ""), "missing key title"),
    (lambda s: s.replace("format = 1", "format = 2"), "format = 2"),
    (lambda s: s.replace('id = "reduce"', 'id = "Reduce"'), "must equal the folder name"),
    (lambda s: s.replace('level = "core"', 'level = "hard"'), "level 'hard'"),
    (lambda s: s.replace('role = "in"', 'role = "input"'), "args[0] (x).role 'input'"),
    (lambda s: s.replace('dtype = "float32"', 'dtype = "float33"', 1), "not a numpy dtype"),
    (lambda s: s.replace('shape = ["n"]\n', "", 1), "args[0] (x).shape is required"),
    (lambda s: s.replace("{ n = 1 },", "{ m = 1 },"), "cases.public[0]"),
    (lambda s: s.replace('{ n = 4099, dist = "offset" }', '{ n = 4099, dist = "huge" }'), "not one of"),
    (lambda s: s.replace('kind = "bound"', 'kind = "fuzzy"'), "tolerance.kind 'fuzzy'"),
    (lambda s: s.replace('kind = "bound"', 'kind = "custom"'), "check() is missing"),
    (lambda s: s.replace("n = { min = 1, max = 200000 }", "n = { min = 1 }"), "params.n needs min and max"),
    (lambda s: s.replace("n = { min = 1, max = 200000 }", 'n = { min = 1, max = "m * 2" }'), "params.n.max"),
    (lambda s: s.replace("targets = { pass = 0.50, good = 0.75, excellent = 0.90 }", "targets = { pass = 0.5 }"),
     "bench.targets"),
    (lambda s: s.replace("hints = [", "hints = [\n]\nold_hints = ["), "hints needs at least 3"),
    (lambda s: s + "\n[broken", "not valid TOML"),
])
def test_kata_toml_errors_name_the_key(broken, edit, expect):
    _, load = broken
    message = error(load, edit)
    assert ("kata.toml" in message or "reference.py" in message) and expect in message


def test_reference_without_a_function(broken):
    _, load = broken
    message = error(load, lambda s: s.replace("def cost(", "def _cost("), "reference.py")
    assert "reference.py" in message and "missing function cost()" in message


def test_reference_that_fails_to_import(broken):
    _, load = broken
    assert "importing it failed: ZeroDivisionError" in error(load, lambda s: s + "\n1 / 0\n", "reference.py")


def test_launch_py_without_launch(broken):
    _, load = broken
    assert "defines no launch(gpu, ...)" in error(load, lambda s: s.replace("def launch(", "def plan("), "launch.py")


def test_expressions_are_restricted():
    assert catalog.evaluate("(n + 3) // 4 * 2", {"n": 9}) == 6
    with pytest.raises(ValueError):
        catalog.evaluate("__import__('os')", {})
