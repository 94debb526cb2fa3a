"""The findings the tensor-core instructions bring, each provoked by a kernel that names its line
(`// expect: KIND`) and with a correct twin that must be clean."""
from __future__ import annotations

import numpy as np
import pytest

from harness.frontends.nvrtc import compile
from harness.emulator import Emulator

CP_ASYNC = r'''
#include <cuda_pipeline.h>
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ __align__(16) float s[128];
    if (threadIdx.x < 32) {
        __pipeline_memcpy_async(&s[4 * threadIdx.x], &x[4 * threadIdx.x], 16);
        __pipeline_commit();
        {WAIT}
    }
    __syncthreads();
    out[threadIdx.x] = s[127 - threadIdx.x]; // expect: cp-async-unwaited
}
'''
FRAGMENT = r'''
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void k(const float* x, float* out) {
    const half* a = reinterpret_cast<const half*>(x);
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    {FILL}
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, a + 256, 16);
    wmma::mma_sync(acc, fa, fb, acc); // expect: uninitialized-fragment
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
'''
MMA_ASM = r'''
extern "C" __global__ void k(const float* x, float* out) {
    const unsigned* p = reinterpret_cast<const unsigned*>(x);
    unsigned l = threadIdx.x;
    unsigned a0 = p[l], a1 = p[l + 32], a2 = p[l + 64], a3 = p[l + 96], b0 = p[l + 128], b1 = p[l + 160];
    float c[4]{INIT};
{UNROLL}    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, " // expect: uninitialized-fragment
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    for (int i = 0; i < 4; i++) out[4 * l + i] = c[i];
}
'''
UNROLL = "#pragma unroll\n    for (int k = 0; k < 2; k++)\n"
CASES = {  # name -> (template, block, provoking fill, correct fill)
    "cp-async-unwaited": (CP_ASYNC, 128, {"{WAIT}": ""}, {"{WAIT}": "__pipeline_wait_prior(0);"}),
    "uninitialized-fragment": (FRAGMENT, 32, {"{FILL}": ""}, {"{FILL}": "wmma::fill_fragment(acc, 0.0f);"}),
    "uninitialized-fragment-asm": (MMA_ASM, 32, {"{INIT}": "", "{UNROLL}": ""},
                                   {"{INIT}": " = {0.f, 0.f, 0.f, 0.f}", "{UNROLL}": ""}),
    # two k steps unrolled: two mmas accumulate into the same registers, and neither initialises them
    "uninitialized-fragment-asm-unrolled": (MMA_ASM, 32, {"{INIT}": "", "{UNROLL}": UNROLL},
                                            {"{INIT}": " = {0.f, 0.f, 0.f, 0.f}", "{UNROLL}": UNROLL}),
}
KINDS = {name.split("-asm")[0] for name in CASES}  # the kinds these tests provoke


def _source(name, fix):
    src, _, bad, good = CASES[name]
    for key, value in (good if fix else bad).items():
        src = src.replace(key, value)
    return src


def _run(src, block):
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    emu = Emulator(sanitize=True, counters=True, wall_clock_s=30)
    mod = emu.load(r.ptx, "kernel.cu")
    x = (np.arange(1024, dtype=np.float32) % 7) * 0.25
    px, out = emu.alloc(x.nbytes), emu.alloc(4096)
    emu.write(px, x)
    emu.memset(out, 0, 4096)
    res = emu.launch(mod, "k", grid=(2, 1, 1), block=(block, 1, 1), args=[px, out])
    return res, emu.read(out, np.float32, block)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_provokes_its_finding_with_its_line(name):
    src = _source(name, fix=False)
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "// expect:" in text)
    kind = name.split("-asm")[0]
    res, _ = _run(src, CASES[name][1])
    got = [(f.kind, f.line) for f in res.findings]
    assert (kind, line) in got, got
    f = next(f for f in res.findings if f.kind == kind)
    assert f.file == "kernel.cu" and f.block == (0, 0, 0) and f.thread is not None
    if kind == "cp-async-unwaited":
        assert f.other_line == line - 5 and "cp.async" in f.message and "wait" in f.message


@pytest.mark.parametrize("name", sorted(CASES))
def test_correct_twin_is_clean(name):
    res, out = _run(_source(name, fix=True), CASES[name][1])
    assert [(f.kind, f.line, f.message) for f in res.findings] == []
    if name == "cp-async-unwaited":  # and the data landed: out[i] = x[127 - i]
        x = (np.arange(128, dtype=np.float32) % 7) * 0.25
        np.testing.assert_array_equal(out, x[::-1])


def test_without_the_wait_the_destination_keeps_its_old_bytes():
    res, out = _run(_source("cp-async-unwaited", fix=False), 128)
    assert np.isnan(out).all()  # shared memory starts poisoned: the copy has not landed
