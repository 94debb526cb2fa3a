"""fp8 (sm_89/sm_90): conversions to and from e4m3 / e5m2, and mma.sync m16n8k32 on fp8 inputs.

Conversions (the packed x2 forms PTX has; cuda_fp8.h's __nv_cvt_* compile to them):
  cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32   d16, a, b   a -> d's high byte, b -> low byte
  cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d16, a32    a's high half -> d's high byte
  cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}           d32, a16    exact: every fp8 value is an f16
Rounding is to nearest, ties to the even code. e4m3 (the "fn" variant) has no infinity and one NaN
code per sign (S.1111.111), largest 448; e5m2 is IEEE-like, largest 57344. `.satfinite` turns a
value past the largest (infinity too) into the largest of its sign and keeps NaN a NaN (0x7F);
without it an e5m2 overflow is infinity and an e4m3 one NaN. `.relu` makes negatives +0.

`mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32` uses the 8-bit fragment
layout of the integer m16n8k32 (four fp8 per register); products are exact and summed in float64,
rounded once to f32 (a tensor core's own order can differ in the last bits for inputs whose partial
sums are not exact in f32).
"""
from __future__ import annotations

import numpy as np

from . import ops as _ops
from . import ops_cvt, ops_mma  # noqa: F401  (the builders this module routes from)
from . import warpmat as wm
from .findings import UnsupportedPTX
from .ops import PLAIN, WARPSYNC, builder, get, put

FP8 = ("e4m3", "e5m2")


def _table(kind: str) -> np.ndarray:
    """The float64 value of each of the 256 codes (NaN where the code is a NaN)."""
    code = np.arange(256)
    sign = np.where(code & 0x80, -1.0, 1.0)
    if kind == "e4m3":
        e, m, bias, mb = (code >> 3) & 0xF, code & 7, 7, 3
    else:
        e, m, bias, mb = (code >> 2) & 0x1F, code & 3, 15, 2
    mag = np.where(e == 0, m / (1 << mb) * 2.0 ** (1 - bias), (1 + m / (1 << mb)) * 2.0 ** (e - bias))
    v = sign * mag
    if kind == "e4m3":
        v[(code & 0x7F) == 0x7F] = np.nan
    else:
        v[((code >> 2) & 0x1F) == 0x1F] = np.nan
        v[(code & 0x7F) == 0x7C] = np.inf * sign[(code & 0x7F) == 0x7C]
    return v


VALUES = {k: _table(k) for k in FP8}
_FINITE = {k: VALUES[k][: (0x7F if k == "e4m3" else 0x7C)] for k in FP8}  # positive codes, ascending


def encode(x, kind: str, satfinite: bool, relu: bool = False) -> np.ndarray:
    """float values (any float dtype) -> fp8 codes (uint8), round to nearest even."""
    x = np.asarray(x, np.float64)
    pos = _FINITE[kind]
    top = pos.size - 1  # code of the largest finite
    a = np.abs(x)
    lo = np.clip(np.searchsorted(pos, a, side="right") - 1, 0, top)
    hi = np.minimum(lo + 1, top)
    dlo, dhi = a - pos[lo], pos[hi] - a
    up = (dhi < dlo) | ((dhi == dlo) & (lo % 2 == 1))
    code = np.where(up & (hi != lo), hi, lo).astype(np.int64)
    # past the largest finite: rounds to "infinity" from max + half an ulp of the next binade
    half = (pos[top] - pos[top - 1]) / 2
    over = a >= pos[top] + half if kind == "e5m2" else a > pos[top] + half
    over |= np.isinf(a)
    if satfinite:
        code = np.where(over, top, code)
    else:
        code = np.where(over, 0x7C if kind == "e5m2" else 0x7F, code)
    code = code | np.where(np.signbit(x), 0x80, 0)
    code = np.where(np.isnan(x), 0x7F, code)
    if relu:
        code = np.where(np.signbit(x) & ~np.isnan(x), 0, code)
    return code.astype(np.uint8)


def decode_f16(codes, kind: str) -> np.ndarray:
    """fp8 codes -> float16 (exact); NaN is the canonical f16 NaN 0x7FFF."""
    v = VALUES[kind][np.asarray(codes, np.int64)].astype(np.float16)
    bitsv = v.view(np.uint16)
    return np.where(np.isnan(v), np.uint16(0x7FFF), bitsv).astype(np.uint16)


