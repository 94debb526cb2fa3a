"""The findings of Hopper's classic mistakes (TMA / bulk copies and mbarriers, wgmma, distributed
shared memory), each provoked by a kernel that names its line (`// expect: KIND`) and with a
correct twin that must be clean."""
from __future__ import annotations

import numpy as np
import pytest

from harness.emulator import Emulator
from harness.frontends.nvrtc import compile

HEAD = r'''
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ __align__(128) float buf[2][256];
    __shared__ __align__(8) unsigned long long bar[2];
    unsigned b0 = (unsigned)__cvta_generic_to_shared(&bar[0]), s0 = (unsigned)__cvta_generic_to_shared(&buf[0][0]);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b0), "r"(1));
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b0 + 8), "r"(1));
    }
    __syncthreads();
    unsigned ok = 0;
'''
WAIT = ('while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; '
        'selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(b0), "r"(PARITY) : "memory");')
ONE_COPY = HEAD + r'''    if (threadIdx.x < {PRODUCERS}) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b0), "r"({EXPECT}) : "memory"); {ARRIVE}
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" :: "r"(s0), "l"(x), "r"(1024), "r"(b0) : "memory"); {COPY}
    }
    {WAIT}
    out[threadIdx.x] = buf[0][255 - threadIdx.x]; {READ}
}
'''
# A two-chunk stream whose second copy is issued before the first chunk is read: into the other
# stage (correct) or into the same one (the producer refills a buffer its consumers still read).
STREAM = HEAD + r'''    for (int c = 0; c < 2; c++) {
        if (threadIdx.x == 0 && c == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b0), "r"(1024) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" :: "r"(s0), "l"(x), "r"(1024), "r"(b0) : "memory");
        }
        if (threadIdx.x == 0 && c == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b0 + 8), "r"(1024) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" :: "r"(s0 + {NEXT} * 1024), "l"(x + 256), "r"(1024), "r"(b0 + 8) : "memory");
        }
        unsigned bc = b0 + 8 * c;
        ok = 0;
        while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(bc), "r"(0) : "memory");
        out[c * 128 + threadIdx.x] = buf[c * {NEXT}][threadIdx.x]; // expect: bulk-copy-overwrite
        __syncthreads();
    }
}
'''
FENCE_ = 'asm volatile("wgmma.fence.sync.aligned;" ::: "memory");'
WGMMA = r'''
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ __align__(1024) unsigned short tile[64 * 16 + 16 * 16];
    for (int i = threadIdx.x; i < 64 * 16 + 256; i += 128) tile[i] = 0x3F80;  // bf16 1.0
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    unsigned base = (unsigned)__cvta_generic_to_shared(tile);
    unsigned long long fixed = (128ull >> 4) << 16 | (256ull >> 4) << 32;  // interleaved, K-major
    unsigned long long a = fixed | ((base >> 4) & 0x3FFF), b = fixed | (((base + 2048) >> 4) & 0x3FFF);
    float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    {FENCE}
    asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0; }" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]) : "l"(a), "l"(b)); {MMA}
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    {EARLY}
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    {LATE}
    for (int i = 0; i < 8; i++) out[threadIdx.x * 8 + i] = d[i];
}
'''
# FlashAttention's order: S = QKᵀ and O += PV into two accumulators. O is rescaled between rounds;
# one fence after the rescale covers both wgmmas that follow (PTX allows it), none leaves O's
# wgmma reading registers the warp changed since O's own last wgmma.
_MMA = ('asm volatile("{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 '
        '{%0,%1,%2,%3,%4,%5,%6,%7}, %8, %9, p, 1, 1, 0, 0; }" : "+f"(R[0]), "+f"(R[1]), "+f"(R[2]), "+f"(R[3]), '
        '"+f"(R[4]), "+f"(R[5]), "+f"(R[6]), "+f"(R[7]) : "l"(a), "l"(b));')
