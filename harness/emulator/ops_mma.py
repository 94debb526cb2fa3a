"""Tensor-core instructions of sm_80/sm_90 written by hand in inline asm: mma.sync, ldmatrix, stmatrix.

Supported `mma.sync.aligned` shapes and types (all .row.col, as PTX requires for these shapes):
m16n8k16 f16/bf16 -> f32, f16 -> f16; m16n8k8 f16 -> f32/f16, tf32 -> f32; m16n8k4 tf32 -> f32;
m16n8k32 and m16n8k16 s8/u8 (any mix) -> s32 (.satfinite too); m8n8k4 f64. The fragment maps are
the PTX ISA's ("Matrix Fragments for mma.m16n8k16 with floating point type" and its siblings).
A warp's fragments are assembled into matrices, multiplied in float64 (exact for these inputs)
or int64, rounded once into the destination type, and scattered back.

`ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16` and `stmatrix` (the same forms): lanes
8i..8i+7 give the row addresses of matrix i; each lane then holds, in register i, row lane/4,
columns 2(lane%4) and 2(lane%4)+1 of matrix i (of its transpose with .trans). Each row is one
16-byte shared access through the checked path (bounds, alignment, sanitizer, counters).
"""
from __future__ import annotations

import numpy as np

from . import warpmat as wm
from .findings import UnsupportedPTX
from .ops import PLAIN, WARPSYNC, builder, get, put
from .ops_mem import address, locate

G, T4 = wm.G, wm.T4

