"""The sanitizer: its hooks driven by hand (synthetic lanes), then every finding kind end to end."""
import numpy as np
import pytest

from _inst import Inst

from harness.emulator import sanitizer as sanitizer_module
from harness.emulator.sanitizer import Sanitizer

W, R, A = "st", "ld", "atom"


@pytest.fixture(autouse=True, params=["numba", "numpy"])
def path(request, monkeypatch):
    """Every test runs on both implementations: the numba lane loop and the numpy fallback."""
    if request.param == "numpy":
        monkeypatch.setattr(sanitizer_module, "_lane_loop", None)
    elif sanitizer_module._lane_loop is None:
        pytest.skip("numba is not installed")
    return request.param


def _san(block=(64, 1, 1), grid=(2, 1, 1)):
    s = Sanitizer()
    s.on_kernel_start("k", grid, block, 0)
    s.on_block_start(np.arange(grid[0]))
    return s


def _acc(s, op, line, tids, offs, blocks=0, size=4):
    tids = np.asarray(tids, np.int64)
    s.on_memory(Inst(op + ".shared.f32", line, "kernel.cu", line), "shared", op,
                np.broadcast_to(np.asarray(blocks, np.int64), tids.shape), tids,
                np.asarray(offs, np.uint64), size)


def _kinds(s):
    return sorted((f.kind, f.line) for f in s.findings)


def test_own_write_then_read_is_clean():
    s = _san()
    t = np.arange(64)
    _acc(s, W, 10, t, t * 4)
    _acc(s, R, 11, t, t * 4)
    _acc(s, W, 12, t, t * 4)
    assert s.findings == []


def test_read_of_a_neighbours_write_without_barrier_is_raw_with_both_lines():
    s = _san()
    t = np.arange(64)
    _acc(s, W, 10, t, t * 4)
    _acc(s, R, 14, t, ((t + 37) % 64) * 4)
    [f] = s.findings
    assert (f.kind, f.line, f.other_line, f.space) == ("race-raw", 14, 10, "shared")
    assert f.count == 64
    assert f.other_thread == ((f.thread[0] + 37) % 64, 0, 0)
    assert "no __syncthreads()" in f.message and "kernel.cu:14" in f.message and "kernel.cu:10" in f.message


def test_barrier_orders_and_blocks_are_separate():
    s = _san()
    t = np.arange(64)
    for b in (0, 1):
        _acc(s, W, 10, t, t * 4, blocks=b)
    s.on_barrier(np.array([0]))
    _acc(s, R, 14, t, ((t + 1) % 64) * 4, blocks=0)
    assert s.findings == []
    _acc(s, R, 15, t, ((t + 1) % 64) * 4, blocks=1)  # block 1 never reached its barrier
    assert _kinds(s) == [("race-raw", 15)]
    assert s.findings[0].block == (1, 0, 0)


def test_same_warp_needs_syncwarp():
    s = _san()
    t = np.arange(32)
    _acc(s, W, 10, t, t * 4)
    _acc(s, R, 11, t[:16], (t[:16] + 16) * 4)
    [f] = s.findings
    assert f.kind == "race-raw" and "__syncwarp()" in f.message
    s = _san()
    _acc(s, W, 10, t, t * 4)
    s.on_warp_sync(np.array([0]), np.array([0]), np.array([0xFFFFFFFF], np.uint64))
    _acc(s, R, 11, t[:16], (t[:16] + 16) * 4)
    assert s.findings == []


def test_partial_syncwarp_mask_does_not_order_lanes_outside_it():
    s = _san()
    t = np.arange(32)
    _acc(s, W, 10, t, t * 4)
    s.on_warp_sync(np.array([0]), np.array([0]), np.array([0x0000FFFF], np.uint64))
    _acc(s, R, 11, t[:16], (t[:16] + 16) * 4)  # the writers (16..31) were not in the mask
    assert _kinds(s) == [("race-raw", 11)]


def test_write_after_read_and_write_after_write():
    s = _san()
    t = np.arange(64)
    _acc(s, W, 9, t, t * 4)
    s.on_barrier(np.array([0]))
    _acc(s, R, 10, t, ((t + 1) % 64) * 4)
    _acc(s, W, 11, t, t * 4)  # overwrites what the neighbour just read
    assert _kinds(s) == [("race-war", 11)]
    s.on_barrier(np.array([0]))
    _acc(s, W, 12, [3], [0])
    _acc(s, W, 13, [40], [0])
    assert ("race-waw", 13) in _kinds(s)
    f = [f for f in s.findings if f.kind == "race-waw"][0]
    assert f.other_thread == (3, 0, 0) and f.other_line == 12