TWO_ACC = WGMMA.split("    {FENCE}")[0].replace("float d[8]", "float e[8] = {0, 0, 0, 0, 0, 0, 0, 0}, d[8]") + (
    "    " + FENCE_ + "\n    " + _MMA.replace("R[", "d[") + "\n    " + _MMA.replace("R[", "e[") + "\n"
    "    asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
    "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
    "    for (int i = 0; i < 8; i++) e[i] *= 0.5f;  // the online softmax's rescale of O\n"
    "    {FENCE2}\n    " + _MMA.replace("R[", "d[") + "\n    " + _MMA.replace("R[", "e[") + " {MMA}\n"
    "    asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\");\n"
    "    asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\");\n"
    "    for (int i = 0; i < 8; i++) out[threadIdx.x * 8 + i] = d[i] + e[i];\n}\n")
CLUSTER = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1) k(const float* x, float* out) {
    __shared__ float cell[128];
    cg::cluster_group cl = cg::this_cluster();
    cell[threadIdx.x] = x[threadIdx.x] + cl.block_rank();
    {SYNC}
    float* peer = cl.map_shared_rank(cell, cl.block_rank() ^ 1);
    out[blockIdx.x * 128 + threadIdx.x] = peer[threadIdx.x]; // expect: dsmem-unsynchronized
    cl.sync();
}
'''
NO_INIT = r'''
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    {INIT}
    __syncthreads();
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory"); // expect: mbarrier-uninitialized
    out[threadIdx.x] = 1.0f;
}
'''
FENCE = 'asm volatile("wgmma.fence.sync.aligned;" ::: "memory");'
STORE = "tile[threadIdx.x] = 0x4000;"
_ONE = {"{PRODUCERS}": "1", "{EXPECT}": "1024", "{ARRIVE}": "", "{COPY}": "", "{READ}": "",
        "{WAIT}": WAIT.replace("PARITY", "0")}
CASES = {  # name -> (template, kind, provoking fill, correct fill)
    "no-wait": (ONE_COPY, "bulk-copy-unwaited", {**_ONE, "{WAIT}": "", "{READ}": "// expect"}, _ONE),
    "wrong-phase": (ONE_COPY, "bulk-copy-unwaited",
                    {**_ONE, "{WAIT}": WAIT.replace("PARITY", "1"), "{READ}": "// expect"}, _ONE),
    "too-many-bytes": (ONE_COPY, "mbarrier-never-completes",
                       {**_ONE, "{EXPECT}": "2048", "{WAIT}": WAIT.replace("PARITY", "0") + " // expect"}, _ONE),
    "too-few-bytes": (ONE_COPY, "mbarrier-tx-mismatch", {**_ONE, "{EXPECT}": "512", "{COPY}": "// expect"}, _ONE),
    "every-thread-arrives": (ONE_COPY, "mbarrier-over-arrive", {**_ONE, "{PRODUCERS}": "32", "{ARRIVE}": "// expect"},
                             _ONE),
    "one-buffer-two-stages": (STREAM, "bulk-copy-overwrite", {"{NEXT}": "0"}, {"{NEXT}": "1"}),
    "no-wgmma-fence": (WGMMA, "wgmma-missing-fence", {"{FENCE}": "", "{MMA}": "// expect", "{EARLY}": "",
                                                      "{LATE}": STORE},
                       {"{FENCE}": FENCE, "{MMA}": "", "{EARLY}": "", "{LATE}": STORE}),
    "arrive-before-init": (NO_INIT, "mbarrier-uninitialized", {"{INIT}": ""},
                           {"{INIT}": 'if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 128;" '
                                      ':: "r"(b) : "memory");'}),
    "remote-read-without-cluster-sync": (CLUSTER, "dsmem-unsynchronized", {"{SYNC}": ""}, {"{SYNC}": "cl.sync();"}),
    "rescaled-accumulator-without-fence": (TWO_ACC, "wgmma-missing-fence", {"{FENCE2}": "", "{MMA}": "// expect"},
                                           {"{FENCE2}": FENCE, "{MMA}": ""}),
    "store-before-wait": (WGMMA, "wgmma-operand-changed",
                          {"{FENCE}": FENCE, "{MMA}": "", "{EARLY}": STORE + " // expect", "{LATE}": ""},
                          {"{FENCE}": FENCE, "{MMA}": "", "{EARLY}": "", "{LATE}": STORE}),
}

KINDS = {kind for _, kind, _, _ in CASES.values()} | {"wgmma-missing-fence"}  # the kinds these tests provoke


def _source(name, fix):
    src, kind, bad, good = CASES[name]
    for key, value in (good if fix else bad).items():
        src = src.replace(key, value.replace("// expect", f"// expect: {kind}"))
    return src


def _run(src):
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    emu = Emulator(sanitize=True, counters=False, wall_clock_s=60)
    mod = emu.load(r.ptx, "kernel.cu")
    x = np.arange(1024, dtype=np.float32)
    px, out = emu.alloc(x.nbytes), emu.alloc(4096)
    emu.write(px, x)
    emu.memset(out, 0, 4096)
    grid = (2, 1, 1) if "__cluster_dims__" in src else (1, 1, 1)  # a cluster of two blocks
    res = emu.launch(mod, "k", grid=grid, block=(128, 1, 1), args=[px, out])
    return res, emu.read(out, np.float32, 1024)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_provokes_its_finding_with_its_line(name):
    src = _source(name, fix=False)
    line = next(i for i, text in enumerate(src.splitlines(), 1) if "// expect:" in text)
    kind = CASES[name][1]
    res, _ = _run(src)
    got = [(f.kind, f.line) for f in res.findings]
    assert (kind, line) in got, got
    f = next(f for f in res.findings if f.kind == kind)
    assert f.file == "kernel.cu" and f.thread is not None and len(f.message) > 80
    if kind == "mbarrier-never-completes":
        assert res.stopped and "1024 transaction bytes" in f.message


@pytest.mark.parametrize("name", sorted(CASES))
def test_correct_twin_is_clean(name):
    res, out = _run(_source(name, fix=True))
    assert [(f.kind, f.line, f.message) for f in res.findings] == []
    if CASES[name][0] is ONE_COPY:  # the copy landed: out[i] = x[255 - i]
        np.testing.assert_array_equal(out[:128], 255 - np.arange(128, dtype=np.float32))
    if CASES[name][0] is WGMMA:  # all-ones 64x16 @ 16x16: every output is 16
        np.testing.assert_array_equal(out, 16.0)
    if CASES[name][0] is CLUSTER:  # each block read the other's cell: x + the other's rank
        x = np.arange(128, dtype=np.float32)
        np.testing.assert_array_equal(out[:256], np.concatenate([x + 1, x]))


def test_without_the_wait_the_buffer_keeps_its_old_bytes():
    _, out = _run(_source("no-wait", fix=False))
    assert np.isnan(out[:128]).all()  # shared memory starts poisoned: the copy has not landed


def test_a_tma_reduction_the_hardware_lacks_stops_the_kernel_like_a_gpu():
    """.add into a uint8 tensor map is an illegal instruction on an H200: here a trap finding."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "zoo"))
    import _zoo

    dev = _zoo.Device("hopper_tma")
    t = np.arange(32 * 16, dtype=np.uint8)
    src, dst, acc = dev.upload(t), dev.upload(np.zeros_like(t)), dev.upload(t.copy())
    maps = [dev.upload(np.frombuffer(dev.tensor_map("uint8", p, (32, 16), (32,), (32, 16)), np.uint8))
            for p in (src, dst, acc)]
    zeros = dev.upload(np.zeros(5, np.int32))
    raw = dev.empty(512, np.uint8)
    res = dev.emu.launch(dev.mod, "tensor_box", grid=(1, 1, 1), block=(128, 1, 1),
                         args=[*maps, zeros, zeros, raw, 512, 2, 1])
    [f] = [f for f in res.findings if f.kind == "trap"]
    assert "no .add reduction for a uint8 tensor map" in f.message and res.stopped
    np.testing.assert_array_equal(dev.read(acc, np.uint8, t.size), t)  # nothing was reduced
