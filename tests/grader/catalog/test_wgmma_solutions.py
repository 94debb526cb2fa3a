"""The tc-gemm and fp8-gemm solutions (TMA + mbarrier + wgmma, warp-specialised) through the real
grading path: their launch plans' gpu.tensor_map crosses the plan sandbox (the worker encodes the
map at launch), they pass on the CPU emulator, and their classic Hopper mistakes are caught with
the learner's line."""
import importlib.util

import numpy as np
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


def test_waiting_warps_yield_at_a_failed_mbarrier_poll_so_a_pipeline_costs_its_work_not_its_spins():
    """One 128x256 block of tc-gemm over 16 k-tiles: 2,758 issued instruction groups with the
    engine yielding a loop whose try_wait failed (a GPU suspends such a thread), 25,330 when every
    spin loop ran SPIN_LIMIT times before another warp got a turn (the emulated work 8.6x more)."""
    from harness.backends.cpu import CpuBackend
    from harness.backends.plan import Plan
    from harness.frontends.nvrtc import compile

    folder = load("tc-gemm").solution_dir
    r = compile((folder / "kernel.cu").read_text(), "kernel.cu")
    backend = CpuBackend()
    backend.load(r.ptx, None, "kernel.cu")
    spec = importlib.util.spec_from_file_location("tc_gemm_plan", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    M, N, K = 128, 256, 1024
    plan.launch(Plan(backend, folder / "launch.py"), backend.upload(np.zeros(M * K, np.int16)),
                backend.upload(np.zeros(K * N, np.int16)), backend.upload(np.zeros(M * N, np.float32)), M, N, K)
    assert backend.issued < 5000, backend.issued
