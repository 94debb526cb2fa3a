"""The tc-gemm solution (TMA + mbarrier + wgmma, warp-specialised) through the real grading path:
its launch plan's gpu.tensor_map crosses the plan sandbox (the worker encodes the map at launch),
it passes on the CPU emulator, and its classic Hopper mistakes are caught with the learner's line."""
import pytest

from grader import pipeline
from grader.catalog import wrong
from grader.catalog.loader import load

KATA = "tc-gemm"
RAGGED_RING = {"M": 24, "N": 48, "K": 272}  # 5 k-tiles over a 4-stage ring: stages are refilled


def grade(folder, case=RAGGED_RING):
    return pipeline.grade(KATA, folder, backend="cpu", case=case, with_estimate=False)


def test_the_tma_solution_passes_through_the_sandboxed_plan():
    r = grade(load(KATA).solution_dir)
    assert (r.verdict, r.stage) == ("pass", "done"), r.headline


def test_shapes_tma_cannot_address_take_the_plain_kernel():
    r = grade(load(KATA).solution_dir, {"M": 5, "N": 7, "K": 33})
    assert r.verdict == "pass", r.headline


@pytest.mark.parametrize("name, kind, line_has", [
    ("missing_full_wait", "bulk-copy-unwaited", "wgmma.mma_async"),
    ("release_before_retire", "wgmma-operand-changed", "cp.async.bulk.tensor"),
])
def test_a_hopper_mistake_is_a_finding_at_its_line(tmp_path, name, kind, line_has):
    folder = wrong.materialise(KATA, name, tmp_path / name, header=False)
    r = grade(folder)
    assert r.verdict == "fail" and kind in r.reasons, (r.reasons, r.headline)
    found = [f for f in r.findings if f.kind == kind][0]
    source = (folder / "kernel.cu").read_text().splitlines()
    assert line_has in "".join(source[found.line - 1:found.line + 1])  # the inline asm statement
