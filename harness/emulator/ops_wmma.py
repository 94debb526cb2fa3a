"""The wmma instructions NVRTC emits for <mma.h>: wmma.load.{a,b,c}, wmma.mma, wmma.store.d.

PTX leaves the layout of wmma fragments unspecified; a program may only load, multiply, store and
touch elements uniformly (fill_fragment, x[i] *= alpha). So the emulator chooses one, consistent
among the three instructions and independent of the memory layout (.row/.col decide only the
addresses): matrix A is the mma.m16n8k16 A fragment, B and C/D are two m16n8 fragments side by
side (columns 0-7, then 8-15). The f16 A and B fragments of eight registers hold their eight
elements twice (registers 4-7 repeat 0-3), the way the sixteen-element fragment of the CUDA API
is sized. Supported: m16n16k16 with f16 or bf16 inputs (f32 or f16 accumulators) and with s8/u8
inputs (s32), m16n16k8 tf32; global, shared and generic addresses, any stride. Every element
pair that is adjacent in memory is one 4-byte access through the checked path (bounds,
alignment, sanitizer, counters), else each element is one access.
"""
from __future__ import annotations

import numpy as np

from . import warpmat as wm
from .findings import UnsupportedPTX
from .ops import WARPSYNC, builder, get
from .ops_mem import _subsel, address, locate
from .ops_mma import gather_regs, reg_readers, reg_writers, scatter_regs, warp_product

