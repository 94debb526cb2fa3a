"""The model's pipe classes of Hopper's instructions (grader/performance/model/static.py): what
issues where, and which work goes to an asynchronous unit (TMA, warpgroup MMA)."""
import pytest

from grader.performance.model.static import async_unit, pipe


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