def test_many_lanes_storing_one_word_in_one_instruction_is_waw():
    s = _san()
    _acc(s, W, 20, np.arange(8), np.zeros(8))
    assert _kinds(s) == [("race-waw", 20)]


def test_one_instruction_storing_one_value_to_one_word_is_clean_and_different_values_are_waw():
    s = _san()
    t = np.arange(32)
    s.on_memory(Inst("st.shared.f32", 20, "kernel.cu", 20), "shared", "st", np.zeros(32, np.int64), t,
                np.zeros(32, np.uint64), 4, values=[np.full(32, 7.0, np.float32)])
    assert s.findings == []
    s.on_barrier(np.array([0]))
    vals = np.where(t < 16, 1.0, 2.0).astype(np.float32)  # two values for one word
    s.on_memory(Inst("st.shared.f32", 21, "kernel.cu", 21), "shared", "st", np.zeros(32, np.int64), t,
                np.zeros(32, np.uint64), 4, values=[vals])
    assert _kinds(s) == [("race-waw", 21)]
    assert s.findings[0].thread == (16, 0, 0) and s.findings[0].other_thread == (0, 0, 0)


def test_two_byte_stores_of_neighbours_share_a_word_without_a_race():
    s = _san()
    t = np.arange(64)
    _acc(s, W, 10, t, t * 2, size=2)  # __nv_bfloat16 s[tid]
    s.on_barrier(np.array([0]))
    _acc(s, R, 11, t, (63 - t) * 2, size=2)
    assert s.findings == []
    _acc(s, W, 12, t, t * 2, size=2)  # over what a neighbour read: a WAR on half a word
    f = s.findings[0]
    assert (f.kind, f.line, f.address) == ("race-war", 12, 0) and f.other_thread == (63, 0, 0)


def test_uninitialized_read_and_atomics():
    s = _san()
    _acc(s, R, 5, [0, 1], [0, 4])
    assert _kinds(s) == [("uninitialized-read", 5)]
    assert s.findings[0].count == 2
    s = _san()
    _acc(s, A, 6, np.arange(64), np.zeros(64))  # atomicAdd on a never-zeroed shared counter
    assert _kinds(s) == [("uninitialized-read", 6)]
    s = _san()
    t = np.arange(64)
    _acc(s, W, 7, t, t * 4)
    s.on_barrier(np.array([0]))
    for _ in range(3):  # heavy contention on a few words: atomics never race with each other
        _acc(s, A, 8, t, (t % 3) * 4)
    assert s.findings == []
    _acc(s, R, 9, t, (t % 3) * 4)  # a plain read while other threads add: a race
    assert _kinds(s) == [("race-raw", 9)]


def test_vector_access_covers_every_word_and_dedups_per_line():
    s = _san()
    t = np.arange(16)
    _acc(s, W, 10, t, t * 16, size=16)
    s.on_barrier(np.array([0]))
    _acc(s, R, 11, np.arange(64), np.arange(64) * 4)
    assert s.findings == []
    _acc(s, R, 12, np.arange(64), 256 + np.arange(64) * 4)
    _acc(s, R, 12, np.arange(64), 512 + np.arange(64) * 4)
    [f] = s.findings
    assert f.kind == "uninitialized-read" and f.count == 128


def test_block_slots_are_recycled_with_fresh_poison():
    s = Sanitizer()
    s.on_kernel_start("k", (4, 1, 1), (32, 1, 1), 0)
    s.on_block_start(np.array([0, 1]))
    _acc(s, W, 3, np.arange(32), np.arange(32) * 4, blocks=0)
    s.on_block_end(np.array([0]))
    s.on_block_start(np.array([2]))
    _acc(s, R, 4, np.arange(32), np.arange(32) * 4, blocks=2)
    [f] = s.findings
    assert f.kind == "uninitialized-read" and f.block == (2, 0, 0)


