"""The tc-gemm and fp8-gemm solutions (TMA + mbarrier + wgmma, warp-specialised) through the real
grading path: their launch plans' gpu.tensor_map crosses the plan sandbox (the worker encodes the
map at launch), they pass on the CPU emulator, and their classic Hopper mistakes are caught with
the learner's line."""
import pytest

from grader import pipeline
from grader.catalog import wrong
from grader.catalog.loader import load

# several k-tiles over a 4-stage ring (stages are refilled), ragged M and N
RING = {"tc-gemm": {"M": 24, "N": 48, "K": 272}, "fp8-gemm": {"M": 33, "N": 129, "K": 640}}


def grade(kata, folder, case=None):
    return pipeline.grade(kata, folder, backend="cpu", case=case or RING[kata], with_estimate=False)


@pytest.mark.parametrize("kata", sorted(RING))
def test_the_tma_solution_passes_through_the_sandboxed_plan(kata):
    r = grade(kata, load(kata).solution_dir)
    assert (r.verdict, r.stage) == ("pass", "done"), r.headline


def test_shapes_tma_cannot_address_take_the_plain_kernel():
    r = grade("tc-gemm", load("tc-gemm").solution_dir, {"M": 5, "N": 7, "K": 33})
    assert r.verdict == "pass", r.headline


@pytest.mark.parametrize("kata, name, kind, line_has", [
    ("tc-gemm", "missing_full_wait", "bulk-copy-unwaited", "wgmma.mma_async"),
    ("tc-gemm", "release_before_retire", "wgmma-operand-changed", "cp.async.bulk.tensor"),
    ("fp8-gemm", "release_before_retire", "wgmma-operand-changed", "cp.async.bulk.tensor"),
])
def test_a_hopper_mistake_is_a_finding_at_its_line(tmp_path, kata, name, kind, line_has):
    folder = wrong.materialise(kata, name, tmp_path / name, header=False)
    r = grade(kata, folder)
    assert r.verdict == "fail" and kind in r.reasons, (r.reasons, r.headline)
    found = [f for f in r.findings if f.kind == kind][0]
    source = (folder / "kernel.cu").read_text().splitlines()
    assert line_has in "".join(source[found.line - 1:found.line + 1])  # the inline asm statement
