"""Integer instructions: add/sub/mul/mad/div/rem/min/max/abs/neg, logic, shifts, setp/set/selp/slct.
The bit tricks (bfe, bfi, prmt, lop3, brev, popc, clz, bfind, shf) are in ops_bits.

numpy differs from PTX in a few places, each handled here: integer division floors (PTX truncates
toward zero), a % b takes the divisor's sign (PTX: the dividend's), and `!=` on floats is true for
NaN (setp.ne is an ordered comparison, false for NaN). Float arithmetic lives in ops_float.
"""
from __future__ import annotations

import numpy as np

from . import ops_float
from .ops import NP, PLAIN, bits, builder, get, into, put, typ
from .findings import UnsupportedPTX


def _unary(eng, inst, t, fn):
    d, a = put(eng, inst, inst.ops[0], t), get(eng, inst, inst.ops[1], t)
    fast = into(eng, inst, inst.ops[0], t, fn, (a,))
    if fast is not None:
        return PLAIN, fast

    def run(sel):
        d(sel, fn(a(sel)))
    return PLAIN, run


def _binary(eng, inst, t, fn, ta=None, tb=None):
    d = put(eng, inst, inst.ops[0], t)
    a, b = get(eng, inst, inst.ops[1], ta or t), get(eng, inst, inst.ops[2], tb or t)
    fast = into(eng, inst, inst.ops[0], t, fn, (a, b))
    if fast is not None:
        return PLAIN, fast

    def run(sel):
        d(sel, fn(a(sel), b(sel)))
    return PLAIN, run


def _mulhi(a, b, t):
    """High half of the full product. 64-bit: schoolbook on 32-bit halves (numpy has no int128)."""
    w = bits(t)
    if w <= 32:
        wide = np.int64 if t[0] == "s" else np.uint64
        return (np.asarray(a).astype(wide) * np.asarray(b).astype(wide)) >> wide(w)
    ua, ub = np.asarray(a).astype(np.uint64), np.asarray(b).astype(np.uint64)
    m32, s32 = np.uint64(0xFFFFFFFF), np.uint64(32)
    a0, a1, b0, b1 = ua & m32, ua >> s32, ub & m32, ub >> s32
    lo = a0 * b0
    mid1 = a1 * b0 + (lo >> s32)
    mid2 = a0 * b1 + (mid1 & m32)
    hi = a1 * b1 + (mid1 >> s32) + (mid2 >> s32)
    if t[0] == "s":  # signed correction: subtract b if a < 0 and a if b < 0 (mod 2^64)
        hi = hi - np.where(np.asarray(a) < 0, ub, np.uint64(0)) - np.where(np.asarray(b) < 0, ua, np.uint64(0))
    return hi


def _sat32(x):
    return np.clip(x, -(1 << 31), (1 << 31) - 1)


def _int_arith(eng, inst, t):
    op, mods, w = inst.op, inst.mods, bits(t)
    if op in ("add", "sub"):
        if "cc" in mods:
            raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
        f = np.add if op == "add" else np.subtract
        if "sat" in mods:
            return _binary(eng, inst, t, lambda a, b: _sat32(f(np.asarray(a, np.int64), b)).astype(np.int32))
        return _binary(eng, inst, t, f)
    if op in ("mul", "mad"):
        wide = "wide" in mods
        dt = (t[0] if t[0] != "b" else "u") + str(2 * w) if wide else t
        ops = inst.ops
        d = put(eng, inst, ops[0], dt)
        a, b = get(eng, inst, ops[1], t), get(eng, inst, ops[2], t)
        c = get(eng, inst, ops[3], dt) if op == "mad" else None
        if wide:
            nt = NP[dt]

            def f(x, y):
                return np.asarray(x).astype(nt) * nt(y) if np.ndim(y) == 0 else np.asarray(x).astype(nt) * y.astype(nt)
        elif "hi" in mods:
            def f(x, y):
                return _mulhi(x, y, t)
        else:
            f = np.multiply
        if c is None:
            def run(sel):
                d(sel, f(a(sel), b(sel)))
        elif "sat" in mods:
            def run(sel):
                d(sel, _sat32(np.asarray(f(a(sel), b(sel)), np.int64) + c(sel)).astype(np.int32))
        else:
            def run(sel):
                d(sel, f(a(sel), b(sel)) + c(sel))
        return PLAIN, run
    if op in ("div", "rem"):
        signed = t[0] == "s"

        def f(a, b):
            a, b = np.asarray(a), np.asarray(b)
            zero = b == 0
            bb = np.where(zero, 1, b).astype(b.dtype)
            r = np.fmod(a, bb)  # C remainder: the sign of the dividend
            if op == "rem":
                return np.where(zero, a, r)
            q = (a - r) // bb
            return np.where(zero, np.array(-1 if signed else (1 << w) - 1).astype(q.dtype), q)
        return _binary(eng, inst, t, f)
    if op in ("min", "max"):
        return _binary(eng, inst, t, np.minimum if op == "min" else np.maximum)
    if op == "abs":
        return _unary(eng, inst, t, np.abs)
    if op == "neg":
        return _unary(eng, inst, t, np.negative)
    if op == "sad":
        d = put(eng, inst, inst.ops[0], t)
        a, b, c = (get(eng, inst, o, t) for o in inst.ops[1:4])

        def run(sel):
            x, y = a(sel), b(sel)
            d(sel, np.where(x > y, x - y, y - x) + c(sel))
        return PLAIN, run
    raise UnsupportedPTX(inst.opcode, inst.file, inst.line)