def test_groups_spanning_warps_and_blocks_2d_block():
    s = Sanitizer()
    s.on_kernel_start("k", (2, 2, 1), (16, 16, 1), 0)
    s.on_block_start(np.arange(4))
    b = np.repeat(np.arange(4), 256)
    t = np.tile(np.arange(256), 4)
    s.on_memory(Inst("st.shared.f32", 1, "kernel.cu", 30), "shared", "st", b, t, (t * 4).astype(np.uint64), 4)
    s.on_barrier(np.arange(4))
    tr = (t % 16) * 16 + t // 16  # transpose read after the barrier
    s.on_memory(Inst("ld.shared.f32", 2, "kernel.cu", 31), "shared", "ld", b, t, (tr * 4).astype(np.uint64), 4)
    assert s.findings == []
    s.on_memory(Inst("st.shared.f32", 3, "kernel.cu", 32), "shared", "st", b, t, (t * 4).astype(np.uint64), 4)
    kinds = _kinds(s)
    assert ("race-war", 32) in kinds


# ---- end to end: every finding kind provoked by a kernel, and its correct twin -------------------
# Each kernel marks the line the finding must name with `// expect: KIND`. The twin is the fix.
HEAD = 'extern "C" __global__ void k(const float* x, float* out, int n, int* flag) {\n'
SRC = {  # name -> kernel body template
    "race-raw": (
        "__shared__ float s[128];\n s[threadIdx.x] = x[threadIdx.x];\n{SYNC}"
        " out[threadIdx.x] = s[127 - threadIdx.x]; // expect: race-raw\n"
    ),
    "race-raw-warp": (
        "__shared__ float s[32];\n if (threadIdx.x < 32) {\n  s[threadIdx.x] = x[threadIdx.x];\n{SYNC}"
        "  out[threadIdx.x] = s[(threadIdx.x + 1) % 32]; // expect: race-raw\n }\n"
    ),
    "race-war": (
        "__shared__ float s[128];\n s[threadIdx.x] = x[threadIdx.x];\n __syncthreads();\n"
        " float v = s[(threadIdx.x + 1) % 128];\n{SYNC} s[threadIdx.x] = v * 2.0f; // expect: race-war\n"
        " __syncthreads();\n out[threadIdx.x] = s[threadIdx.x];\n"
    ),
    "race-waw": (
        "__shared__ int who;\n if (threadIdx.x == 0) who = 0;\n __syncthreads();\n"
        "{SYNC}\n __syncthreads();\n out[threadIdx.x] = who;\n"
    ),  # {SYNC} holds the store itself
    "uninitialized-read": (
        "__shared__ float s[128];\n if (threadIdx.x < {HALF}) s[threadIdx.x] = x[threadIdx.x];\n"
        " __syncthreads();\n out[threadIdx.x] = s[threadIdx.x]; // expect: uninitialized-read\n"
    ),
    "out-of-bounds": (
        " int i = blockIdx.x * blockDim.x + threadIdx.x;\n {GUARD}"
        "out[i] = x[i] * 2.0f; // expect: out-of-bounds\n"
    ),
    "out-of-bounds-shared": (
        "__shared__ float s[128];\n s[threadIdx.x + {SHIFT}] = x[threadIdx.x]; // expect: out-of-bounds\n"
        " __syncthreads();\n out[threadIdx.x] = s[threadIdx.x / 2];\n"
    ),
    "misaligned": (
        " const float4* p = reinterpret_cast<const float4*>(x + {OFF});\n"
        " float4 v = p[threadIdx.x / 4]; // expect: misaligned\n out[threadIdx.x] = v.x + v.w;\n"
    ),
    "divergent-barrier": (
        "__shared__ float s[128];\n s[threadIdx.x] = x[threadIdx.x];\n"
        " if (threadIdx.x < {CUT}) {\n  __syncthreads(); // expect: divergent-barrier\n"
        "  out[threadIdx.x] = s[127 - threadIdx.x];\n } else {\n  __syncthreads(); // expect: divergent-barrier\n"
        "  out[threadIdx.x] = -s[127 - threadIdx.x];\n }\n"
    ),
    "barrier-after-exit": (
        "__shared__ float s[128];\n if (threadIdx.x >= n) return;\n s[threadIdx.x] = x[threadIdx.x];\n"
        " __syncthreads(); // expect: barrier-after-exit\n out[threadIdx.x] = s[n - 1 - threadIdx.x];\n"
    ),
    "deadlock": (
        " float v = x[threadIdx.x];\n if ((threadIdx.x & 31) < 16)\n"
        "  v += __shfl_down_sync({MASK}, v, 8); // expect: deadlock\n out[threadIdx.x] = v;\n"
    ),
    "watchdog": (
        " if (threadIdx.x == 0) {\n  volatile int* f = flag;\n  while (*f == 0) { } // expect: watchdog\n }\n"
        " out[threadIdx.x] = x[threadIdx.x];\n"
    ),
    "trap": (
        " if (x[threadIdx.x] > {LIMIT}) __trap(); // expect: trap\n out[threadIdx.x] = x[threadIdx.x];\n"
    ),
    "shuffle-missing-lane": (  # launched with 80 threads: the last warp has 16 lanes
        " float v = x[threadIdx.x];\n for (int o = {TOP}; o > 0; o >>= 1)\n"
        "  v += __shfl_down_sync(0xffffffff, v, o); // expect: shuffle-missing-lane\n"
        " if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;\n"
    ),
}
FILL = {  # (provoking, correct) substitutions for each template
    "race-raw": ({"{SYNC}": ""}, {"{SYNC}": " __syncthreads();\n"}),
    "race-raw-warp": ({"{SYNC}": ""}, {"{SYNC}": "  __syncwarp();\n"}),
    "race-war": ({"{SYNC}": ""}, {"{SYNC}": " __syncthreads();\n"}),
    "race-waw": ({"{SYNC}": " if (x[threadIdx.x] > 0.0f) who = threadIdx.x; // expect: race-waw"},
                 {"{SYNC}": " if (x[threadIdx.x] > 0.0f) atomicMax(&who, (int)threadIdx.x);"}),
    "uninitialized-read": ({"{HALF}": "64"}, {"{HALF}": "128"}),
    "out-of-bounds": ({"{GUARD}": ""}, {"{GUARD}": "if (i < n) "}),
    "out-of-bounds-shared": ({"{SHIFT}": "1"}, {"{SHIFT}": "0"}),
    "misaligned": ({"{OFF}": "1"}, {"{OFF}": "4"}),
    "divergent-barrier": ({"{CUT}": "64"}, {"{CUT}": "128"}),
    "barrier-after-exit": ({}, {}),
    "deadlock": ({"{MASK}": "0xffffffff"}, {"{MASK}": "0x0000ffff"}),
    "watchdog": ({}, {}),
    "trap": ({"{LIMIT}": "1.0f"}, {"{LIMIT}": "3.0f"}),
    "shuffle-missing-lane": ({"{TOP}": "16"}, {"{TOP}": "16"}),  # the twin: a block of 96 threads
}


