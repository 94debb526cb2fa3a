"""Theoretical occupancy against NVIDIA's calculator for compute capability 9.0."""
from grader.performance.occupancy import occupancy, occupancy_table
from harness.backends.base import H200
from harness.frontends.nvrtc import Resources


def res(regs, smem=0, name="k", spills=(0, 0)):
    return Resources(name, regs, smem, 0, spills[0], spills[1], 0)


def test_full_occupancy_at_32_registers():
    o = occupancy(res(32), 256, 0, H200)
    assert o.blocks_per_sm == 8 and o.fraction == 1.0 and "threads" in o.limiters


def test_register_limited():
    o = occupancy(res(64), 256, 0, H200)
    assert o.blocks_per_sm == 4 and o.fraction == 0.5 and o.limiters[0] == "registers"
    o = occupancy(res(128), 256, 0, H200)
    assert o.blocks_per_sm == 2 and o.fraction == 0.25
    assert "128 registers" in o.note


def test_register_rounding_per_warp():
    # 40 regs -> 1280 per warp; 16384 // 1280 = 12 warps per sub-partition -> 48 warps -> 6 blocks of 8
    o = occupancy(res(40), 256, 0, H200)
    assert o.blocks_per_sm == 6 and o.active_warps == 48


def test_shared_memory_limited_with_reserved_kilobyte():
    # 48 KiB dynamic + 1 KiB reserved per block: 228 KiB / 49 KiB = 4 blocks
    o = occupancy(res(32), 128, 48 * 1024, H200)
    assert o.blocks_per_sm == 4 and o.limiters == ("shared memory",) and o.shared_bytes == 48 * 1024


def test_block_count_cap_for_tiny_blocks():
    o = occupancy(res(16), 32, 0, H200)
    assert o.blocks_per_sm == 32 and o.fraction == 0.5 and o.limiters == ("blocks per SM",)


def test_launch_that_cannot_run():
    o = occupancy(res(255), 1024, 0, H200)
    assert o.blocks_per_sm == 0 and "cannot run" in o.note
    assert occupancy(res(32), 128, 300 * 1024, H200).blocks_per_sm == 0


def test_spills_are_reported():
    o = occupancy(res(255, spills=(64, 64)), 128, 0, H200)
    assert o.spill_bytes == 128 and "spills" in o.note


def test_table_matches_mangled_names_and_dedupes():
    resources = {"_Z6reducePKfPfi": res(32, name="_Z6reducePKfPfi")}
    rows = occupancy_table(resources, [("reduce", 256, 0), ("reduce", 256, 0), ("missing", 64, 0)], H200)
    assert len(rows) == 1 and rows[0].kernel == "_Z6reducePKfPfi"


def test_full_occupancy_is_not_blamed_on_a_tied_resource():
    o = occupancy(res(25), 256, 0, H200)  # registers allow 8 blocks, exactly what threads allow
    assert o.fraction == 1.0 and o.limiters == ("registers", "threads")
    assert o.note.startswith("full occupancy") and "fewer" not in o.note
