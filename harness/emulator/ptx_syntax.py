"""PTX syntax pieces the loader uses: types, special registers, operands, variable declarations.

`parse_operand` classifies one operand once (register, immediate, float bits, symbol, address
[base+offset], vector {a, b}, sink _); `parse_var` reads a .shared/.local/.const/.global/.param
declaration with its alignment, size and initial bytes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .findings import EmulatorError

SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
            "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock",
            "%clock64", "%globaltimer", "%dynamic_smem_size", "%total_smem_size", "%gridid",
            # what cooperative groups read: reserved shared memory (block_tile_memory on sm_80+),
            # and the cluster registers, for a cluster of one block when none is declared
            "%reserved_smem_offset_begin", "%reserved_smem_offset_end", "%reserved_smem_offset_cap",
            "%reserved_smem_offset_0", "%reserved_smem_offset_1", "%aggr_smem_size", "%clusterid",
            "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%cluster_ctarank", "%cluster_nctarank",
            "%is_explicit_cluster")
TYPE_BITS = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
             "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "b64": 64, "u64": 64,
             "s64": 64, "f64": 64, "b128": 128}


@dataclass(frozen=True)
class Var:
    """A named variable in a state space: .shared, .local, .const, .global or .param."""
    name: str
    space: str
    size: int  # bytes; 0 for extern dynamic shared
    align: int
    init: bytes | None = None  # initial bytes of .const/.global


class Operand:
    """One instruction operand, classified once. kind: reg, imm, fimm, sym, addr, vec, label, sink,
    tmap ([map, {coords}]: items are the map operand, then the coordinates)."""
    __slots__ = ("kind", "name", "value", "offset", "items", "pred")

    def __init__(self, kind, name=None, value=None, offset=0, items=(), pred=None):
        self.kind, self.name, self.value, self.offset, self.items, self.pred = kind, name, value, offset, items, pred

    def __repr__(self):
        return f"Operand({self.kind}, {self.name or self.value}, +{self.offset})"


def split_top(text: str, sep: str = ",") -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def match_brace(text: str, i: int) -> int:
    """Index one past the '}' matching the '{' at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    raise EmulatorError("unbalanced braces in PTX")


def parse_var(decl: str) -> Var:
    """`.shared .align 4 .b8 name[1024]` / `.global .align 4 .u32 gcount = 7` → Var."""
    decl = decl.strip().rstrip(";")
    init = None
    if "=" in decl:
        decl, init_text = decl.split("=", 1)
        init = init_text.strip()
    words = decl.split()
    space = next(w[1:] for w in words if w[1:] in ("shared", "local", "const", "global", "param", "reg"))
    align = 0
    typ = "b8"
    for k, w in enumerate(words):
        if w == ".align":
            align = int(words[k + 1])
        elif w.startswith(".") and w[1:] in TYPE_BITS:
            typ = w[1:]
    name = words[-1]
    count = 1
    if m := re.match(r"([\w$.]+)((?:\[\d*\])*)$", name):
        name, dims = m[1], m[2]
        for d in re.findall(r"\[(\d*)\]", dims):
            count = count * int(d) if d else 0
    elem = max(1, TYPE_BITS[typ] // 8)
    data = None
    if init is not None:
        data = _init_bytes(init, typ, elem, count * elem)
    return Var(name, space, count * elem, align or elem, data)


def _init_bytes(text: str, typ: str, elem: int, size: int) -> bytes:
    import numpy as np

    vals = [v.strip() for v in text.strip().strip("{}").split(",") if v.strip()]
    out = bytearray(size)
    kind = {"f": "f", "s": "i", "u": "u", "b": "u"}[typ[0]]
    for k, v in enumerate(vals):
        if re.match(r"0[fF][0-9a-fA-F]{8}$", v) or re.match(r"0[dD][0-9a-fA-F]{16}$", v):
            raw = int(v[2:], 16).to_bytes(elem, "little")
        elif kind == "f":
            raw = np.array(float(v), f"f{elem}").tobytes()
        elif re.match(r"^-?(0[xX][0-9a-fA-F]+|\d+)U?$", v):
            raw = (int(v.rstrip("U"), 0) % (1 << (8 * elem))).to_bytes(elem, "little")
        else:  # an address of another symbol (generic(sym)): not needed by interview kernels
            raise EmulatorError(f"unsupported .global initialiser {v!r}")
        out[k * elem:(k + 1) * elem] = raw
    return bytes(out)


def parse_operand(text: str, resolve) -> Operand:
    t = text.strip()
    if t == "_":
        return Operand("sink")
    if t == "WARP_SZ":  # PTX's predefined warp-size constant (warpSize in CUDA C)
        return Operand("imm", value=32)
    if t.startswith("!"):  # a negated predicate source (setp's combining operand)
        return Operand("reg", resolve(t[1:].strip()), value="not")
    if t.startswith("["):
        inner = t[1:-1].strip()
        if "{" in inner:  # a tensor copy's [tensor-map, {coordinates}] (ops_tma.py)
            base, coords = inner.split(",", 1)
            return Operand("tmap", items=(parse_operand(base, resolve),
                                          *parse_operand(coords.strip(), resolve).items))
        m = re.match(r"^([^+\-]+?)\s*(?:([+-])\s*(-?(?:0[xX][0-9a-fA-F]+|\d+)))?$", inner)
        if not m:
            raise EmulatorError(f"cannot parse address {t}")
        base, sign, off = m[1].strip(), m[2], m[3]
        offset = int(off, 0) * (-1 if sign == "-" else 1) if off else 0
        if re.match(r"^-?(0[xX][0-9a-fA-F]+|\d+)$", base):
            return Operand("addr", None, int(base, 0), offset)
        if base.startswith("%") and base.split(".")[0] not in SPECIALS:
            return Operand("addr", resolve(base), None, offset, pred="reg")
        return Operand("addr", resolve(base), None, offset, pred="sym")
    if t.startswith("{"):
        return Operand("vec", items=tuple(parse_operand(x, resolve) for x in split_top(t[1:-1])))
    if "|" in t:
        a, b = t.split("|")
        return Operand("reg", resolve(a.strip()), pred=resolve(b.strip()))
    if re.match(r"^0[fF][0-9a-fA-F]{8}$", t):
        return Operand("fimm", value=int(t[2:], 16), offset=32)
    if re.match(r"^0[dD][0-9a-fA-F]{16}$", t):
        return Operand("fimm", value=int(t[2:], 16), offset=64)
    if re.match(r"^-?(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)U?$", t):
        return Operand("imm", value=int(t.rstrip("U"), 0))
    if re.match(r"^-?\d+\.\d*(e[-+]?\d+)?$", t):
        return Operand("fimm", value=float(t), offset=0)
    if t.split(".")[0] in SPECIALS:
        return Operand("reg", t)
    if t.startswith("%") or resolve(t) != t:
        return Operand("reg", resolve(t))
    return Operand("sym", t)


