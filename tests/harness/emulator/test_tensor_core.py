"""Tensor-core and async-copy instructions on the emulator: every mma variant against numpy, with
fragments packed on the host from the PTX ISA's tables; ldmatrix/stmatrix (x1/x2/x4, .trans);
dp4a/dp2a; the special registers cooperative groups read; and the two findings they bring
(cp-async-unwaited, uninitialized-fragment), each provoked with its line and a clean twin."""
from __future__ import annotations

import numpy as np
import pytest

from harness.frontends.nvrtc import compile
from harness.emulator import Emulator, UnsupportedPTX

RNG = np.random.default_rng(14)
LANE = np.arange(32)
g, t = LANE // 4, LANE % 4


def line_of(src: str, marker: str) -> int:
    return next(i for i, text in enumerate(src.splitlines(), 1) if marker in text)


def launch(src, name, arrays, block=32, grid=1, sanitize=True):
    r = compile(src, "kernel.cu")
    assert r.ok, r.log
    emu = Emulator(sanitize=sanitize, counters=False, wall_clock_s=60)
    mod = emu.load(r.ptx, "kernel.cu")
    ptrs = []
    for a in arrays:
        p = emu.alloc(max(a.nbytes, 16))
        emu.write(p, a)
        ptrs.append(p)
    res = emu.launch(mod, name, grid=(grid, 1, 1), block=(block, 1, 1), args=ptrs)
    return [emu.read(p, a.dtype, a.size).reshape(a.shape) for p, a in zip(ptrs, arrays)], res