def cvt_fp8(eng, inst):
    mods = inst.mods
    relu = "relu" in mods
    sat = "satfinite" in mods
    dst_kind = next((m[:4] for m in mods if m in ("e4m3x2", "e5m2x2")), None)
    if dst_kind is not None and mods.index(dst_kind + "x2") == len(mods) - 2:  # to fp8
        src = mods[-1]
        d = put(eng, inst, inst.ops[0], "b16")
        if src == "f32" and len(inst.ops) == 3:
            a, b = get(eng, inst, inst.ops[1], "f32"), get(eng, inst, inst.ops[2], "f32")

            def run(sel):
                hi = encode(a(sel), dst_kind, sat, relu).astype(np.uint16)
                lo = encode(b(sel), dst_kind, sat, relu).astype(np.uint16)
                d(sel, (hi << 8) | lo)
            return PLAIN, run
        if src == "f16x2":
            a = get(eng, inst, inst.ops[1], "b32")

            def run(sel):
                r = np.asarray(a(sel)).astype(np.uint32)
                h = lambda w: (w & 0xFFFF).astype(np.uint16).view(np.float16)
                hi = encode(h(r >> 16), dst_kind, sat, relu).astype(np.uint16)
                lo = encode(h(r), dst_kind, sat, relu).astype(np.uint16)
                d(sel, np.asarray((hi << 8) | lo, np.uint16))
            return PLAIN, run
    src_kind = next((m[:4] for m in mods if m in ("e4m3x2", "e5m2x2")), None)
    if src_kind is not None and mods[-1] == src_kind + "x2" and "f16x2" in mods:
        d, a = put(eng, inst, inst.ops[0], "b32"), get(eng, inst, inst.ops[1], "b16")

        def run(sel):
            r = np.asarray(a(sel)).astype(np.uint32)
            hi, lo = decode_f16(r >> 8 & 0xFF, src_kind), decode_f16(r & 0xFF, src_kind)
            if relu:
                neg = lambda h: (h & 0x8000) != 0
                hi, lo = np.where(neg(hi) & (hi != 0x7FFF) | (hi == 0x8000), 0, hi), \
                    np.where(neg(lo) & (lo != 0x7FFF) | (lo == 0x8000), 0, lo)
            d(sel, (hi.astype(np.uint32) << 16) | lo.astype(np.uint32))
        return PLAIN, run
    raise UnsupportedPTX(inst.opcode + " (this fp8 conversion)", inst.file, inst.line)


def unpack_fp8(regs: list[np.ndarray], kind: str) -> np.ndarray:
    r = np.stack(regs, axis=-1).astype(np.uint32)
    codes = r.view(np.uint8).reshape(r.shape[:-1] + (-1,))
    return VALUES[kind][codes.astype(np.int64)]


def mma_fp8(eng, inst):
    from .ops_mma import SHAPES, gather_regs, reg_readers, reg_writers, scatter_regs

    types = [m for m in inst.mods if m in FP8 + ("f32", "f16")]
    if "m16n8k32" not in inst.mods or len(types) != 4 or types[0] != types[3] or types[0] != "f32":
        raise UnsupportedPTX(inst.opcode + " (fp8 mma: only m16n8k32 .f32 accumulators)", inst.file, inst.line)
    td, ta, tb, tc = types
    (ar, ac), (br, bc), (cr, cc), M, N, K = SHAPES[("m16n8k32", "i8")]
    d, a, b, c = inst.ops[:4]
    dst = reg_writers(eng, inst, d)
    ra, rb, rc = reg_readers(eng, inst, a), reg_readers(eng, inst, b), reg_readers(eng, inst, c)
    if len(ra) != 4 or len(rb) != 2 or len(rc) != 4:
        raise UnsupportedPTX(inst.opcode + " (fragment register count)", inst.file, inst.line)
    check = wm.fragment_check(eng, inst, (("A", a), ("B", b), ("C", c)))
    inst.aux = None

    def run(sel):
        if check is not None:
            check(sel)
        w = wm.Warps(eng, sel)
        A = wm.assemble(unpack_fp8(gather_regs(w, ra), ta), ar, ac, (M, K), np.float64)
        B = wm.assemble(unpack_fp8(gather_regs(w, rb), tb), br, bc, (K, N), np.float64)
        C = wm.assemble(wm.unpack(gather_regs(w, rc), tc), cr, cc, (M, N), np.float64)
        scatter_regs(w, dst, wm.pack(wm.scatter_elems(wm.product(A, B, C, False), cr, cc), td))
    return WARPSYNC, run


def _wrap(op: str, applies, special):
    """Route the fp8 forms of an opcode another family owns to `special`, the rest unchanged."""
    base = _ops.BUILDERS[op]

    @builder(op, pipe=_ops.PIPES.get(op, "arith"))  # the family's pipe (the instruction registry) stays
    def routed(eng, inst):
        return special(eng, inst) if applies(inst) else base(eng, inst)
    return routed


_wrap("cvt", lambda i: any(m.startswith(("e4m3", "e5m2")) for m in i.mods), cvt_fp8)
_wrap("mma", lambda i: any(m in FP8 for m in i.mods), mma_fp8)

#: mantissa bits an fp8 wgmma keeps of its products and of its sum (fp8_sum)
FP8_SUM_BITS = 13


def _cut(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """x cut toward zero to a multiple of q."""
    return np.trunc(x / q) * q


def _exponent(x: np.ndarray) -> np.ndarray:
    """floor(log2 |x|), 0 where x is 0."""
    return np.frexp(np.where(x == 0, 1.0, x))[1] - 1.0


def fp8_sum(A: np.ndarray, B: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """D = A·B + acc as an fp8 wgmma with f32 accumulators does it on the H200 (ops_wgmma's docstring):
    A (16, K), B (K, N), acc (16, N), all exact float64 values."""
    p = A[:, :, None] * B[None, :, :]  # (16, K, N): every product is exact in float64
    top = np.maximum(np.abs(acc), np.maximum(p.max(axis=1), -p.min(axis=1)))
    e = (_exponent(top) - FP8_SUM_BITS).astype(np.int64)  # the products are cut to multiples of 2^e
    p *= np.ldexp(1.0, -e)[:, None, :]  # in place: a wgmma of fp8-gemm's emulation is ~0.2 ms, not 0.6
    np.trunc(p, out=p)
    total = acc + np.ldexp(p.sum(axis=1), e)
    return _cut(total, np.ldexp(1.0, (_exponent(total) - FP8_SUM_BITS).astype(np.int64)))


__all__ = ["VALUES", "cvt_fp8", "decode_f16", "encode", "fp8_sum", "mma_fp8"]
