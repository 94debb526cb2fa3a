"""Warp-wide matrix helpers for the tensor-core instructions (ops_mma, ops_wmma).

A tensor-core instruction reads a register from every lane of a warp and writes one back to
every lane, so its run(sel) works on whole warps: the engine has already waited for all of a
warp's lanes (the instructions are WARPSYNC with a full mask). `Warps` turns the lanes of `sel`
into a (warps, 32) table of lane indices; lanes past the end of a partial last warp are absent,
read as 0 and never written.

Fragment maps give, for each of a lane's elements, the (row, col) it holds in the warp's matrix:
arrays of shape (32, elements), elements ordered by register and, inside a 32-bit register, from
the low bits up (the packing of f16x2 and of four int8 values), as the PTX ISA's "Matrix
Fragments" sections define them.
"""
from __future__ import annotations

import numpy as np

LANE = np.arange(32)
G, T4 = LANE // 4, LANE % 4  # groupID and threadID_in_group of the PTX ISA


def fmap(rows, cols) -> tuple[np.ndarray, np.ndarray]:
    """Stack per-element (row, col) arrays (each over the 32 lanes) into (32, elements) maps."""
    return np.stack(rows, axis=1), np.stack(cols, axis=1)


class Warps:
    """The warps whose lanes are `sel`, as a table of lane indices."""

    def __init__(self, eng, sel):
        lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)
        lid = eng.laneid[lanes].astype(np.int64)
        base = lanes - lid
        self.bases, self.row = np.unique(base, return_inverse=True)
        self.lanes, self.lid = lanes, lid
        table = self.bases[:, None] + LANE
        tid0 = eng.lane_tid[self.bases][:, None]
        self.exists = (tid0 + LANE) < eng.T
        self.table = np.where(self.exists, table, self.bases[:, None])
        self.n = self.bases.size

    def gather(self, view) -> np.ndarray:
        """A register over the warps: (warps, 32), absent lanes 0."""
        v = view[self.table]
        return np.where(self.exists, v, v.dtype.type(0))

    def scatter(self, view, values: np.ndarray) -> None:
        """Write (warps, 32) values to the lanes of sel."""
        view[self.lanes] = values[self.row, self.lid]


def assemble(vals: np.ndarray, rmap, cmap, shape, dtype) -> np.ndarray:
    """Per-lane elements (warps, 32, e) -> matrices (warps, rows, cols) through a fragment map."""
    out = np.zeros((vals.shape[0],) + shape, dtype)
    out[:, rmap, cmap] = vals
    return out


def scatter_elems(mat: np.ndarray, rmap, cmap) -> np.ndarray:
    """Matrices (warps, rows, cols) -> per-lane elements (warps, 32, e)."""
    return mat[:, rmap, cmap]


# ---- element decoding: 32-bit registers <-> elements ------------------------------------------
PER_REG = {"f16": 2, "bf16": 2, "tf32": 1, "f32": 1, "s8": 4, "u8": 4, "s32": 1, "f64": 1}


