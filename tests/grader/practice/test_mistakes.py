"""`kata mistakes ID`: locked until a pass, then each classic mistake as its diff and the grade kata
gives it (cached); and for every kata, every mistake materialises and shows a diff."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from grader import catalog
from grader.catalog import wrong
from grader.cli import cli
from grader.practice import progress


@dataclass(frozen=True)
class Passed:
    verdict: str = "pass"
    backend: str = "cpu"
    score: float | None = None


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def test_mistakes_unlock_with_a_pass_then_show_diff_and_finding(tmp_path):
    runner = CliRunner()
    locked = runner.invoke(cli, ["mistakes", "reduce"])
    assert locked.exit_code == 2 and "unlock once your kernel passes" in locked.output
    ws = tmp_path / "reduce"
    ws.mkdir()
    (ws / "kernel.cu").write_text("// mine\n")
    progress.on_start("reduce", ws)
    progress.on_grade("reduce", ws, Passed())
    first = runner.invoke(cli, ["mistakes", "reduce"])
    assert first.exit_code == 0, first.output
    names = [m.name for m in wrong.mistakes("reduce", catalog.load("reduce").solution_dir)]
    for name in names:
        assert f"reduce · {name}" in first.output
    # the finding the grade prints, with the learner's line, and the bug's diff
    assert "race-raw kernel.cu:14" in first.output
    assert "-        if (e < n) v" not in first.output  # reduce's patches are of reduce's solution
    assert "+    gpu.launch" in first.output or "too_many_threads" in first.output
    assert "grading missing_syncthreads" in first.output
    second = runner.invoke(cli, ["mistakes", "reduce"])
    assert second.exit_code == 0 and "grading" not in second.output  # cached
    assert second.output.count("FAIL") == first.output.count("FAIL") == len(names)


def test_unknown_kata():
    r = CliRunner().invoke(cli, ["mistakes", "nope"])
    assert r.exit_code == 2 and "nope" in r.output


@pytest.mark.parametrize("kata_id", catalog.ids())
def test_every_mistake_materialises_with_its_diff(kata_id, tmp_path):
    kata = catalog.load(kata_id)
    found = wrong.mistakes(kata_id, kata.solution_dir)
    assert len(found) >= 4
    for m in found:
        folder = wrong.materialise(kata_id, m.name, tmp_path / m.name)
        source = (folder / "kernel.cu").read_text()
        assert source.splitlines()[0].startswith("// kata-expect:")
        assert m.diff().startswith("---") or m.launch is not None  # a bug in the plan alone has no diff
        if not m.is_patch:
            assert wrong.full_file_reason(m), f"{m.path} is a full file and does not say why"


def test_a_patch_that_no_longer_applies_names_the_file_and_hunk(tmp_path):
    solution = tmp_path / "kernel.cu"
    solution.write_text("a\nb\nc\n")
    with pytest.raises(Exception) as info:
        wrong.apply(solution.read_text(), "--- a/kernel.cu\n+++ b/kernel.cu\n@@ -1,3 +1,3 @@\n a\n-x\n+y\n c\n",
                    where=tmp_path / "bug.patch")
    message = str(info.value)
    assert "bug.patch" in message and "@@ -1,3 +1,3 @@" in message and "line 2 is 'b'" in message
    assert wrong.apply("a\nb\nc\n", "--- a\n+++ b\n@@ -2 +2 @@\n-b\n+B\n", where=solution) == "a\nB\nc\n"