def _source(name: str, fix: bool) -> str:
    body = SRC[name]
    for key, value in FILL[name][fix].items():
        body = body.replace(key, value)
    if fix:  # the twin: the same file without the expectation comments
        body = "\n".join(line.split(" // expect:")[0] for line in body.split("\n"))
    return HEAD + body + "}\n"


def _expected(src: str) -> tuple[str, set[int]]:
    marks = [(i + 1, line.split("// expect: ")[1].strip()) for i, line in enumerate(src.split("\n"))
             if "// expect: " in line]
    return marks[0][1], {line for line, _ in marks}


def _launch(src: str, n: int = 128, flag_value: int = 0, threads: int = 128):
    emu_mod = pytest.importorskip("harness.emulator")
    if not hasattr(emu_mod, "Emulator"):
        pytest.skip("the emulator core is not there yet")
    from harness.frontends.nvrtc import compile

    r = compile(src, filename="kernel.cu")
    assert r.ok, r.log
    emu = emu_mod.Emulator(sanitize=True, counters=False, instruction_budget=300_000, wall_clock_s=20.0)
    mod = emu.load(r.ptx, filename="kernel.cu")
    x = np.linspace(0.5, 2.0, 256, dtype=np.float32)
    px, out, flag = emu.alloc(x.nbytes), emu.alloc(512), emu.alloc(4)
    emu.write(px, x)
    emu.write(flag, np.array([flag_value], np.int32))
    n_threads = threads
    return emu.launch(mod, "k", grid=(1, 1, 1), block=(n_threads, 1, 1), shared_bytes=0,
                      args=[px, out, n, flag])


