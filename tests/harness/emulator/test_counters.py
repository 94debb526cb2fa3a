"""Counters with known answers: coalescing, strides, bank conflicts, divergence, instruction mix."""
import json
from dataclasses import fields

import numpy as np
import pytest

from _inst import Inst

from harness.emulator import counters as counters_module
from harness.emulator.counters import _FIELDS, Counters, Tally, family

BASE = 1 << 20


@pytest.fixture(autouse=True, params=["numba", "numpy"])
def path(request, monkeypatch):
    """Every test runs on both implementations: the numba pass and the numpy fallback."""
    if request.param == "numpy":
        monkeypatch.setattr(counters_module, "_warp_costs", None)
    elif counters_module._warp_costs is None:
        pytest.skip("numba is not installed")
    return request.param


def _ctr(block=(256, 1, 1), grid=(4, 1, 1)):
    c = Counters()
    c.on_kernel_start("k", grid, block, 0)
    return c


def _mem(c, space, op, addrs, line=7, tids=None, blocks=0, size=4, opcode=None):
    addrs = np.asarray(addrs, np.uint64)
    tids = np.arange(addrs.size) if tids is None else np.asarray(tids)
    blocks = np.broadcast_to(np.asarray(blocks), tids.shape)
    inst = Inst(opcode or f"{op}.{space}.f32", line * 10, "kernel.cu", line)
    c.on_issue(inst, blocks, tids)
    c.on_memory(inst, space, op, blocks, tids, addrs, size)
    return c.per_line[line]


def test_tally_fields_match_the_counter_rows():
    assert [f.name for f in fields(Tally)][2:] == list(_FIELDS)


def test_coalesced_float_loads_touch_4_sectors_per_request():
    t = _mem(_ctr(), "global", "ld", BASE + 4 * np.arange(256))
    assert t.global_load_requests == 8 and t.global_load_sectors == 32
    assert t.sectors_per_load_request == 4.0 and t.global_load_ideal_sectors == 32
    assert t.bytes_read == 1024


def test_stride_32_float_loads_touch_32_sectors_per_request():
    t = _mem(_ctr(), "global", "ld", BASE + 128 * np.arange(256))
    assert t.sectors_per_load_request == 32.0 and t.global_load_ideal_sectors == 32


def test_misaligned_and_vector_global_accesses():
    t = _mem(_ctr(), "global", "st", BASE + 4 + 4 * np.arange(32))  # shifted by one float
    assert (t.global_store_requests, t.global_store_sectors, t.global_store_ideal_sectors) == (1, 5, 4)
    t = _mem(_ctr(), "global", "ld", BASE + 16 * np.arange(32), size=16)  # float4
    assert (t.global_load_sectors, t.global_load_ideal_sectors) == (16, 16)
    t = _mem(_ctr(), "global", "ld", np.full(32, BASE))  # everyone reads one value: a broadcast
    assert (t.global_load_sectors, t.global_load_ideal_sectors) == (1, 1)


def test_partial_warps_have_a_smaller_ideal():
    t = _mem(_ctr(block=(40, 1, 1)), "global", "ld", BASE + 4 * np.arange(40))
    assert t.global_load_requests == 2 and t.global_load_ideal_sectors == 4 + 1
    assert t.branch_efficiency == 40 / 64


def test_naive_transpose_column_read_is_a_32_way_bank_conflict():
    lane = np.arange(32)
    c = _ctr(block=(32, 32, 1))
    for row in range(32):  # tile[threadIdx.x][threadIdx.y] for each warp (threadIdx.y = row)
        t = _mem(c, "shared", "ld", (lane * 32 + row) * 4, tids=row * 32 + lane)
    assert t.shared_requests == 32 and t.shared_wavefronts == 32 * 32
    assert t.wavefronts_per_shared_request == 32.0 and t.shared_ideal_wavefronts == 32


def test_padding_to_33_removes_the_conflict():
    lane = np.arange(32)
    c = _ctr(block=(32, 32, 1))
    for row in range(32):
        t = _mem(c, "shared", "ld", (lane * 33 + row) * 4, tids=row * 32 + lane)
    assert t.wavefronts_per_shared_request == 1.0


def test_shared_broadcast_wide_accesses_and_two_way_conflicts():
    lane = np.arange(32)
    assert _mem(_ctr(), "shared", "ld", np.zeros(32)).shared_wavefronts == 1  # broadcast
    assert _mem(_ctr(), "shared", "ld", lane * 8).shared_wavefronts == 2  # stride 2: 2-way
    t = _mem(_ctr(), "shared", "ld", lane * 8, size=8)  # float2: two half-warp phases
    assert (t.shared_wavefronts, t.shared_ideal_wavefronts) == (2, 2)
    t = _mem(_ctr(), "shared", "ld", lane * 16, size=16)  # float4: four quarter-warp phases
    assert (t.shared_wavefronts, t.shared_ideal_wavefronts) == (4, 4)
    t = _mem(_ctr(), "shared", "st", lane * 32, size=16)  # float4 at stride 32 B: 2-way per phase
    assert t.shared_wavefronts == 8