@builder("div", pipe="sfu")
@builder("add", "sub", "mul", "mad", "rem", "min", "max", "abs", "neg", "fma", "sad")
def arith(eng, inst):
    t = typ(inst)
    if t[0] == "f" or t.startswith("bf"):
        return ops_float.arith(eng, inst, t)
    return _int_arith(eng, inst, t)


@builder("and", "or", "xor")
def logic(eng, inst):
    t = typ(inst)
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[inst.op]
    return _binary(eng, inst, t, f)


@builder("not")
def not_(eng, inst):
    t = typ(inst)
    return _unary(eng, inst, t, np.logical_not if t == "pred" else np.invert)


@builder("cnot")
def cnot(eng, inst):
    t = typ(inst)
    return _unary(eng, inst, t, lambda a: (np.asarray(a) == 0).astype(NP[t]))


@builder("shl", "shr")
def shift(eng, inst):
    t = typ(inst)
    if inst.op == "shr" and t[0] == "s":
        rt = t
    else:
        rt = "u" + str(bits(t))
    f = np.left_shift if inst.op == "shl" else np.right_shift
    d = put(eng, inst, inst.ops[0], rt)
    a, b = get(eng, inst, inst.ops[1], rt), get(eng, inst, inst.ops[2], "u32")
    if inst.ops[2].kind == "imm":
        s = NP[rt](min(inst.ops[2].value, bits(t)))
        fast = into(eng, inst, inst.ops[0], rt, f, (a, lambda sel: s))
        if fast is not None:
            return PLAIN, fast

        def run(sel):
            d(sel, f(a(sel), s))
    else:
        def run(sel):
            d(sel, f(a(sel), np.minimum(b(sel), np.uint32(bits(t))).astype(NP[rt])))
    return PLAIN, run


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def compare(cmp: str, t: str):
    """fn(a, b) -> bool array implementing PTX's comparison (NaN-aware for floats)."""
    if t[0] != "f" and not t.startswith("bf"):
        return _CMP[cmp]
    if cmp == "num":
        return lambda a, b: (a == a) & (b == b)
    if cmp == "nan":
        return lambda a, b: (a != a) | (b != b)
    if cmp.endswith("u") and cmp[:-1] in _CMP:
        f = _CMP[cmp[:-1]]
        if cmp == "neu":
            return np.not_equal  # numpy's != is already the unordered one
        return lambda a, b: f(a, b) | (a != a) | (b != b)
    if cmp == "ne":
        return lambda a, b: (a != b) & (a == a) & (b == b)
    return _CMP[cmp]


@builder("setp", "set")
def setp(eng, inst):
    cmp = inst.mods[0]
    t = [m for m in inst.mods if m in NP][-1]
    boolop = next((m for m in inst.mods if m in ("and", "or", "xor")), None)
    f = compare(cmp, t)
    conv = ops_float.reader(t)
    o = inst.ops
    a, b = get(eng, inst, o[1], t), get(eng, inst, o[2], t)
    c = get(eng, inst, o[3], "pred") if boolop else None
    cneg = bool(boolop) and o[3].value == "not"
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)
    if inst.op == "set":
        dt = [m for m in inst.mods if m in NP][0]
        d = put(eng, inst, o[0], dt)
        one = np.float32(1.0) if dt == "f32" else NP[dt](-1 if dt[0] == "s" else (1 << bits(dt)) - 1)

        def run(sel):
            r = f(conv(a(sel)), conv(b(sel)))
            if comb:
                r = comb(r, c(sel))
            d(sel, np.where(r, one, NP[dt](0)))
        return PLAIN, run
    d = put(eng, inst, o[0], "pred")
    q = put(eng, inst, type(o[0])("reg", o[0].pred), "pred") if o[0].pred else None
    if not comb and q is None and t != "bf16":
        fast = into(eng, inst, o[0], "pred", f, (a, b))
        if fast is not None:
            return PLAIN, fast

    def run(sel):
        r = f(conv(a(sel)), conv(b(sel)))
        if comb:
            cc = c(sel)
            r = comb(r, ~cc if cneg else cc)
        d(sel, r)
        if q is not None:
            q(sel, ~np.asarray(r))
    return PLAIN, run


@builder("selp")
def selp(eng, inst):
    t = typ(inst)
    d = put(eng, inst, inst.ops[0], t)
    a, b = get(eng, inst, inst.ops[1], t), get(eng, inst, inst.ops[2], t)
    c = get(eng, inst, inst.ops[3], "pred")

    def run(sel):
        d(sel, np.where(c(sel), a(sel), b(sel)))
    return PLAIN, run


@builder("slct")
def slct(eng, inst):
    t, ct = [m for m in inst.mods if m in NP][:2]
    d = put(eng, inst, inst.ops[0], t)
    a, b, c = get(eng, inst, inst.ops[1], t), get(eng, inst, inst.ops[2], t), get(eng, inst, inst.ops[3], ct)

    def run(sel):
        d(sel, np.where(c(sel) >= 0, a(sel), b(sel)))
    return PLAIN, run