ARGS = {"out-of-bounds": {"n": 100}, "barrier-after-exit": {"n": 100}, "shuffle-missing-lane": {"threads": 80}}
FIXED_ARGS = {"out-of-bounds": {"n": 100}, "barrier-after-exit": {"n": 128}, "watchdog": {"flag_value": 1},
              "shuffle-missing-lane": {"threads": 96}}


@pytest.mark.parametrize("name", sorted(SRC))
def test_kernel_provokes_its_finding_with_its_line(name):
    src = _source(name, fix=False)
    kind, lines = _expected(src)
    if name == "out-of-bounds":  # x has 256 elements: reach past it with a bigger grid
        src = src.replace("blockIdx.x * blockDim.x", "(blockIdx.x + 2) * blockDim.x")
    res = _launch(src, **ARGS.get(name, {}))
    got = [(f.kind, f.line) for f in res.findings]
    assert any(k == kind and line in lines for k, line in got), f"want {kind} at {sorted(lines)}, got {got}"
    f = next(f for f in res.findings if f.kind == kind and f.line in lines)
    assert f.file == "kernel.cu" and f.message and f.block == (0, 0, 0) and f.thread is not None
    if kind.startswith("race"):
        assert f.other_thread is not None and f.other_line is not None and f.other_thread != f.thread
    if name == "race-raw-warp":
        assert "__syncwarp" in f.message


@pytest.mark.parametrize("name", sorted(SRC))
def test_correct_twin_is_clean(name):
    res = _launch(_source(name, fix=True), **FIXED_ARGS.get(name, {}))
    assert [(f.kind, f.line, f.message) for f in res.findings] == []
    assert not res.stopped


def test_every_finding_kind_has_a_provoking_kernel():
    from harness.emulator.findings import KINDS

    from test_tc_findings import KINDS as TENSOR_CORE_KINDS  # provoked in test_tc_findings.py

    # large-shared is a property of the launch, not of a line: test_realcode.py provokes it
    assert {_expected(_source(name, fix=False))[0] for name in SRC} | TENSOR_CORE_KINDS == set(KINDS) - {"large-shared"}


def test_wild_offsets_are_left_to_the_engine():
    s = _san()
    _acc(s, W, 3, [0, 1], [1 << 40, 4])  # the engine reports the first lane as out-of-bounds
    _acc(s, R, 4, [1], [4])
    assert s.findings == []


def test_huge_grids_cost_memory_only_for_resident_blocks():
    s = Sanitizer()
    s.on_kernel_start("k", (2**31 - 1, 65535, 1), (32, 1, 1), 0)
    far = np.array([100_000])  # blocks start in order: ids seen grow with the work done
    s.on_block_start(far)
    _acc(s, W, 3, np.arange(32), np.arange(32) * 4, blocks=far)
    _acc(s, R, 4, np.arange(32), (np.arange(32) ^ 1) * 4, blocks=far)
    [f] = s.findings
    assert f.kind == "race-raw" and s._slot_of.size <= 2**18


def test_neighbours_storing_halves_of_one_word_in_one_store_are_clean():
    s = _san()
    t = np.arange(64)
    _acc(s, W, 10, t, t * 2, size=2)  # bf16 s[tid] = ...: two threads per word
    assert s.findings == []
    _acc(s, W, 11, t, (t // 2) * 2, size=2)  # threads 2k and 2k+1 write the same two bytes
    assert _kinds(s) == [("race-waw", 11)]


def test_sub_word_accesses_meet_only_on_shared_bytes():
    s = _san()
    even, odd = np.arange(0, 64, 2), np.arange(1, 64, 2)
    _acc(s, W, 20, even, even * 2, size=2)  # two stores (a ?: compiled to two predicated st.u16)
    _acc(s, W, 21, odd, odd * 2, size=2)  # the other halves of the same words
    _acc(s, R, 22, even, odd * 2, size=2)  # a read of the other half of its own word: raw
    assert _kinds(s) == [("race-raw", 22)]
    s = _san()
    _acc(s, W, 20, even, even * 2, size=2)
    _acc(s, W, 21, odd, even * 2, size=2)  # the same bytes: waw
    _acc(s, R, 23, even, even * 2 + 1, size=1)  # byte 1 of each word: written at line 21 by odd
    assert _kinds(s) == [("race-raw", 23), ("race-waw", 21)]
