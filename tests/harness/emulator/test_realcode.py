"""Patterns real code uses that the emulator once got wrong, each with a provoking kernel and its
correct twin: the finding's kind, line and cause (which barrier, which threads), or no finding."""
from __future__ import annotations

import numpy as np
import pytest

from harness.frontends.nvrtc import compile
from harness.emulator import Emulator


def line_of(src: str, marker: str) -> int:
    return next(i for i, text in enumerate(src.splitlines(), 1) if marker in text)


def launch(src, name, grid, block, inputs=(), outputs=(), scalars=(), shared=0, poison_outputs=True):
    """inputs: arrays uploaded; outputs: (count, dtype) poisoned like the grader's and marked
    unwritten. Returns (output arrays, result)."""
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    emu = Emulator(sanitize=True, counters=False, instruction_budget=5_000_000, wall_clock_s=30.0)
    mod = emu.load(r.ptx, "kernel.cu")
    args = []
    for a in inputs:
        p = emu.alloc(max(a.nbytes, 4))
        emu.write(p, a)
        args.append(p)
    outs = []
    for count, dtype in outputs:
        nbytes = count * np.dtype(dtype).itemsize
        p = emu.alloc(nbytes)
        emu.memset(p, 0xFF, nbytes)
        if poison_outputs:
            emu.mark_unwritten(p, nbytes)
        outs.append((p, count, dtype))
        args.append(p)
    res = emu.launch(mod, name, grid=(grid, 1, 1), block=(block, 1, 1), shared_bytes=shared,
                     args=args + list(scalars))
    return [emu.read(p, dt, c) for p, c, dt in outs], res


def found(res, kind=None):
    return [(f.kind, f.line) for f in res.findings if kind is None or f.kind == kind]


# ---- b. every lane storing one value to one shared word -------------------------------------------
BROADCAST = r'''
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ float best;
    float v = x[threadIdx.x];
    if (threadIdx.x < 32) best = VALUE;  // one instruction, 32 lanes, one word
    __syncthreads();
    out[threadIdx.x] = v + best;
}
'''


def test_lanes_storing_the_same_value_to_one_word_are_not_a_race():
    x = np.arange(64, dtype=np.float32)
    (out,), res = launch(BROADCAST.replace("VALUE", "x[0] * 2.0f"), "k", 1, 64, [x], [(64, np.float32)])
    assert found(res) == []
    np.testing.assert_array_equal(out, x + 0.0)


def test_lanes_storing_different_values_to_one_word_are_waw():
    src = BROADCAST.replace("VALUE", "v")
    _, res = launch(src, "k", 1, 64, [np.arange(64, dtype=np.float32)], [(64, np.float32)])
    assert found(res) == [("race-waw", line_of(src, "best = v"))]


NARROW = r'''
#include <cuda_bf16.h>
extern "C" __global__ void k(const __nv_bfloat16* x, float* out) {
    __shared__ __nv_bfloat16 h[128];
    __shared__ unsigned char c[128];
    h[threadIdx.x] = x[threadIdx.x];          // two lanes per 4-byte word
    c[threadIdx.x] = (unsigned char)threadIdx.x;  // four lanes per word
    SYNC
    out[threadIdx.x] = __bfloat162float(h[127 - threadIdx.x]) + c[127 - threadIdx.x];
}
'''


def test_neighbours_writing_halves_and_bytes_of_one_word_are_not_a_race():
    x = (np.arange(128, dtype=np.uint32) * 0 + 0x3F80).astype(np.uint16)  # bf16 1.0
    (out,), res = launch(NARROW.replace("SYNC", "__syncthreads();"), "k", 1, 128, [x], [(128, np.float32)])
    assert found(res) == []
    np.testing.assert_array_equal(out, 1.0 + np.arange(128)[::-1])


def test_a_missing_barrier_on_a_bf16_array_is_still_a_race_at_its_line():
    src = NARROW.replace("SYNC", "")
    _, res = launch(src, "k", 1, 128, [np.zeros(128, np.uint16)], [(128, np.float32)])
    assert ("race-raw", line_of(src, "out[threadIdx.x]")) in found(res)


# ---- c. shuffles reading lanes a partial warp does not have ---------------------------------------
SHFL = r'''
extern "C" __global__ void k(const float* x, float* out) {
    float v = x[threadIdx.x];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) out[0] = v;
}
'''


def test_shuffle_past_a_partial_warp_is_a_finding_and_garbage_not_zero():
    x = np.ones(20, np.float32)
    (out,), res = launch(SHFL, "k", 1, 20, [x], [(1, np.float32)])
    [f] = res.findings
    assert (f.kind, f.line, f.severity) == ("shuffle-missing-lane", line_of(SHFL, "__shfl_down_sync"), "warning")
    assert "20 threads" in f.message and "lane 4 reads lane 20" in f.message
    assert np.isnan(out[0])  # lane 0 read lane 16: the GPU's garbage, not a silent 0


