"""Integer dot products: dp4a (four 8-bit products) and dp2a.lo/.hi (two 16x8-bit products).

`dp4a.atype.btype d, a, b, c`: d = c + sum of a.byte[i] * b.byte[i], each byte sign-extended when
its operand's type is .s32 and zero-extended for .u32; `dp2a.{lo,hi}`: a holds two 16-bit values,
multiplied with bytes 0-1 (.lo) or 2-3 (.hi) of b. The sum wraps at 32 bits like the hardware.
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .ops import PLAIN, builder, get, put


def _parts(v, width: int, signed: bool) -> list[np.ndarray]:
    u = np.asarray(v).astype(np.int64) & 0xFFFFFFFF
    top = 1 << width
    out = []
    for k in range(32 // width):
        p = (u >> (k * width)) & (top - 1)
        out.append(np.where(p >= top // 2, p - top, p) if signed else p)
    return out


@builder("dp4a", "dp2a")
def dot(eng, inst):
    types = [m for m in inst.mods if m in ("u32", "s32")]
    if len(types) != 2:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    ta, tb = types
    td = "u32" if ta == tb == "u32" else "s32"
    hi = "hi" in inst.mods
    o = inst.ops
    d = put(eng, inst, o[0], td)
    a, b, c = get(eng, inst, o[1], "u32"), get(eng, inst, o[2], "u32"), get(eng, inst, o[3], "u32")
    four = inst.op == "dp4a"

    def run(sel):
        bs = _parts(b(sel), 8, tb == "s32")
        acc = np.asarray(c(sel)).astype(np.int64)
        if four:
            for x, y in zip(_parts(a(sel), 8, ta == "s32"), bs):
                acc = acc + x * y
        else:
            h = _parts(a(sel), 16, ta == "s32")
            acc = acc + h[0] * bs[2 if hi else 0] + h[1] * bs[3 if hi else 1]
        d(sel, (acc & 0xFFFFFFFF).astype(np.uint32).view(np.int32 if td == "s32" else np.uint32))
    return PLAIN, run