def test_groups_spanning_blocks_count_each_warp_once():
    c = _ctr(block=(64, 1, 1), grid=(8, 1, 1))
    blocks = np.repeat(np.arange(8), 64)
    tids = np.tile(np.arange(64), 8)
    t = _mem(c, "shared", "st", tids * 4, blocks=blocks, tids=tids)
    assert (t.instructions, t.shared_requests, t.shared_wavefronts) == (16, 16, 16)
    assert t.branch_efficiency == 1.0


def test_atomics_local_and_unsorted_lanes():
    c = _ctr()
    perm = np.random.default_rng(0).permutation(256)
    t = _mem(c, "global", "ld", BASE + 4 * perm, tids=perm, line=3)
    assert t.global_load_sectors == 32 and t.global_load_requests == 8
    t = _mem(c, "global", "atom", np.full(64, BASE), line=4, opcode="atom.global.add.f32")
    assert t.global_atomic_requests == 2 and t.bytes_read == t.bytes_written == 256
    t = _mem(c, "shared", "atom", np.zeros(64), line=5, opcode="atom.shared.add.u32")
    assert t.shared_atomic_requests == 2 and t.shared_requests == 0
    t = _mem(c, "local", "st", np.arange(32) * 4, line=6, opcode="st.local.u32")
    assert t.local_requests == 1


def test_mix_per_line_total_and_json():
    c = _ctr()
    _mem(c, "global", "ld", BASE + 4 * np.arange(256), line=3)
    inst = Inst("add.f32", 1, "kernel.cu", 4)
    c.on_issue(inst, np.zeros(16, np.int64), np.arange(16))
    c.on_issue(Inst("bar.sync", 2, "kernel.cu", 5), np.zeros(256, np.int64), np.arange(256))
    assert c.mix == {"ld.global": 8, "bar": 8, "add": 1}
    assert c.per_line[4].branch_efficiency == 0.5
    assert c.total.instructions == 17
    d = json.loads(json.dumps(c.to_dict()))
    assert d["total"]["global_load_sectors"] == 32 and [x["line"] for x in d["per_line"]] == [3, 4, 5]
    assert family("ld.global.nc.v4.f32") == "ld.global" and family("shfl.sync.bfly.b32") == "shfl"


# ---- end to end: the known answers on kernels the emulator runs ----------------------------------
ZOO = __import__("pathlib").Path(__file__).parent / "zoo"


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    return [i + 1 for i, line in enumerate(text.splitlines()) if needle in line][nth]


def _run_transpose(kernel, grid, block, args_of):
    emu_mod = pytest.importorskip("harness.emulator")
    if not hasattr(emu_mod, "Emulator"):
        pytest.skip("the emulator core is not there yet")
    from harness.frontends.nvrtc import compile

    src = (ZOO / "transpose.cu").read_text()
    r = compile(src, filename="transpose.cu")
    emu = emu_mod.Emulator(sanitize=False, counters=True)
    mod = emu.load(r.ptx, filename="transpose.cu")
    a = np.arange(64 * 64, dtype=np.float32)
    pa, pb = emu.alloc(a.nbytes), emu.alloc(a.nbytes)
    emu.write(pa, a)
    res = emu.launch(mod, kernel, grid=grid, block=block, shared_bytes=0, args=args_of(pa, pb))
    return src, res.counters


@pytest.mark.parametrize("kernel,want", [("transpose_naive", 32.0), ("transpose_padded", 1.0)])
def test_transpose_tile_read_bank_conflicts(kernel, want):
    src, c = _run_transpose(kernel, (2, 2, 1), (32, 8, 1), lambda pa, pb: [pa, pb, 64, 64])
    start = _line_of(src, f"void {kernel}(")
    read = _line_of(src[src.index(f"void {kernel}("):], "= tile[threadIdx.x][threadIdx.y + j]") + start - 1
    write = _line_of(src[src.index(f"void {kernel}("):], "tile[threadIdx.y + j][threadIdx.x] =") + start - 1
    t = c.per_line[read]
    assert t.shared_requests == 4 * 4 * 8 and t.wavefronts_per_shared_request == want
    assert c.per_line[write].wavefronts_per_shared_request == 1.0
    assert c.per_line[write].sectors_per_load_request == 4.0  # the row-major global read coalesces
    assert t.sectors_per_store_request == 4.0


def test_strided_copy_touches_32_sectors_per_request():
    src, c = _run_transpose("copy_strided", (32, 1, 1), (128, 1, 1), lambda pa, pb: [pa, pb, 64, 64])
    t = c.per_line[_line_of(src, "out[t] = in[r * cols + c];")]
    assert t.sectors_per_load_request == 32.0 and t.sectors_per_store_request == 4.0
    assert c.total.branch_efficiency == 1.0 and c.mix.get("ld.global", 0) > 0