# (shape, A type family) -> (A map, B map, C map, M, N, K); C/D maps are shared by all shapes.
_C16 = wm.fmap([G + 8 * (i // 2) for i in range(4)], [2 * T4 + i % 2 for i in range(4)])
SHAPES = {
    ("m16n8k16", "f16"): (wm.fmap([G + 8 * ((i // 2) % 2) for i in range(8)],
                                  [2 * T4 + i % 2 + 8 * (i // 4) for i in range(8)]),
                          wm.fmap([2 * T4 + i % 2 + 8 * (i // 2) for i in range(4)], [G] * 4), _C16, 16, 8, 16),
    ("m16n8k8", "f16"): (wm.fmap([G + 8 * (i // 2) for i in range(4)], [2 * T4 + i % 2 for i in range(4)]),
                         wm.fmap([2 * T4 + i for i in range(2)], [G] * 2), _C16, 16, 8, 8),
    ("m16n8k8", "tf32"): (wm.fmap([G + 8 * (i % 2) for i in range(4)], [T4 + 4 * (i // 2) for i in range(4)]),
                          wm.fmap([T4 + 4 * i for i in range(2)], [G] * 2), _C16, 16, 8, 8),
    ("m16n8k4", "tf32"): (wm.fmap([G + 8 * i for i in range(2)], [T4] * 2), wm.fmap([T4], [G]), _C16, 16, 8, 4),
    ("m16n8k32", "i8"): (wm.fmap([G + 8 * ((i // 4) % 2) for i in range(16)],
                                 [4 * T4 + i % 4 + 16 * (i // 8) for i in range(16)]),
                         wm.fmap([4 * T4 + i % 4 + 16 * (i // 4) for i in range(8)], [G] * 8), _C16, 16, 8, 32),
    ("m16n8k16", "i8"): (wm.fmap([G + 8 * (i // 4) for i in range(8)], [4 * T4 + i % 4 for i in range(8)]),
                         wm.fmap([4 * T4 + i for i in range(4)], [G] * 4), _C16, 16, 8, 16),
    ("m8n8k4", "f64"): (wm.fmap([G], [T4]), wm.fmap([T4], [G]), wm.fmap([G] * 2, [2 * T4 + i for i in range(2)]),
                        8, 8, 4),
}
_TYPES = ("f16", "bf16", "tf32", "f32", "s8", "u8", "s32", "f64")


def family(t: str) -> str:
    return {"bf16": "f16", "s8": "i8", "u8": "i8"}.get(t, t)


def regs_of(o) -> tuple:
    return o.items if o.kind == "vec" else (o,)


def reg_readers(eng, inst, o, t="b32"):
    return [get(eng, inst, x, t) for x in regs_of(o)]


def reg_writers(eng, inst, o, t="b32"):
    return [eng.view(x.name, t) if x.kind == "reg" else None for x in regs_of(o)]


def gather_regs(w: wm.Warps, readers) -> list[np.ndarray]:
    """Each register operand over the warps (warps, 32); immediates broadcast."""
    out = []
    for r in readers:
        v = np.asarray(r(w.table.ravel()))
        out.append(np.where(w.exists, np.broadcast_to(v, w.table.size).reshape(w.table.shape), 0))
    return out


def scatter_regs(w: wm.Warps, writers, raws) -> None:
    for view, raw in zip(writers, raws):
        if view is not None:
            w.scatter(view, raw.astype(view.dtype, copy=False))


@builder("mma", pipe="tensor")
def mma(eng, inst):
    shape = next((m for m in inst.mods if m.startswith("m") and "n" in m and "k" in m), None)
    types = [m for m in inst.mods if m in _TYPES]
    if "sync" not in inst.mods or len(types) != 4 or "row" not in inst.mods or "col" not in inst.mods:
        raise UnsupportedPTX(inst.opcode + " (this form of mma)", inst.file, inst.line)
    td, ta, tb, tc = types
    key = (shape, family(ta))
    if key not in SHAPES or family(tb) != family(ta) or (ta in ("f16", "bf16") and tb != ta):
        raise UnsupportedPTX(inst.opcode + f" (shape {shape} with {ta} inputs)", inst.file, inst.line)
    (ar, ac), (br, bc), (cr, cc), M, N, K = SHAPES[key]
    integer = family(ta) == "i8"
    wide = "b64" if ta == "f64" else "b32"
    d, a, b, c = inst.ops[:4]
    dst = reg_writers(eng, inst, d, wide)
    ra, rb, rc = reg_readers(eng, inst, a, wide), reg_readers(eng, inst, b, wide), reg_readers(eng, inst, c, wide)
    per_a = 1 if ta == "f64" else wm.PER_REG[ta]
    if len(ra) * per_a != ar.shape[1] or len(rb) * per_a != br.shape[1]:
        raise UnsupportedPTX(inst.opcode + " (fragment register count)", inst.file, inst.line)
    inst.aux = None  # a full-warp operation: the engine waits for every lane of the warp
    return WARPSYNC, warp_product(eng, inst, (a, b, c), (ra, rb, rc), dst, ((ar, ac), (br, bc), (cr, cc)),
                                  (ta, tb, tc, td), (M, N, K), integer)


def warp_product(eng, inst, operands, readers, dst, layouts, types, dims, integer):
    """The run closure of a warp-wide D = A·B + C, shared by mma.sync and wmma.mma: each lane's
    fragment registers gathered into whole matrices (by the layouts' row/col tables), one exact
    product, D scattered back to the destination registers."""
    (ra, rb, rc), ((ar, ac), (br, bc), (cr, cc)) = readers, layouts
    (ta, tb, tc, td), (M, N, K) = types, dims
    a, b, c = operands
    sat = "satfinite" in inst.mods
    acc = np.int64 if integer else np.float64
    check = wm.fragment_check(eng, inst, (("A", a), ("B", b), ("C", c)))

    def run(sel):
        if check is not None:
            check(sel)
        w = wm.Warps(eng, sel)
        A = wm.assemble(wm.unpack(gather_regs(w, ra), ta), ar, ac, (M, K), acc)
        B = wm.assemble(wm.unpack(gather_regs(w, rb), tb), br, bc, (K, N), acc)
        C = wm.assemble(wm.unpack(gather_regs(w, rc), tc), cr, cc, (M, N), acc)
        scatter_regs(w, dst, wm.pack(wm.scatter_elems(wm.product(A, B, C, integer), cr, cc), td, sat))
    return run


def cvt_tf32(eng, inst):
    """cvt.{rna,rn,rz}{.satfinite}.tf32.f32 d, a: a float32 rounded to tf32 (10 mantissa bits),
    as a .b32 whose low 13 bits are zero; NaN and infinity pass through."""
    mode = next((m for m in inst.mods if m in ("rna", "rn", "rz")), None)
    if mode is None or inst.mods[-2:] != ("tf32", "f32"):
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    d, a = put(eng, inst, inst.ops[0], "b32"), get(eng, inst, inst.ops[1], "b32")
    sat = "satfinite" in inst.mods

    def run(sel):
        u = np.asarray(a(sel)).astype(np.uint64)
        special = (u & 0x7F800000) == 0x7F800000
        if mode == "rna":  # ties away from zero: add half an ulp to the magnitude
            r = u + 0x1000
        elif mode == "rn":
            r = u + 0xFFF + ((u >> 13) & 1)
        else:
            r = u
        r = r & 0xFFFFE000
        if sat:  # a finite value that rounded up to infinity becomes the largest tf32
            r = np.where(((r & 0x7F800000) == 0x7F800000) & ~special, (u & 0x80000000) | 0x7F7FE000, r)
        d(sel, np.where(special, u, r).astype(np.uint32))
    return PLAIN, run


def _matrices(inst) -> int:
    n = next((int(m[1:]) for m in inst.mods if m in ("x1", "x2", "x4")), None)
    if n is None or "m8n8" not in inst.mods or "b16" not in inst.mods or \
            not any(m.startswith("shared") for m in inst.mods):
        raise UnsupportedPTX(inst.opcode + " (only m8n8 .x1/.x2/.x4 .shared .b16)", inst.file, inst.line)
    return n


def _rows(w: wm.Warps, nmat: int):
    """The supplying lanes (8 per matrix) of each warp that exist, and their (warp, row) slots."""
    sup = w.table[:, : 8 * nmat]
    ok = w.exists[:, : 8 * nmat]
    widx, ridx = np.nonzero(ok)
    return sup[ok], widx, ridx


_ROW = np.arange(8)  # the 8 halves of a matrix row, 16 bytes


@builder("ldmatrix", pipe="lsu")
def ldmatrix(eng, inst):
    nmat = _matrices(inst)
    trans = "trans" in inst.mods
    dst = reg_writers(eng, inst, inst.ops[0])
    getaddr, const_addr = address(eng, inst, inst.ops[1], "shared")
    inst.aux = None

    def run(sel):
        w = wm.Warps(eng, sel)
        lanes, widx, ridx = _rows(w, nmat)
        rows = np.zeros((w.n, 8 * nmat, 8), np.uint16)
        a = getaddr(lanes) if getaddr is not None else const_addr
        for part in locate(eng, inst, "shared", a, lanes, 16, 16, "ld"):
            sub = slice(None) if part.lanes is None else part.lanes
            view = part.store.view(np.uint16)
            v = view[(part.index >> 1)[:, None] + _ROW]  # each lane's row of 8 halves at once
            if part.bad is not None:
                v = np.where(part.bad[:, None], np.uint16(0xFFFF), v)
            rows[widx[sub], ridx[sub]] = v
        m = rows.reshape(w.n, nmat, 8, 8)
        if trans:
            m = m.transpose(0, 1, 3, 2)
        lo, hi = m[:, :, G, 2 * T4], m[:, :, G, 2 * T4 + 1]  # (warps, nmat, 32)
        packed = lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)
        scatter_regs(w, dst, [packed[:, i] for i in range(nmat)])
    return WARPSYNC, run


@builder("stmatrix", pipe="lsu")
def stmatrix(eng, inst):
    nmat = _matrices(inst)
    trans = "trans" in inst.mods
    getaddr, const_addr = address(eng, inst, inst.ops[0], "shared")
    src = reg_readers(eng, inst, inst.ops[1])
    inst.aux = None

    def run(sel):
        w = wm.Warps(eng, sel)
        regs = gather_regs(w, src)
        m = np.zeros((w.n, nmat, 8, 8), np.uint16)
        for i, r in enumerate(regs[:nmat]):
            r = r.astype(np.uint32)
            m[:, i, G, 2 * T4] = (r & 0xFFFF).astype(np.uint16)
            m[:, i, G, 2 * T4 + 1] = (r >> 16).astype(np.uint16)
        if trans:
            m = m.transpose(0, 1, 3, 2)
        rows = m.reshape(w.n, 8 * nmat, 8)
        lanes, widx, ridx = _rows(w, nmat)
        a = getaddr(lanes) if getaddr is not None else const_addr
        for part in locate(eng, inst, "shared", a, lanes, 16, 16, "st"):
            sub = np.arange(lanes.size) if part.lanes is None else part.lanes
            keep = np.ones(sub.size, bool) if part.bad is None else ~part.bad
            view = part.store.view(np.uint16)
            idx = (part.index >> 1)[keep]
            data = rows[widx[sub][keep], ridx[sub][keep]]
            view[idx[:, None] + _ROW] = data
    return WARPSYNC, run


__all__ = ["mma", "ldmatrix", "stmatrix", "SHAPES"]
