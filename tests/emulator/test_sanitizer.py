"""The sanitizer: its hooks driven by hand (synthetic lanes), then every finding kind end to end."""
import numpy as np
import pytest

from _observer_shim import Inst

from harness.emulator.sanitizer import Sanitizer

W, R, A = "st", "ld", "atom"


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
