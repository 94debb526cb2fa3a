"""Bit-manipulation instructions: bfe, bfi, prmt, lop3, brev, popc, clz, bfind and the funnel
shift shf, each following the PTX ISA's definition (fields clamp or wrap exactly as it says).
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .ops import PLAIN, UINT, bits, builder, get, put, typ


def _u(t):
    return UINT[bits(t)]


@builder("shf")
def shf(eng, inst):
    """Funnel shift of the 64-bit pair b:a (b high) by c (clamped or wrapped)."""
    left, clamp = "l" in inst.mods, "clamp" in inst.mods
    d = put(eng, inst, inst.ops[0], "u32")
    a, b, c = (get(eng, inst, o, "u32") for o in inst.ops[1:4])

    def run(sel):
        n = np.asarray(c(sel), np.uint64)
        n = np.minimum(n, np.uint64(32)) if clamp else n & np.uint64(31)
        pair = (np.asarray(b(sel), np.uint64) << np.uint64(32)) | np.asarray(a(sel), np.uint64)
        r = (pair << n) >> np.uint64(32) if left else pair >> n
        d(sel, (r & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    return PLAIN, run


@builder("popc", "clz", "brev", "bfind")
def bitcount(eng, inst):
    t = typ(inst)
    w = bits(t)
    d = put(eng, inst, inst.ops[0], "u32")
    dw = put(eng, inst, inst.ops[0], "b" + str(w))
    a = get(eng, inst, inst.ops[1], t)
    op = inst.op

    def run(sel):
        x = np.asarray(a(sel))
        if op == "popc":
            d(sel, np.bitwise_count(x.astype(_u(t))).astype(np.uint32))
            return
        u = x.astype(_u(t))
        if op == "brev":
            r = np.zeros_like(u)
            for k in range(w):
                r |= ((u >> _u(t)(k)) & _u(t)(1)) << _u(t)(w - 1 - k)
            dw(sel, r)
            return
        if op == "bfind" and t[0] == "s":  # most significant bit that differs from the sign
            u = np.where(x < 0, ~u, u)
        msb = np.full(u.shape, -1, np.int64)
        for k in range(w):
            msb = np.where((u >> _u(t)(k)) & _u(t)(1) != 0, k, msb)
        if op == "clz":
            d(sel, (w - 1 - msb).astype(np.uint32))
        elif "shiftamt" in inst.mods:
            d(sel, np.where(msb < 0, 0xFFFFFFFF, w - 1 - msb).astype(np.uint32))
        else:
            d(sel, np.where(msb < 0, 0xFFFFFFFF, msb).astype(np.uint32))
    return PLAIN, run


@builder("bfe")
def bfe(eng, inst):
    """Bit-field extract, as the PTX ISA defines it (the field is sign-extended for .s types)."""
    t = typ(inst)
    w = bits(t)
    wmask = np.uint64((1 << w) - 1)
    d = put(eng, inst, inst.ops[0], "u" + str(w))
    a = get(eng, inst, inst.ops[1], "u" + str(w))
    b, c = get(eng, inst, inst.ops[2], "u32"), get(eng, inst, inst.ops[3], "u32")
    u64 = np.uint64

    def run(sel):
        x = np.asarray(a(sel)).astype(u64)
        pos = np.asarray(b(sel)).astype(np.int64) & 0xFF
        ln = np.asarray(c(sel)).astype(np.int64) & 0xFF
        take = np.clip(np.minimum(ln, w - pos), 0, 64)
        shifted = np.where(pos >= w, u64(0), x >> np.minimum(pos, 63).astype(u64))
        mask = np.where(take >= 64, ~u64(0), (u64(1) << np.minimum(take, 63).astype(u64)) - u64(1))
        r = shifted & mask
        if t[0] == "s":
            top = np.minimum(pos + ln - 1, w - 1).clip(0)
            sbit = np.where(ln == 0, u64(0), (x >> top.astype(u64)) & u64(1))
            r = np.where(sbit == 1, r | (~mask & wmask), r)
        d(sel, (r & wmask).astype(UINT[w]))
    return PLAIN, run


@builder("bfi")
def bfi(eng, inst):
    t = typ(inst)
    w = bits(t)
    ut = _u(t)
    d = put(eng, inst, inst.ops[0], t)
    a, b = get(eng, inst, inst.ops[1], t), get(eng, inst, inst.ops[2], t)
    c, e = get(eng, inst, inst.ops[3], "u32"), get(eng, inst, inst.ops[4], "u32")

    def run(sel):
        pos = np.minimum(np.asarray(c(sel), np.uint64) & np.uint64(0xFF), np.uint64(w))
        ln = np.minimum(np.asarray(e(sel), np.uint64) & np.uint64(0xFF), np.uint64(w) - pos)
        field = np.where(ln >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), (np.uint64(1) << ln) - np.uint64(1)) << pos
        ua, ub = np.asarray(a(sel)).astype(ut).astype(np.uint64), np.asarray(b(sel)).astype(ut).astype(np.uint64)
        d(sel, ((ub & ~field) | ((ua << pos) & field)).astype(ut))
    return PLAIN, run


@builder("prmt")
def prmt(eng, inst):
    mode = next((m for m in inst.mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), None)
    d = put(eng, inst, inst.ops[0], "u32")
    a, b, c = (get(eng, inst, o, "u32") for o in inst.ops[1:4])

    def run(sel):
        x = (np.asarray(b(sel), np.uint64) << np.uint64(32)) | np.asarray(a(sel), np.uint64)
        s = np.asarray(c(sel), np.uint64)
        out = np.zeros(np.broadcast(x, s).shape, np.uint64)
        for k in range(4):
            if mode is None:
                sel_k = (s >> np.uint64(4 * k)) & np.uint64(0xF)
                byte = (x >> ((sel_k & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
                sign = (byte >> np.uint64(7)) & np.uint64(1)
                byte = np.where((sel_k & np.uint64(8)) != 0, sign * np.uint64(0xFF), byte)
            else:
                raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
            out |= byte << np.uint64(8 * k)
        d(sel, out.astype(np.uint32))
    return PLAIN, run


@builder("lop3")
def lop3(eng, inst):
    d = put(eng, inst, inst.ops[0], "u32")
    a, b, c = (get(eng, inst, o, "u32") for o in inst.ops[1:4])
    lut = inst.ops[4].value & 0xFF

    def run(sel):
        x, y, z = np.asarray(a(sel)), np.asarray(b(sel)), np.asarray(c(sel))
        r = np.zeros(np.broadcast(x, y, z).shape, np.uint32)
        for k in range(8):  # minterm k: bits of (a, b, c) = (k>>2, k>>1, k) &1
            if lut >> k & 1:
                r |= ((x if k & 4 else ~x) & (y if k & 2 else ~y) & (z if k & 1 else ~z)).astype(np.uint32)
        d(sel, r)
    return PLAIN, run