def test_full_warp_twin_is_clean():
    (out,), res = launch(SHFL, "k", 1, 32, [np.ones(32, np.float32)], [(1, np.float32)])
    assert found(res) == [] and out[0] == 32


# ---- d. a barrier part of the block skips while the rest runs on -----------------------------------
SKIP = r'''
extern "C" __global__ void k(const float* x, float* out, int n) {
    __shared__ float s[128];
    s[threadIdx.x] = x[threadIdx.x];
    if (threadIdx.x < n) {
        __syncthreads();
        out[threadIdx.x] = s[127 - threadIdx.x];
        return;
    }
    out[threadIdx.x] = -x[threadIdx.x];   // the rest of the block runs on past the barrier
}
'''
EARLY = r'''
extern "C" __global__ void k(const float* x, float* out, int n) {
    __shared__ float s[128];
    if (threadIdx.x >= n) return;         // exits before anything past the barrier
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[n - 1 - threadIdx.x];
}
'''


def test_barrier_skipped_by_threads_that_run_on_is_a_divergent_barrier_naming_them():
    _, res = launch(SKIP, "k", 1, 128, [np.ones(128, np.float32)], [(128, np.float32)], [64])
    [f] = [f for f in res.findings if f.kind == "divergent-barrier"]
    assert f.line == line_of(SKIP, "__syncthreads") and f.severity == "error"
    assert "threads 0-63 of block (0,0,0) only" in f.message
    assert f"threads 64-127 of block (0,0,0) never arrived: they ran kernel.cu:{line_of(SKIP, '= -x')}" in f.message


def test_early_return_before_the_barrier_stays_a_warning():
    _, res = launch(EARLY, "k", 1, 128, [np.ones(128, np.float32)], [(128, np.float32)], [100])
    assert [(f.kind, f.severity) for f in res.findings] == [("barrier-after-exit", "warning")]


def test_every_thread_reaching_the_barrier_is_clean():
    (out,), res = launch(SKIP, "k", 1, 128, [np.arange(128, dtype=np.float32)], [(128, np.float32)], [128])
    assert found(res) == [] and out[0] == 127


LOOP = r'''
extern "C" __global__ void k(const float* x, float* out, int rows) {
    __shared__ float part[128];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float acc = 0.0f;
    for (int r = blockIdx.x * 4 + warp; r < rows; r += gridDim.x * 4) {  // a row per warp
        part[threadIdx.x] = x[r * 32 + lane];
        __syncthreads();                                                  // inside the row loop
        if (warp == 0) for (int w = 1; w < 4; w++) acc += part[lane + 32 * w];
        __syncthreads();
    }
    __syncthreads();                                                      // after the loop
    if (warp == 0) out[blockIdx.x * 32 + lane] = acc;
}
'''


def test_barrier_in_a_loop_whose_trip_count_differs_between_warps_names_both_barriers():
    """The cause of a layernorm backward's NaN (per-warp rows, block barriers inside the loop):
    rows not a multiple of the warps of a block."""
    x = np.ones(8 * 32, np.float32)
    _, res = launch(LOOP, "k", 1, 128, [x], [(32, np.float32)], [6])
    f = next(f for f in res.findings if f.kind == "divergent-barrier")
    inner, after = line_of(LOOP, "inside the row loop"), line_of(LOOP, "after the loop")
    assert f.line == inner and f"kernel.cu:{after} (threads 64-127 of block (0,0,0))" in f.message
    assert f"kernel.cu:{inner} (threads 0-63 of block (0,0,0))" in f.message
    assert "trip count differs between warps" in f.message
    (out,), res = launch(LOOP, "k", 1, 128, [x], [(32, np.float32)], [8])  # 2 rows per warp: clean
    assert found(res) == [] and (out == 6).all()


# ---- e. reading an output before writing it (initcheck) ---------------------------------------------
GEMV = r'''
extern "C" __global__ void k(const float* A, const float* x, float* y, int n, float alpha, float beta) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    float acc = 0.0f;
    for (int j = 0; j < n; j++) acc += A[row * n + j] * x[j];
    y[row] = alpha * acc + BETA_TERM;
}
'''