# ---- mma.sync: (row, col) of element i of each lane, from the PTX ISA's fragment tables --------
def a_k16(i):  # m16n8k16 .f16/.bf16 A: a0..a7
    return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def b_k16(i):
    return 2 * t + i % 2 + 8 * (i // 2), g


def cd(i):  # every m16n8 C/D: c0..c3
    return g + 8 * (i // 2), 2 * t + i % 2


VARIANTS = {  # name -> (opcode, A/B/C/D types, M, N, K, A map, n A elems, B map, n B elems)
    "k16_f16_f32": ("m16n8k16.row.col.f32.f16.f16.f32", ("f16", "f16", "f32", "f32"), 16, 8, 16, a_k16, 8, b_k16, 4),
    "k16_bf16_f32": ("m16n8k16.row.col.f32.bf16.bf16.f32", ("bf16", "bf16", "f32", "f32"), 16, 8, 16, a_k16, 8,
                     b_k16, 4),
    "k16_f16_f16": ("m16n8k16.row.col.f16.f16.f16.f16", ("f16", "f16", "f16", "f16"), 16, 8, 16, a_k16, 8, b_k16, 4),
    "k8_f16_f32": ("m16n8k8.row.col.f32.f16.f16.f32", ("f16", "f16", "f32", "f32"), 16, 8, 8,
                   lambda i: (g + 8 * (i // 2), 2 * t + i % 2), 4, lambda i: (2 * t + i, g), 2),
    "k8_tf32": ("m16n8k8.row.col.f32.tf32.tf32.f32", ("tf32", "tf32", "f32", "f32"), 16, 8, 8,
                lambda i: (g + 8 * (i % 2), t + 4 * (i // 2)), 4, lambda i: (t + 4 * i, g), 2),
    "k32_s8": ("m16n8k32.row.col.s32.s8.s8.s32", ("s8", "s8", "s32", "s32"), 16, 8, 32,
               lambda i: (g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8)), 16,
               lambda i: (4 * t + i % 4 + 16 * (i // 4), g), 8),
    "k32_u8_s8": ("m16n8k32.row.col.s32.u8.s8.s32", ("u8", "s8", "s32", "s32"), 16, 8, 32,
                  lambda i: (g + 8 * ((i // 4) % 2), 4 * t + i % 4 + 16 * (i // 8)), 16,
                  lambda i: (4 * t + i % 4 + 16 * (i // 4), g), 8),
}
NP = {"f16": np.float16, "bf16": np.float32, "tf32": np.float32, "f32": np.float32, "s8": np.int8,
      "u8": np.uint8, "s32": np.int32}
PER = {"f16": 2, "bf16": 2, "tf32": 1, "f32": 1, "s8": 4, "u8": 4, "s32": 1}


def _values(kind, shape):
    if kind in ("s8", "u8"):
        lo, hi = (-128, 128) if kind == "s8" else (0, 256)
        return RNG.integers(lo, hi, shape).astype(NP[kind])
    v = RNG.standard_normal(shape).astype(np.float32)
    if kind in ("bf16", "tf32"):  # their values: the top 16 (19) bits of a float32
        v = (v.view(np.uint32) & (0xFFFF0000 if kind == "bf16" else 0xFFFFE000)).view(np.float32)
    return v.astype(NP[kind])


def _raw(elems, kind):
    """(32, n) element values -> (regs, 32) uint32 registers, low element in the low bits."""
    if kind == "bf16":
        e = (elems.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        e = np.ascontiguousarray(elems.astype(NP[kind]))
    return np.ascontiguousarray(e).view(np.uint32).T.copy()


def _pack(mat, fmap, n, kind):
    elems = np.stack([mat[fmap(i)] for i in range(n)], axis=1)  # (32, n)
    return _raw(elems, kind)


def _mma_kernel(op, types, na, nb, nc):
    cons = lambda k: "f" if k == "f32" else "r"
    ctype = lambda k: "float" if k == "f32" else "unsigned"
    ops, outs, ins, n = [], [], [], 0
    for count, kind, out in ((nc, types[3], True), (na, types[0], False), (nb, types[1], False),
                             (nc, types[2], False)):
        ops.append("{" + ",".join(f"%{n + k}" for k in range(count)) + "}")
        n += count
    D, A, B, C = ctype(types[3]), ctype(types[0]), ctype(types[1]), ctype(types[2])
    outs = ", ".join(f'"={cons(types[3])}"(d[{k}])' for k in range(nc))
    ins = ", ".join([f'"r"(a[{k}])' for k in range(na)] + [f'"r"(b[{k}])' for k in range(nb)]
                    + [f'"{cons(types[2])}"(c[{k}])' for k in range(nc)])
    return f'''
extern "C" __global__ void k(const unsigned* pa, const unsigned* pb, const {C}* pc, {D}* pd) {{
    unsigned l = threadIdx.x;
    {A} a[{na}]; {B} b[{nb}]; {C} c[{nc}]; {D} d[{nc}];
    for (int i = 0; i < {na}; i++) a[i] = pa[i * 32 + l];
    for (int i = 0; i < {nb}; i++) b[i] = pb[i * 32 + l];
    for (int i = 0; i < {nc}; i++) c[i] = pc[i * 32 + l];
    asm volatile("mma.sync.aligned.{op} {ops[0]}, {ops[1]}, {ops[2]}, {ops[3]};" : {outs} : {ins});
    for (int i = 0; i < {nc}; i++) pd[i * 32 + l] = d[i];
}}
'''


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_mma_variant_matches_numpy(name):
    op, types, M, N, K, amap, na, bmap, nb = VARIANTS[name]
    A, B = _values(types[0], (M, K)), _values(types[1], (K, N))
    integer = types[2] == "s32"
    C = RNG.integers(-1000, 1000, (M, N)).astype(np.int32) if integer else _values(types[2], (M, N))
    ra, rb = _pack(A, amap, na, types[0]), _pack(B, bmap, nb, types[1])
    rc = _pack(C, cd, 4, types[2])
    dt = np.float32 if types[3] == "f32" else np.uint32 if types[3] == "f16" else np.int32
    rcv = rc.view(np.float32) if types[2] == "f32" else rc.view(np.int32) if integer else rc
    src = _mma_kernel(op, types, ra.shape[0], rb.shape[0], rc.shape[0])
    (_, _, _, d), res = launch(src, "k", [ra, rb, rcv, np.zeros(rc.shape, dt)])
    assert res.findings == []
    if types[3] == "f16":
        elems = np.ascontiguousarray(d.T).view(np.float16)  # (32, 4)
    else:
        elems = d.T
    got = np.zeros((M, N), np.float64)
    for i in range(4):
        got[cd(i)] = elems[:, i]
    wide = np.int64 if integer else np.float64
    want = A.astype(wide) @ B.astype(wide) + C.astype(wide)
    if integer:
        np.testing.assert_array_equal(got, want)
    else:
        tol = 2e-3 if types[3] == "f16" else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


# ---- ldmatrix / stmatrix -------------------------------------------------------------------------
LDSM = r'''
extern "C" __global__ void k(const unsigned short* src, unsigned* out, unsigned short* back) {
    __shared__ __align__(16) unsigned short s[4 * 64];
    __shared__ __align__(16) unsigned short s2[4 * 64];
    for (int i = threadIdx.x; i < 2 * 64; i += 32)  // word copies: the sanitizer's unit is 4 bytes
        reinterpret_cast<unsigned*>(s)[i] = reinterpret_cast<const unsigned*>(src)[i];
    __syncwarp();
    unsigned l = threadIdx.x, r[4] = {0, 0, 0, 0};
    unsigned addr = (unsigned)__cvta_generic_to_shared(&s[(l % (8 * NMAT)) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.xNMATTRANS.shared.b16 REGS, [%NA];" : OUTS : "r"(addr));
    for (int i = 0; i < 4; i++) out[i * 32 + l] = r[i];
    unsigned addr2 = (unsigned)__cvta_generic_to_shared(&s2[(l % (8 * NMAT)) * 8]);
    asm volatile("stmatrix.sync.aligned.m8n8.xNMATTRANS.shared.b16 [%0], SREGS;" :: "r"(addr2), INS : "memory");
    __syncwarp();
    for (int i = threadIdx.x; i < NMAT * 32; i += 32)
        reinterpret_cast<unsigned*>(back)[i] = reinterpret_cast<unsigned*>(s2)[i];
}
'''


@pytest.mark.parametrize("nmat", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_gives_each_lane_its_row_pair_and_stmatrix_undoes_it(nmat, trans):
    src = LDSM.replace("NMAT", str(nmat)).replace("TRANS", ".trans" if trans else "")
    src = src.replace("SREGS", "{" + ",".join(f"%{k + 1}" for k in range(nmat)) + "}")
    src = src.replace("REGS", "{" + ",".join(f"%{k}" for k in range(nmat)) + "}").replace("%NA", f"%{nmat}")
    src = src.replace("OUTS", ", ".join(f'"=r"(r[{k}])' for k in range(nmat)))
    src = src.replace("INS", ", ".join(f'"r"(r[{k}])' for k in range(nmat)))
    m = RNG.integers(0, 65536, 256).astype(np.uint16)
    (_, out, back), res = launch(src, "k", [m, np.zeros(128, np.uint32), np.zeros(256, np.uint16)])
    assert res.findings == []
    mats, out = m.reshape(4, 8, 8), out.reshape(4, 32)
    for i in range(nmat):
        mi = mats[i].T if trans else mats[i]
        want = mi[g, 2 * t].astype(np.uint32) | (mi[g, 2 * t + 1].astype(np.uint32) << 16)
        np.testing.assert_array_equal(out[i], want)
    np.testing.assert_array_equal(back[: 64 * nmat], m[: 64 * nmat])


# ---- dp4a / dp2a ---------------------------------------------------------------------------------
DOT = r'''
extern "C" __global__ void k(const int* a, const int* b, int* out) {
    int i = threadIdx.x;
    out[4 * i] = __dp4a(a[i], b[i], i);
    out[4 * i + 1] = (int)__dp4a((unsigned)a[i], (unsigned)b[i], 7u);
    out[4 * i + 2] = __dp2a_lo(a[i], b[i], -i);
    out[4 * i + 3] = __dp2a_hi(a[i], b[i], 3);
}
'''


def test_dp4a_and_dp2a_match_numpy_with_sign_extension():
    a = RNG.integers(-2**31, 2**31, 64).astype(np.int32)
    b = RNG.integers(-2**31, 2**31, 64).astype(np.int32)
    (_, _, out), res = launch(DOT, "k", [a, b, np.zeros(256, np.int32)], block=64)
    out = out.reshape(64, 4).astype(np.int64)
    s8 = lambda v: v.view(np.int8).reshape(-1, 4).astype(np.int64)
    u8 = lambda v: v.view(np.uint8).reshape(-1, 4).astype(np.int64)
    s16 = a.view(np.int16).reshape(-1, 2).astype(np.int64)
    i = np.arange(64)
    wrap = lambda v: ((v + 2**31) % 2**32) - 2**31
    np.testing.assert_array_equal(out[:, 0], wrap((s8(a) * s8(b)).sum(1) + i))
    np.testing.assert_array_equal(out[:, 1], wrap((u8(a) * u8(b)).sum(1) + 7))
    np.testing.assert_array_equal(out[:, 2], wrap((s16 * s8(b)[:, :2]).sum(1) - i))
    np.testing.assert_array_equal(out[:, 3], wrap((s16 * s8(b)[:, 2:]).sum(1) + 3))


# ---- special registers ---------------------------------------------------------------------------
def test_a_missing_special_register_is_named_not_the_mov():
    src = 'extern "C" __global__ void k(unsigned* out) {\n unsigned v;\n' \
          ' asm volatile("mov.u32 %0, %%envreg3;" : "=r"(v)); // MARK\n out[0] = v;\n}\n'
    with pytest.raises(UnsupportedPTX) as info:
        launch(src, "k", [np.zeros(4, np.uint32)])
    assert "%envreg3" in str(info.value) and info.value.line == line_of(src, "MARK")


def test_reserved_shared_memory_is_a_defined_area_before_the_learners():
    src = r'''
extern "C" __global__ void k(unsigned* out) {
    __shared__ unsigned mine[32];
    unsigned r0, r1, end;
    asm("mov.u32 %0, %%reserved_smem_offset_0;" : "=r"(r0));
    asm("mov.u32 %0, %%reserved_smem_offset_1;" : "=r"(r1));
    asm("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(end));
    mine[threadIdx.x] = threadIdx.x;
    unsigned at = (unsigned)__cvta_generic_to_shared(&mine[threadIdx.x]);
    unsigned z;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(z) : "r"(r1 + 4 * threadIdx.x));
    out[threadIdx.x] = z + (at >= end) * 1000 + (r1 > r0) * 100;
}
'''
    (out,), res = launch(src, "k", [np.zeros(32, np.uint32)])
    assert res.findings == []
    np.testing.assert_array_equal(out, np.full(32, 1100))


# ---- cp.async groups -----------------------------------------------------------------------------
GROUPS = r'''
extern "C" __global__ void k(const float* x, float* out) {
    __shared__ __align__(16) float s[64];
    unsigned i = threadIdx.x;
    unsigned d0 = (unsigned)__cvta_generic_to_shared(&s[i]), d1 = (unsigned)__cvta_generic_to_shared(&s[32 + i]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d0), "l"(x + i));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(d1), "l"(x + 32 + i), "r"(i % 2 ? 0 : 4));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;");
    out[i] = s[i];          // the older group has landed
    out[32 + i] = s[32 + i]; // MARK: the newest may still be in flight
    asm volatile("cp.async.wait_all;");
    out[64 + i] = s[32 + i]; // landed now, zero-filled for odd i (src-size 0)
}
'''


def test_wait_group_n_leaves_the_newest_n_groups_in_flight_and_src_size_zero_fills():
    x = np.arange(1, 65, dtype=np.float32)
    (_, out), res = launch(GROUPS, "k", [x, np.zeros(96, np.float32)])
    np.testing.assert_array_equal(out[:32], x[:32])
    assert np.isnan(out[32:64]).all()  # still the poison shared memory starts with
    np.testing.assert_array_equal(out[64:], np.where(np.arange(32) % 2, 0, x[32:]))
    mark = line_of(GROUPS, "MARK")  # nothing has written those bytes yet, either
    assert sorted((f.kind, f.line) for f in res.findings) == [("cp-async-unwaited", mark),
                                                              ("uninitialized-read", mark)]


def test_mma_waits_for_its_whole_warp_and_a_missing_lane_is_a_deadlock():
    src = r'''
extern "C" __global__ void k(const unsigned* p, float* out) {
    if (threadIdx.x >= {LIVE}) return;
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    unsigned l = threadIdx.x;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};" // MARK
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(p[l]), "r"(p[l + 32]), "r"(p[l + 64]));
    out[l] = d[0] + d[1] + d[2] + d[3];
}
'''
    ones = np.full(96, 0x3C003C00, np.uint32)  # every f16 element 1.0: each D element is 8
    (_, out), res = launch(src.replace("{LIVE}", "32"), "k", [ones, np.zeros(32, np.float32)])
    np.testing.assert_array_equal(out, np.full(32, 32.0))
    (_, out), res = launch(src.replace("{LIVE}", "16"), "k", [ones, np.zeros(32, np.float32)])
    assert res.stopped and any(f.kind == "deadlock" and f.line == line_of(src, "MARK") for f in res.findings)


def test_cluster_registers_describe_a_cluster_of_one_block():
    src = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(unsigned* out) {
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0)
        out[blockIdx.x] = cluster.block_rank() * 1000 + cluster.num_blocks() * 100 + cluster.block_index().x * 10
                          + (cluster.dim_blocks().x == 1);
}
'''
    (out,), res = launch(src, "k", [np.zeros(3, np.uint32)], block=32, grid=3)
    assert res.findings == []
    np.testing.assert_array_equal(out, [101, 101, 101])