def unpack(regs: list[np.ndarray], t: str) -> np.ndarray:
    """(warps, 32) raw registers, one array per register -> (warps, 32, elements) as float64 or
    int64 values (exact: every element type fits)."""
    r = np.stack(regs, axis=-1)
    if t == "f64":
        return r.view(np.float64) if r.dtype == np.uint64 else r.astype(np.float64)
    r = r.astype(np.uint32)
    if t == "f16":
        return r.view(np.float16).reshape(r.shape[:-1] + (-1,)).astype(np.float64)
    if t == "bf16":
        h = r.view(np.uint16).reshape(r.shape[:-1] + (-1,)).astype(np.uint32) << 16
        return h.view(np.float32).astype(np.float64)
    if t == "tf32":  # the tensor core reads the top 19 bits; the low 13 mantissa bits are ignored
        return (r & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if t == "f32":
        return r.view(np.float32).astype(np.float64)
    if t in ("s8", "u8"):
        return r.view(np.int8 if t == "s8" else np.uint8).reshape(r.shape[:-1] + (-1,)).astype(np.int64)
    if t == "s32":
        return r.view(np.int32).astype(np.int64)
    raise KeyError(t)


def pack(vals: np.ndarray, t: str, satfinite: bool = False) -> list[np.ndarray]:
    """(warps, 32, elements) float64/int64 -> one raw (warps, 32) array per register."""
    if t == "f32":
        v = vals.astype(np.float32)
        if satfinite:
            big = np.finfo(np.float32).max
            v = np.where(np.isnan(v), v, np.clip(v, -big, big)).astype(np.float32)
        raw = v.view(np.uint32)
    elif t == "f16":
        v = vals.astype(np.float16)
        if satfinite:
            big = np.finfo(np.float16).max
            v = np.where(np.isnan(v), v, np.clip(v, -big, big)).astype(np.float16)
        raw = np.ascontiguousarray(v).view(np.uint32)
    elif t == "s32":
        v = np.clip(vals, -2**31, 2**31 - 1) if satfinite else vals
        raw = (v & 0xFFFFFFFF).astype(np.uint32)
    elif t == "f64":
        raw = vals.astype(np.float64).view(np.uint64)
    else:
        raise KeyError(t)
    return [raw[..., k] for k in range(raw.shape[-1])]


def product(a: np.ndarray, b: np.ndarray, c: np.ndarray, integer: bool) -> np.ndarray:
    """D = A·B + C per warp. Floats: float64 (the products of f16/bf16/tf32 values are exact in
    it), rounded once by pack(); a tensor core's own rounding differs by a few ulps at most."""
    if integer:
        return np.einsum("wik,wkj->wij", a, b) + c
    return np.matmul(a, b) + c


def written_registers(eng) -> dict:
    """Register -> pcs of the instructions of the launch that write it (PTX puts destinations
    first; calls name theirs in the return list), computed once per launch."""
    done = getattr(eng, "written_regs", None)
    if done is None:
        done = {}
        for inst in eng.code_used:
            names = list(inst.aux[0]) if inst.op == "call" and inst.aux else []
            if inst.ops:  # stores name an address first ([p]), never a register
                first = inst.ops[0]
                for o in (first.items if first.kind == "vec" else (first,)):
                    if o.kind == "reg":
                        names += [o.name] + ([o.pred] if o.pred else [])
            for n in names:
                done.setdefault(n, set()).add(inst.pc)
        eng.written_regs = done
    return done


def _accumulates(inst, name: str) -> bool:
    """True when inst is an mma that reads `name` too (d = a*b + d): such a writer never gives the
    register its first value. A register every writer of which accumulates into it was never
    initialised, however many mmas (one per unrolled k step) there are."""
    if inst.op not in ("mma", "wmma") or (inst.op == "wmma" and inst.mods[:1] != ("mma",)):
        return False
    return any(o.kind == "reg" and o.name == name for op in inst.ops[1:]
               for o in (op.items if op.kind == "vec" else (op,)))


def fragment_check(eng, inst, operands):
    """A callable sel -> None reporting `uninitialized-fragment` when an operand register of this
    mma never receives a first value: no instruction writes it, or only mmas accumulating into it
    (a C fragment nobody zeroed: NVRTC passes the never-assigned registers straight in, or, with
    "+f" asm operands, only the mmas write them). They read 0 here, garbage on a GPU. None when
    every operand has a writer that gives it a value."""
    names = [(role, o.name) for role, op in operands for o in (op.items if op.kind == "vec" else (op,))
             if o.kind == "reg" and o.name in eng.regs]
    written = written_registers(eng)
    missing = [(role, n) for role, n in names if all(_accumulates(eng.code[w], n) for w in written.get(n, ()))]
    if not missing:
        return None
    what = " and ".join(sorted({role for role, _ in missing}))
    regs = ", ".join(dict.fromkeys(n.split("::")[-1] for _, n in missing[:4]))
    msg = (f"{inst.opcode.split('.')[0]} at {inst.file}:{inst.line} reads its {what} fragment from registers "
           f"no instruction wrote before ({regs}{', ...' if len(missing) > 4 else ''}): initialise it first "
           "(wmma::fill_fragment(acc, 0.0f), or float acc[4] = {} before the loop)")

    def check(sel):
        lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel
        eng.report("uninitialized-fragment", inst, lanes, msg)
    return check