def test_reading_a_poisoned_output_before_writing_it_is_an_uninitialized_read_with_its_line():
    n = 40
    A, x = np.ones((n, n), np.float32), np.ones(n, np.float32)
    src = GEMV.replace("BETA_TERM", "beta * y[row]")
    (y,), res = launch(src, "k", 1, 64, [A, x], [(n, np.float32)], [n, np.float32(1.0), np.float32(0.0)])
    [f] = res.findings
    assert (f.kind, f.line, f.space) == ("uninitialized-read", line_of(src, "beta * y[row]"), "global")
    assert f.count == n and "nothing has written" in f.message and f.thread == (0, 0, 0)
    assert np.isnan(y).all()  # 0 * NaN: the wrong answer the finding explains


def test_writing_the_output_first_is_clean_and_inputs_are_never_flagged():
    n = 40
    src = GEMV.replace("BETA_TERM", "0.0f")
    (y,), res = launch(src, "k", 1, 64, [np.ones((n, n), np.float32), np.ones(n, np.float32)], [(n, np.float32)],
                       [n, np.float32(1.0), np.float32(0.0)])
    assert found(res) == [] and (y == n).all()


def test_an_output_a_previous_launch_wrote_is_initialised():
    src = r'''
extern "C" __global__ void fill(float* y) { y[threadIdx.x] = 1.0f; }
extern "C" __global__ void twice(float* y) { y[threadIdx.x] += y[threadIdx.x]; }
'''
    r = compile(src, "kernel.cu")
    emu = Emulator(sanitize=True)
    mod = emu.load(r.ptx, "kernel.cu")
    y = emu.alloc(128)
    emu.mark_unwritten(y, 128)
    res = emu.launch(mod, "twice", grid=(1, 1, 1), block=(16, 1, 1), args=[y])  # first 16 floats only
    assert found(res) == [("uninitialized-read", 3)]
    emu.mark_unwritten(y, 128)
    emu.launch(mod, "fill", grid=(1, 1, 1), block=(32, 1, 1), args=[y])
    res = emu.launch(mod, "twice", grid=(1, 1, 1), block=(32, 1, 1), args=[y])
    assert found(res) == [] and (emu.read(y, np.float32, 32) == 2).all()


# ---- f. more than 48 KB of dynamic shared memory ------------------------------------------------------
BIG = r'''
extern "C" __global__ void k(const float* x, float* out, int n) {
    extern __shared__ float tile[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) tile[i] = x[i % 64];
    __syncthreads();
    out[threadIdx.x] = tile[n - 1 - threadIdx.x];
}
'''


@pytest.mark.parametrize("nbytes,warned", [(53 * 1024, True), (48 * 1024, False)])
def test_dynamic_shared_over_48k_says_the_opt_in_is_needed(nbytes, warned):
    n = nbytes // 4
    _, res = launch(BIG, "k", 1, 64, [np.ones(64, np.float32)], [(64, np.float32)], [n], shared=nbytes)
    notes = [f for f in res.findings if f.kind == "large-shared"]
    assert [f.kind for f in res.findings] == (["large-shared"] if warned else [])
    if warned:
        assert notes[0].severity == "warning" and str(nbytes) in notes[0].message
        assert "cudaFuncAttributeMaxDynamicSharedMemorySize" in notes[0].message and notes[0].line == 2


# ---- g. "::" in an opcode is not a label ----------------------------------------------------------------
def test_fence_proxy_async_is_an_instruction_not_a_label():
    src = r'''
extern "C" __global__ void k(float* out) {
    out[threadIdx.x] = 1.0f;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    out[threadIdx.x] += 1.0f;
}
'''
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    assert "fence.proxy.async.shared::cta;" in r.ptx
    emu = Emulator(sanitize=True)
    mod = emu.load(r.ptx, "kernel.cu")
    assert not any("fence" in name for f in mod.module.functions.values() for name in getattr(f, "labels", {}))
    out = emu.alloc(128)
    res = emu.launch(mod, "k", grid=(1, 1, 1), block=(32, 1, 1), args=[out])
    assert found(res) == [] and (emu.read(out, np.float32, 32) == 2).all()


CALLEE = r'''
__device__ __noinline__ void mark(float* out, int i) { out[i] = -1.0f; }
extern "C" __global__ void k(const float* x, float* out, int n) {
    __shared__ float s[128];
    if (threadIdx.x >= n) { mark(out, threadIdx.x); return; }  // work before the barrier, in a callee
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[n - 1 - threadIdx.x];
}
'''


def test_an_early_return_that_writes_through_a_callee_first_stays_a_warning():
    (out,), res = launch(CALLEE, "k", 1, 128, [np.arange(128, dtype=np.float32)], [(128, np.float32)], [100])
    assert [(f.kind, f.severity) for f in res.findings] == [("barrier-after-exit", "warning")]
    assert out[127] == -1 and out[0] == 99