G, T4 = wm.G, wm.T4
_EL = [(G + 8 * ((i // 2) % 2), 2 * T4 + i % 2 + 8 * (i // 4)) for i in range(8)]  # A, 16x16
_BK = [(2 * T4 + i % 2 + 8 * ((i // 2) % 2), G + 8 * (i // 4)) for i in range(8)]  # B, 16x16
_CD = [(G + 8 * ((i // 2) % 2), 2 * T4 + i % 2 + 8 * (i // 4)) for i in range(8)]  # C/D, 16x16
_A8 = [(G + 8 * ((i // 4) % 2), 4 * T4 + i % 4) for i in range(8)]  # s8 A, 16x16 (k 0-15)
_B8 = [(4 * T4 + i % 4, G + 8 * (i // 4)) for i in range(8)]  # s8 B
_AT = [(G + 8 * (i % 2), T4 + 4 * (i // 2)) for i in range(4)]  # tf32 A, 16x8
_BT = [(T4 + 4 * (i % 2), G + 8 * (i // 2)) for i in range(4)]  # tf32 B, 8x16


def _m(pairs):
    return wm.fmap([p[0] for p in pairs], [p[1] for p in pairs])


# (shape, which, element type) -> (map, rows, cols, registers)
FRAGS = {}
for _t in ("f16", "bf16"):
    FRAGS[("m16n16k16", "a", _t)] = (_m(_EL), 16, 16, 8 if _t == "f16" else 4)
    FRAGS[("m16n16k16", "b", _t)] = (_m(_BK), 16, 16, 8 if _t == "f16" else 4)
for _t in ("s8", "u8"):
    FRAGS[("m16n16k16", "a", _t)] = (_m(_A8), 16, 16, 2)
    FRAGS[("m16n16k16", "b", _t)] = (_m(_B8), 16, 16, 2)
FRAGS[("m16n16k8", "a", "tf32")] = (_m(_AT), 16, 8, 4)
FRAGS[("m16n16k8", "b", "tf32")] = (_m(_BT), 8, 16, 4)
for _s in ("m16n16k16", "m16n16k8"):
    FRAGS[(_s, "c", "f32")] = (_m(_CD), 16, 16, 8)
    FRAGS[(_s, "c", "f16")] = (_m(_CD), 16, 16, 4)
    FRAGS[(_s, "c", "s32")] = (_m(_CD), 16, 16, 8)
_SIZE = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "s8": 1, "u8": 1, "s32": 4}
_TYPES = tuple(_SIZE)


def _frag(inst, which, t):
    shape = next((m for m in inst.mods if m.startswith("m16n16")), None)
    key = (shape, "c" if which == "d" else which, t)
    if key not in FRAGS:
        raise UnsupportedPTX(f"{inst.opcode} (wmma shape {shape} {which} {t})", inst.file, inst.line)
    return FRAGS[key]


def _addresses(w, base, stride, rmap, cmap, col_major, size):
    """Byte addresses (warps, 32, elements) of each lane's elements."""
    r, c = rmap[None], cmap[None]
    off = (c * stride + r) if col_major else (r * stride + c)
    return base[..., None] + (off * size).astype(np.int64)


def _plan(inst, kind):
    which = inst.mods[1] if kind == "load" else "d"
    t = next((m for m in inst.mods[2:] if m in _TYPES), None)
    col = "col" in inst.mods
    space = next((m for m in inst.mods if m in ("global", "shared")), "generic")
    (rmap, cmap), rows, cols, nregs = _frag(inst, which, t)
    return t, col, space, rmap, cmap, nregs


def _accesses(eng, inst, space, lanes, addrs, size, op):
    """Element accesses of (lanes, elements): pairs adjacent in memory merge into one access.
    Yields (element indices, parts) for each access made."""
    e = addrs.shape[1]
    step = 2 if size <= 2 and e % 2 == 0 else 1
    for k in range(0, e, step):
        a0 = addrs[:, k]
        if step == 2 and np.all(addrs[:, k + 1] - a0 == size) and not np.any(a0 % (2 * size)):
            yield (k, k + 1), locate(eng, inst, space, _conv(a0, space), lanes, 2 * size, 2 * size, op)
            continue
        for j in range(k, k + step):
            yield (j,), locate(eng, inst, space, _conv(addrs[:, j], space), lanes, size, size, op)


def _conv(a, space):
    return a.astype(np.int64) if space == "shared" else a.astype(np.uint64)


_DT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _setup(eng, inst, addr_op, stride_op):
    getaddr, const_addr = address(eng, inst, addr_op, "generic")
    stride = get(eng, inst, stride_op, "u32") if stride_op is not None else None
    return getaddr, const_addr, stride


def _base_and_stride(w, getaddr, const_addr, stride, default, space):
    lanes = w.table.ravel()
    base = getaddr(lanes) if getaddr is not None else np.full(lanes.size, const_addr)
    base = np.asarray(base).astype(np.int64).reshape(w.table.shape)
    s = default if stride is None else np.asarray(stride(lanes)).astype(np.int64)
    s = np.broadcast_to(s, lanes.size).reshape(w.table.shape)[..., None]
    return base, s


@builder("wmma", pipe="tensor")
def wmma(eng, inst):
    kind = inst.mods[0]
    if kind == "mma":
        return _mma(eng, inst)
    if kind not in ("load", "store") or "sync" not in inst.mods:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    t, col, space, rmap, cmap, nregs = _plan(inst, kind)
    size = _SIZE[t]
    per = 4 // size if size < 4 else 1
    regs_op, addr_op = (inst.ops[0], inst.ops[1]) if kind == "load" else (inst.ops[1], inst.ops[0])
    stride_op = inst.ops[2] if len(inst.ops) > 2 else None
    getaddr, const_addr, stride = _setup(eng, inst, addr_op, stride_op)
    nunique = rmap.shape[1]
    default = 16 if not col else 16
    if kind == "load":
        dst = reg_writers(eng, inst, regs_op)
    else:
        src = reg_readers(eng, inst, regs_op)
    inst.aux = None
    dt = _DT[size]

    def run(sel):
        w = wm.Warps(eng, sel)
        base, s = _base_and_stride(w, getaddr, const_addr, stride, default, space)
        ok = w.exists.ravel()
        lanes = w.table.ravel()[ok]
        addrs = _addresses(w, base, s, rmap, cmap, col, size).reshape(-1, nunique)[ok]
        if kind == "load":
            vals = np.zeros((lanes.size, nunique), dt)
            for elems, parts in _accesses(eng, inst, space, lanes, addrs, size, "ld"):
                for p in parts:
                    rows = slice(None) if p.lanes is None else p.lanes
                    view = p.store.view(dt)
                    idx = p.index // size
                    for j, e in enumerate(elems):
                        v = view[idx + j]
                        vals[rows, e] = v if p.bad is None else np.where(p.bad, dt(~dt(0)), v)
            full = np.zeros((w.table.size, nunique), dt)
            full[ok] = vals
            raw = np.ascontiguousarray(full).view(np.uint32) if per > 1 else full.astype(np.uint32)
            raw = raw.reshape(w.n, 32, -1)
            regs = [raw[..., k % raw.shape[-1]] for k in range(nregs)]  # f16 A/B: twice
            scatter_regs(w, dst, regs)
            return
        raw = np.stack(gather_regs(w, src[: nunique // per]), axis=-1).astype(np.uint32)
        vals = np.ascontiguousarray(raw).view(dt).reshape(-1, nunique)[ok] if per > 1 else \
            raw.reshape(-1, nunique)[ok]
        for elems, parts in _accesses(eng, inst, space, lanes, addrs, size, "st"):
            for p in parts:
                rows = np.arange(lanes.size) if p.lanes is None else p.lanes
                keep = np.ones(rows.size, bool) if p.bad is None else ~p.bad
                view = p.store.view(dt)
                idx = (p.index // size)[keep]
                for j, e in enumerate(elems):
                    view[idx + j] = vals[rows[keep], e].astype(dt)
    return WARPSYNC, run


def _mma(eng, inst):
    types = [m for m in inst.mods if m in _TYPES]
    if len(types) == 2:  # .dtype.ctype with f16 inputs
        td, tc = types
        ta = tb = "f16"
    elif len(types) == 4:
        td, ta, tb, tc = types
    else:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    (ar, ac), M, K, _ = _frag(inst, "a", ta)
    (br, bc), _, N, _ = _frag(inst, "b", tb)
    (cr, cc), _, _, _ = _frag(inst, "c", tc)
    _frag(inst, "d", td)
    d, a, b, c = inst.ops[:4]
    dst = reg_writers(eng, inst, d)
    ra, rb, rc = reg_readers(eng, inst, a), reg_readers(eng, inst, b), reg_readers(eng, inst, c)
    per_a = wm.PER_REG[ta]
    ra, rb = ra[: ar.shape[1] // per_a], rb[: br.shape[1] // per_a]  # f16: the first copy
    inst.aux = None
    return WARPSYNC, warp_product(eng, inst, (a, b, c), (ra, rb, rc), dst, ((ar, ac), (br, bc), (cr, cc)),
                                  (ta, tb, tc, td), (M, N, K), ta in ("s8", "u8"))


__all__ = ["wmma", "FRAGS", "_subsel"]
