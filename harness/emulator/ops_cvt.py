"""Moves and conversions: mov (incl. packing {a, b} and special registers), cvt in every form
NVRTC emits, and cvta between generic and state-space addresses.

cvt follows the PTX ISA: float → integer rounds as asked (.rni/.rzi/.rmi/.rpi), saturates to the
destination's range and maps NaN to 0; integer → integer wraps unless .sat, sign-extending from a
signed source; f16/bf16 are converted through float32 (both directions exact or correctly rounded).
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .memory import LOCAL_WINDOW, SHARED_WINDOW
from .ops import NP, PLAIN, builder, bits, get, put, types_of
from .ops_float import bf16_to_f32, f32_to_bf16, round_f32

_ROUND_INT = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


@builder("mov", pipe="other")  # mostly folded away by ptxas (register renames)
def mov(eng, inst):
    t = types_of(inst)[-1]
    d, a = inst.ops[0], inst.ops[1]
    w = bits(t)
    if a.kind == "vec":  # pack {lo, ..., hi} into one wider register
        parts = [get(eng, inst, o, "b" + str(w // len(a.items))) for o in a.items]
        step = w // len(a.items)
        out = put(eng, inst, d, t if t[0] == "b" else "b" + str(w))
        wide = NP["b" + str(w)]

        def run(sel):
            r = 0
            for k, p in enumerate(parts):
                r = r | (np.asarray(p(sel)).astype(wide) << wide(k * step))
            out(sel, r)
        return PLAIN, run
    if d.kind == "vec":  # unpack one register into {lo, ..., hi}
        step = w // len(d.items)
        src = get(eng, inst, a, "b" + str(w))
        outs = [put(eng, inst, o, "b" + str(step)) for o in d.items]
        wide, mask = NP["b" + str(w)], (1 << step) - 1

        def run(sel):
            v = np.asarray(src(sel))
            for k, o in enumerate(outs):
                o(sel, (v >> wide(k * step)) & wide(mask))
        return PLAIN, run
    dst, src = put(eng, inst, d, t), get(eng, inst, a, t)

    def run(sel):
        dst(sel, src(sel))
    return PLAIN, run


def _int_range(t):
    info = np.iinfo(NP[t])
    return info.min, info.max


def converter(inst, dt: str, st: str):
    """fn(values of type st) -> values of type dt, following cvt's rules for inst's modifiers."""
    mods = inst.mods
    sat = "sat" in mods
    rnd = next((m for m in mods if m in _ROUND_INT or m in ("rn", "rz", "rm", "rp")), None)
    dfloat, sfloat = dt[0] == "f" or dt.startswith("bf"), st[0] == "f" or st.startswith("bf")
    read = bf16_to_f32 if st == "bf16" else (lambda v: v)

    def to_float(x):
        x = np.asarray(x)
        if dt == "bf16":
            return f32_to_bf16(round_f32(np.asarray(x, np.float64), rnd if rnd in ("rz", "rm", "rp") else "rn"))
        if dt in ("f32", "f16") and rnd in ("rz", "rm", "rp") and np.dtype(NP[dt]).itemsize < x.dtype.itemsize + (
                x.dtype.kind in "iu"):
            r = round_f32(x.astype(np.float64), rnd, NP[dt])
        else:
            r = x.astype(NP[dt])
        if sat:
            r = np.clip(np.nan_to_num(r, nan=0.0), 0, 1).astype(NP[dt])
        return r

    if dfloat and sfloat:
        if rnd in _ROUND_INT:  # round to an integral value, staying in floating point
            f = _ROUND_INT[rnd]
            return lambda v: to_float(f(np.asarray(read(v), np.float64)))
        return lambda v: to_float(read(v))
    if dfloat:
        return lambda v: to_float(v)
    lo, hi = _int_range(dt)
    if sfloat:
        f = _ROUND_INT.get(rnd, np.trunc)

        def f2i(v):
            x = f(np.asarray(read(v), np.float64))
            x = np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo)
            x = np.clip(x, lo, hi)
            if dt == "u64":  # float64 cannot hold 2^64-1 exactly: clip first, then convert safely
                return np.where(x >= 2.0 ** 64, np.uint64(hi), x.astype(np.uint64))
            if dt == "s64":
                return np.where(x >= 2.0 ** 63, np.int64(hi), x.astype(np.int64))
            return x.astype(NP[dt])
        return f2i
    if sat:
        slo, shi = _int_range(st)
        if slo >= lo and shi <= hi:
            return lambda v: np.asarray(v).astype(NP[dt])

        def clamp(v):
            x = np.asarray(v)
            if x.dtype == np.uint64:
                return np.minimum(x, np.uint64(hi)).astype(NP[dt])
            x = x.astype(np.int64)
            return np.clip(x, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1)).astype(NP[dt])
        return clamp
    return lambda v: np.asarray(v).astype(NP[dt])


@builder("cvt", pipe="int")
def cvt(eng, inst):
    if "tf32" in inst.mods:  # a tensor-core input type (ops_mma)
        from .ops_mma import cvt_tf32
        return cvt_tf32(eng, inst)
    ts = types_of(inst)
    if len(ts) < 2:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    dt, st = ts[-2], ts[-1]
    if dt in ("f16x2", "bf16x2"):  # cvt.rn.f16x2.f32 d, a, b: a goes to the upper half
        bf = dt == "bf16x2"
        d = put(eng, inst, inst.ops[0], "b32")
        a, b = get(eng, inst, inst.ops[1], st), get(eng, inst, inst.ops[2], st)

        def run(sel):
            hi, lo = np.asarray(a(sel), np.float32), np.asarray(b(sel), np.float32)
            if bf:
                r = f32_to_bf16(lo).astype(np.uint32) | (f32_to_bf16(hi).astype(np.uint32) << np.uint32(16))
            else:
                r = (lo.astype(np.float16).view(np.uint16).astype(np.uint32)
                     | (hi.astype(np.float16).view(np.uint16).astype(np.uint32) << np.uint32(16)))
            d(sel, r)
        return PLAIN, run
    if dt in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2") or st in ("f16x2", "bf16x2"):
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    f = converter(inst, dt, st)
    d = put(eng, inst, inst.ops[0], "b16" if dt == "bf16" else dt)
    a = get(eng, inst, inst.ops[1], "b16" if st == "bf16" else st)
    o = inst.ops[1]
    if o.kind == "reg" and o.name in eng.regs and eng.regs[o.name].dtype.itemsize * 8 > bits(st):
        # cvt.s32.s16 %r1, %r2 reads only the low 16 bits of the 32-bit register
        r, narrow = eng.regs[o.name], NP["bf16" if st == "bf16" else st]
        nu = np.dtype(narrow).itemsize * 8

        def a(sel):
            return r[sel].astype(NP["u" + str(nu)]).view(narrow)

    def run(sel):
        d(sel, f(a(sel)))
    return PLAIN, run


@builder("cvta", pipe="other")  # address-space casts: folded away
def cvta(eng, inst):
    t = types_of(inst)[-1]
    to = "to" in inst.mods
    space = next(m for m in inst.mods if m in ("shared", "local", "global", "const", "param"))
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    d, a = put(eng, inst, inst.ops[0], t), get(eng, inst, inst.ops[1], t)
    if base == 0:
        def run(sel):
            d(sel, a(sel))
        return PLAIN, run
    delta = NP[t]((-base if to else base) % (1 << bits(t)))

    def run(sel):
        d(sel, a(sel) + delta)
    return PLAIN, run


@builder("isspacep")
def isspacep(eng, inst):
    space = inst.mods[0]
    d, a = put(eng, inst, inst.ops[0], "pred"), get(eng, inst, inst.ops[1], "u64")
    lo = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space)

    def run(sel):
        x = np.asarray(a(sel), np.uint64)
        if lo is None:  # global: neither shared nor local
            r = ((x - np.uint64(SHARED_WINDOW)) >= np.uint64(1 << 32)) & ((x - np.uint64(LOCAL_WINDOW)) >= np.uint64(1 << 32))
        else:
            r = (x - np.uint64(lo)) < np.uint64(1 << 32)
        d(sel, r)
    return PLAIN, run
