"""Warp-level instructions: shfl.sync, vote.sync, match.sync, redux.sync, activemask, bar.warp.sync.

The engine runs these only once every lane named in the member mask has arrived (see
Engine._warp_sync), so here a warp's participating lanes are all present in `sel`. Values from
other lanes are read straight from the full-lane register arrays: lane l of warp w is array
index l - laneid(l) + j.
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .ops import PLAIN, WARPSYNC, builder, get, put

FULL = 0xFFFFFFFF


def _lanes(sel):
    return np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel


def _mask_operand(eng, inst, o):
    """None for a full mask written as an immediate (the fast path), else a getter."""
    if o.kind == "imm" and (o.value & FULL) == FULL:
        return None
    return get(eng, inst, o, "u32")


def warp_sync_builder(eng, inst):
    """bar.warp.sync mask (__syncwarp): nothing to compute; the engine does the waiting."""
    inst.aux = _mask_operand(eng, inst, inst.ops[0]) if inst.ops else None
    return WARPSYNC, lambda sel: None


@builder("shfl", pipe="shuffle")
def shfl(eng, inst):
    if "sync" not in inst.mods:
        raise UnsupportedPTX(inst.opcode + " (shfl without .sync was removed after Volta)", inst.file, inst.line)
    mode = next(m for m in inst.mods if m in ("up", "down", "bfly", "idx"))
    o = inst.ops
    d = put(eng, inst, o[0], "b32")
    p = put(eng, inst, type(o[0])("reg", o[0].pred), "pred") if o[0].pred else None
    src = eng.view(o[1].name, "b32") if o[1].kind == "reg" else None
    aconst = None if src is not None else get(eng, inst, o[1], "b32")
    b, c = get(eng, inst, o[2], "u32"), get(eng, inst, o[3], "u32")
    inst.aux = _mask_operand(eng, inst, o[4])
    laneid, tid, T, N = eng.laneid, eng.lane_tid, eng.T, eng.N

    def run(sel):
        lane = laneid[sel].astype(np.int64)
        bval = np.asarray(b(sel)).astype(np.int64) & 31
        cv = np.asarray(c(sel)).astype(np.int64)
        clamp, seg = cv & 31, (cv >> 8) & 31
        maxl = (lane & seg) | (clamp & ~seg)
        minl = lane & seg
        if mode == "up":
            j = lane - bval
            ok = j >= maxl
        elif mode == "down":
            j = lane + bval
            ok = j <= maxl
        elif mode == "bfly":
            j = lane ^ bval
            ok = j <= maxl
        else:
            j = minl | (bval & ~seg)
            ok = j <= maxl
        j = np.where(ok, j, lane)
        me = _lanes(sel)
        other = me - lane + j
        # A partial last warp has no lanes past the block's end: reading one is undefined on the
        # GPU (garbage), so it is a finding, and the value read is poison (0xFFFFFFFF, a NaN).
        exists = ((tid[sel] - lane + j) < T) & (other < N)
        if not exists.all():
            _missing_lane(eng, inst, me, lane, j, exists, tid[sel])
        other = np.where(exists, other, me)
        if src is not None:
            v = src[other]
            d(sel, v if exists.all() else np.where(exists, v, v.dtype.type(FULL)))
        else:
            d(sel, aconst(sel))
        if p is not None:
            p(sel, ok & exists)
    return WARPSYNC, run


def _missing_lane(eng, inst, me, lane, j, exists, tids) -> None:
    i = int(np.argmax(~exists))
    width = eng.T - (int(tids[i]) - int(lane[i]))
    name = next(m for m in inst.mods if m in ("up", "down", "bfly", "idx"))
    intrinsic = {"bfly": "__shfl_xor_sync", "idx": "__shfl_sync"}.get(name, f"__shfl_{name}_sync")
    eng.report("shuffle-missing-lane", inst, me[~exists],
               f"{intrinsic} at {inst.file}:{inst.line}: lane {int(lane[i])} reads lane {int(j[i])} of its warp, "
               f"which does not exist (the block has {eng.T} threads, so this warp has {width} lanes); "
               "a GPU returns garbage there (here: 0xFFFFFFFF, a NaN), harmless only if that lane's result "
               "is never used: keep the source lane inside the warp or make the block a multiple of 32 threads")


def _per_warp(eng, sel, weights):
    """Per-warp OR of distinct lane bits (bincount of distinct powers of two is exact)."""
    gw = eng.gwarp[sel]
    return np.bincount(gw, weights=weights, minlength=eng.NW).astype(np.uint64)[gw], gw


@builder("vote")
def vote(eng, inst):
    mode = next(m for m in inst.mods if m in ("all", "any", "uni", "ballot"))
    o = inst.ops
    d = put(eng, inst, o[0], "b32" if mode == "ballot" else "pred")
    a = get(eng, inst, o[1], "pred")
    neg = o[1].value == "not"
    inst.aux = _mask_operand(eng, inst, o[2])
    mask = inst.aux
    lbit = eng.lbit

    def run(sel):
        pv = np.asarray(a(sel))
        if neg:
            pv = ~pv
        bit = lbit[sel].astype(np.float64)
        members = np.full(bit.shape, FULL, np.uint64) if mask is None else np.asarray(mask(sel)).astype(np.uint64)
        votes, _ = _per_warp(eng, sel, np.where(pv, bit, 0.0))
        here, _ = _per_warp(eng, sel, bit)
        votes &= members
        here &= members
        if mode == "ballot":
            d(sel, votes.astype(np.uint32))
        elif mode == "any":
            d(sel, votes != 0)
        elif mode == "all":
            d(sel, votes == here)
        else:
            d(sel, (votes == 0) | (votes == here))
    return WARPSYNC, run


@builder("match", pipe="shuffle")
def match(eng, inst):
    mode = "all" if "all" in inst.mods else "any"
    t = next(m for m in inst.mods if m in ("b32", "b64"))
    o = inst.ops
    d = put(eng, inst, o[0], "b32")
    p = put(eng, inst, type(o[0])("reg", o[0].pred), "pred") if o[0].pred else None
    a = get(eng, inst, o[1], t)
    inst.aux = _mask_operand(eng, inst, o[2])
    mask = inst.aux

    def run(sel):
        v = np.asarray(a(sel)).astype(np.uint64)
        gw = eng.gwarp[sel]
        keys = np.stack([gw.astype(np.uint64), v], axis=1)
        _, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.ravel()
        bit = eng.lbit[sel].astype(np.float64)
        same = np.bincount(inv, weights=bit).astype(np.uint64)[inv]
        members = np.full(v.shape, FULL, np.uint64) if mask is None else np.asarray(mask(sel)).astype(np.uint64)
        same &= members
        if mode == "any":
            d(sel, same.astype(np.uint32))
            return
        here = np.bincount(gw, weights=bit, minlength=eng.NW).astype(np.uint64)[gw] & members
        allsame = same == here
        d(sel, np.where(allsame, members, 0).astype(np.uint32))
        if p is not None:
            p(sel, allsame)
    return WARPSYNC, run


@builder("redux", pipe="shuffle")
def redux(eng, inst):
    op = next(m for m in inst.mods if m in ("add", "min", "max", "and", "or", "xor"))
    t = next(m for m in inst.mods if m in ("u32", "s32", "b32"))
    o = inst.ops
    d, a = put(eng, inst, o[0], t), get(eng, inst, o[1], t)
    inst.aux = _mask_operand(eng, inst, o[2])
    uf = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
    dt = np.int64 if t == "s32" else np.uint64
    init = {"add": 0, "min": np.iinfo(dt).max, "max": np.iinfo(dt).min, "and": (1 << 64) - 1 if dt == np.uint64 else -1,
            "or": 0, "xor": 0}[op]

    def run(sel):
        v = np.asarray(a(sel)).astype(dt)
        gw = eng.gwarp[sel]
        acc = np.full(eng.NW, init, dt)
        uf.at(acc, gw, v)
        d(sel, acc[gw])  # the store truncates to 32 bits, so add wraps like the hardware
    return WARPSYNC, run


@builder("activemask")
def activemask(eng, inst):
    d = put(eng, inst, inst.ops[0], "b32")

    def run(sel):
        here, _ = _per_warp(eng, sel, eng.lbit[sel].astype(np.float64))
        d(sel, here.astype(np.uint32))
    return PLAIN, run
