"""The model's pipe classes of Hopper's instructions (grader/performance/model/static.py): what
issues where, and which work goes to an asynchronous unit (TMA, warpgroup MMA)."""
import pytest

from grader.performance.model.estimate import wgmma_seconds
from grader.performance.model.static import async_unit, pipe
from harness.hardware import CLOCK_HZ


@pytest.mark.parametrize("opcode, want", [
    ("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "tensor"),
    ("wgmma.fence.sync.aligned", "other"),
    ("wgmma.commit_group.sync.aligned", "other"),
    ("wgmma.wait_group.sync.aligned", "other"),
    ("mbarrier.try_wait.parity.shared::cta.b64", "lsu"),
    ("mbarrier.arrive.expect_tx.shared::cta.b64", "lsu"),
    ("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes", "lsu"),
    ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32", "lsu"),
    ("barrier.cluster.wait.acquire.aligned", "other"),
    ("mapa.shared::cluster.u32", "int"),
    ("setmaxnreg.inc.sync.aligned.u32", "other"),
    ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "tensor"),
])
def test_pipe_of_hopper_instructions(opcode, want):
    assert pipe(opcode) == want


def test_async_units():
    assert async_unit("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") == "tma"
    assert async_unit("cp.async.bulk.global.shared::cta.bulk_group") == "tma"
    assert async_unit("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32") == "tma"
    assert async_unit("cp.async.bulk.commit_group") is None
    assert async_unit("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16") == "wgmma"
    assert async_unit("wgmma.fence.sync.aligned") is None and async_unit("cp.async.ca.shared.global") is None


@pytest.mark.parametrize("opcode, flops", [
    ("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", 2 * 64 * 256 * 16),
    ("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", 2 * 64 * 128 * 32 / 2),  # fp8: twice the rate
    ("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32", 2 * 64 * 64 * 8 * 2),  # tf32: half
    ("wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16", 2 * 64 * 64 * 16),
])
def test_a_wgmma_costs_its_flops_at_the_tensor_cores_sustained_rate_not_one_issue_slot(opcode, flops):
    """A warp's quarter of the warpgroup's FLOPs over 989 TFLOP/s at 718/989 sustained: an m64n256k16
    is ~190 SM cycles of tensor work at the boost clock, where one tensor-pipe issue slot is 1."""
    sm_cycles = wgmma_seconds(opcode) * 4 * 132 * CLOCK_HZ
    want = flops / (989.4e12 * (718e12 / 989.4e12)) * 132 * CLOCK_HZ
    assert sm_cycles == pytest.approx(want)
    assert wgmma_seconds("wgmma.fence.sync.aligned") == 0.0


def test_the_wgmma_gemm_estimate_has_its_tensor_time_and_its_tma_traffic():
    """tc-gemm's solution at 4096^3: 137 GFLOP of wgmma at 718 TFLOP/s is ~0.19 ms of tensor time (4 rounds
    of 128x256 tiles on 132 SMs), and its tensor copies' bytes reach the cache model (before, the TMA
    reads were invisible and the estimate saw only C's stores)."""
    import importlib.util
    from pathlib import Path

    from grader import catalog
    from grader.performance.model import estimate
    from grader.performance.model.observe import observe_in_worker
    from harness.frontends import nvrtc

    folder = Path(__file__).resolve().parents[3] / "solutions" / "tc-gemm"
    compiled = nvrtc.compile((folder / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    spec = importlib.util.spec_from_file_location("plan_under_test", folder / "launch.py")
    plan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plan)
    obs = observe_in_worker(plan.launch, str(folder / "launch.py"), "tc-gemm", compiled.ptx, "kernel.cu", 0,
                            registers={k: r.registers for k, r in compiled.resources.items()})
    (case,) = estimate(catalog.load("tc-gemm"), obs, compiled.resources).cases
    tensor_s = case.utilisation["pipe:wgmma"] * case.seconds
    assert tensor_s == pytest.approx(2 * 4096**3 / 718e12 * (4 * 132 / 512), rel=0.02)
    assert case.seconds >= tensor_s and case.floor_s == pytest.approx(2 * 4096**3 / 989.4e12 + 3e-6, rel=0.01)
    assert "DRAM 67 MB" not in case.how  # A and B come in by TMA, counted now