@pytest.mark.parametrize("case", ["reduce_tree-3000", "matmul_tiled-(17, 33, 5)", "histogram_shared-(5000, 256, 'zipf')",
                                  "spmv_warp-(300, 100, 'power')", "transpose-(70, 45)", "reduce_float4_double-4099",
                                  "half_axpy-1001", "scan_lookback-3000"])
def test_numba_and_numpy_passes_count_the_same(case, path, monkeypatch):
    if path == "numpy":
        pytest.skip("compares both paths itself")
    import zlib

    import test_zoo  # noqa: F401  (registers the cases)
    import _zoo

    name, size = case.split("-", 1)
    source, sizes, fn, options = _zoo.CASES[name]
    size = next(s for s in sizes if str(s) == size)
    totals = []
    for numpy_only in (False, True):
        if numpy_only:
            monkeypatch.setattr(counters_module, "_warp_costs", None)
        dev = _zoo.Device(source, **options)
        fn(dev, size, np.random.default_rng(zlib.crc32(case.encode())))
        totals.append([r.counters.to_dict() for r in dev.results])
    assert totals[0] == totals[1]


def test_lines_of_another_file_never_merge_with_the_kernels_lines():
    c = _ctr()
    lanes, blocks = np.arange(64), np.zeros(64, np.int64)
    for pc, file in ((1, "kernel.cu"), (2, "kernel.cu"), (3, "cuda_fp16.hpp")):
        c.on_issue(Inst("add.f32", pc, file, 12), blocks, lanes)
    assert c.per_line[12].instructions == 4 and c.per_line[12].file == "kernel.cu"
    assert c.per_location[("cuda_fp16.hpp", 12)].instructions == 2
    assert c.total.instructions == 6 and len(c.to_dict()["per_line"]) == 2


def _split(c, offsets, pcs, line=9, stride=16):
    """One warp-group's scalar loads from base + offset, one instruction each (Triton's split float4)."""
    from _inst import Inst

    tids = np.arange(256)
    blocks = np.zeros(256, np.int64)
    for offset, pc in zip(offsets, pcs):
        inst = Inst("ld.global.b32", pc, "kernel.py", line)
        c.on_issue(inst, blocks, tids)
        c.on_memory(inst, "global", "ld", blocks, tids, np.asarray(BASE + stride * tids + offset, np.uint64), 4)
    return c.per_line[line]


def test_a_float4_split_into_four_scalar_loads_is_as_coalesced_as_the_float4():
    """Issue 28: Triton's masked load of 4 floats a lane is 4 ld.global.b32 at +0..+12; counted
    one by one each touched 16 sectors against an ideal of 4, a coalesced kernel reported as not."""
    split = _split(_ctr(), (0, 4, 8, 12), (100, 102, 104, 106))  # a mov before each load
    vector = _mem(_ctr(), "global", "ld", BASE + 16 * np.arange(256), size=16)
    assert split.global_load_requests == 32 and vector.global_load_requests == 8
    assert split.global_load_sectors == vector.global_load_sectors == 128  # every byte once
    assert split.sectors_per_load_request == split.global_load_ideal_sectors / 32 == 4.0


def test_scalar_loads_that_are_no_split_vector_still_count_one_by_one():
    # far apart in the code, or not contiguous: the wasted sectors are real and still reported
    apart = _split(_ctr(), (0, 4), (100, 110))
    assert apart.global_load_sectors == 2 * 16 * 8 and apart.global_load_ideal_sectors == 2 * 4 * 8
    strided = _split(_ctr(), (0, 64), (100, 101), stride=128)
    assert strided.sectors_per_load_request == 32.0 and strided.global_load_ideal_sectors == 2 * 32


def test_a_split_vector_whose_tail_mask_drops_lanes_is_still_one_vector():
    from _inst import Inst

    c = _ctr()
    tids = np.arange(256)
    blocks = np.zeros(256, np.int64)
    for k, pc in enumerate((100, 102, 104, 106)):
        live = tids if k == 0 else tids[:-1]  # the last lane's later elements are past n
        inst = Inst("ld.global.b32", pc, "kernel.py", 9)
        c.on_issue(inst, blocks[:live.size], live)
        c.on_memory(inst, "global", "ld", blocks[:live.size], live,
                    np.asarray(BASE + 16 * live + 4 * k, np.uint64), 4)
    t = c.per_line[9]
    assert t.sectors_per_load_request == 4.0 and t.global_load_ideal_sectors == 128


def test_a_split_vector_store_still_counts_each_pieces_sectors():
    """Stores are not kept in L1: each scalar piece sends its partial sectors to L2."""
    from _inst import Inst

    c = _ctr()
    tids = np.arange(256)
    blocks = np.zeros(256, np.int64)
    for k, pc in enumerate((100, 102, 104, 106)):
        inst = Inst("st.global.b32", pc, "kernel.cu", 9)
        c.on_issue(inst, blocks, tids)
        c.on_memory(inst, "global", "st", blocks, tids, np.asarray(BASE + 16 * tids + 4 * k, np.uint64), 4)
    t = c.per_line[9]
    assert t.global_store_sectors == 4 * 128 and t.global_store_ideal_sectors == 128
