"""Binding instructions to numpy: operand access, PTX types, and the registry of op builders.

When a launch starts, every instruction is bound once: its register operands become typed views
of full-lane register arrays and its immediates typed numpy scalars (never Python ints, which
numpy would widen). A builder in one of the ops_*.py modules turns the bound instruction into a
closure `run(sel)` that executes it for the lanes `sel` (a slice when the lanes are contiguous,
else an index array). Instructions the emulator does not know become a closure that raises
UnsupportedPTX with the learner's file:line the first time they execute, never a wrong answer.
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .ptx import SPECIALS, TYPE_BITS

# What the scheduler does after run(sel): the engine dispatches on these.
PLAIN, BRANCH, EXIT, BARRIER, WARPSYNC, CALL, RET, PARK = range(8)
# PARK: inst.aux(engine, pc, lanes) decides when the lanes go on (barrier.cluster.wait, ops_cluster)

NP = {"s8": np.int8, "u8": np.uint8, "b8": np.uint8, "s16": np.int16, "u16": np.uint16, "b16": np.uint16,
      "f16": np.float16, "bf16": np.uint16, "s32": np.int32, "u32": np.uint32, "b32": np.uint32,
      "f32": np.float32, "f16x2": np.uint32, "bf16x2": np.uint32, "s64": np.int64, "u64": np.uint64,
      "b64": np.uint64, "f64": np.float64, "pred": np.bool_}
UINT = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}

# The instruction registry: each base opcode's builder, the pipe it issues to, its family in the
# instruction mix. Filled by @builder in the ops_*.py modules (harness/emulator/instructions.py
# imports them all); the H200 model reads the pipes (pipe_of), the counters the families (family_of).
BUILDERS: dict = {}
#: base opcode → its pipe: lsu | shuffle | branch | tensor | sfu | int | other, or "arith" (fp64,
#: fp32 or int by its operand types); "sfu" is fp64 on f64 operands
PIPES: dict[str, str] = {}
#: base opcodes whose family names the state space too (ld.global and ld.shared cost differently)
BY_SPACE: set[str] = set()
_SPACES = ("global", "shared", "local", "const", "param")


def builder(*names, pipe: str = "arith", family: str = "opcode"):
    """Register a function (engine, inst) -> (kind, run) for these base opcodes, with the pipe each
    issues to and its family ("space": the opcode and its state space, as ld.global)."""
    def wrap(fn):
        for n in names:
            BUILDERS[n] = fn
            declare(n, pipe=pipe, family=family)
        return fn
    return wrap


def declare(*names, pipe: str, family: str = "opcode") -> None:
    """An opcode's pipe and family; alone, for PTX the emulator reports as unsupported (brx, wgmma)."""
    for n in names:
        PIPES[n] = pipe
        if family == "space":
            BY_SPACE.add(n)


declare("brx", pipe="branch")
declare("wgmma", pipe="tensor")
# Hopper instructions the emulator does not run: launch control, warp election, tensor-map edits
declare("griddepcontrol", "tensormap", pipe="other")
declare("elect", pipe="int")


def pipe_of(opcode: str) -> str:
    """The pipe a PTX instruction issues to (the H200 model's issue rates)."""
    parts = opcode.split(".")
    kind = PIPES.get(parts[0], "arith")
    if kind not in ("arith", "sfu"):
        return kind
    types = [p for p in parts[1:] if p[:1] in "fsub" and p[1:].isdigit() or p in ("f16x2", "bf16", "bf16x2")]
    if kind == "sfu" or "f64" in types:
        return "fp64" if "f64" in types else "sfu"
    if any(t.startswith("f") or t.startswith("bf") for t in types):
        return "fp32"
    return "int"


def family_of(opcode: str) -> str:
    """The opcode family for the instruction mix: the base opcode, plus the state space for
    memory operations."""
    parts = opcode.split(".")
    if parts[0] in BY_SPACE and len(parts) > 1 and parts[1] in _SPACES:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def types_of(inst) -> list[str]:
    return [m for m in inst.mods if m in NP]


def typ(inst) -> str:
    t = types_of(inst)
    if not t:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    return t[-1]


def bits(t: str) -> int:
    return TYPE_BITS[t]


def scalar(value, t: str):
    """A Python number as a numpy scalar of PTX type t, wrapping integers like the hardware."""
    dt = np.dtype(NP[t])
    if t == "pred":
        return np.bool_(value)
    if dt.kind == "f":
        return dt.type(value)
    w = dt.itemsize * 8
    return np.array(int(value) % (1 << w), UINT[w]).view(dt)[()]


def fbits_scalar(raw: int, width: int, t: str):
    """A 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX literal as type t (raw bits for .b types)."""
    src = np.array(raw, UINT[width]).view(np.float32 if width == 32 else np.float64)[()]
    dt = np.dtype(NP[t])
    if dt.kind == "f":
        return dt.type(src)
    if dt.itemsize * 8 == width:
        return np.array(raw, UINT[width]).view(dt)[()]
    return scalar(int(src), t)


def const(c):
    return lambda sel: c


def get(eng, inst, o, t: str):
    """A callable sel -> value of operand o read as PTX type t (array over sel, or a scalar)."""
    k = o.kind
    if k == "reg":
        if o.name.split(".")[0] in SPECIALS:
            try:
                return eng.special(o.name, t)
            except UnsupportedPTX as exc:
                raise UnsupportedPTX(f"{inst.opcode} reading {exc.opcode}", inst.file, inst.line) from None
        if o.name not in eng.regs:  # a function-local .local/.param variable named as a value
            if o.name.startswith("%") and o.name.split("::")[-1] == o.name:
                # not a register and not a symbol: a special register the emulator lacks
                raise UnsupportedPTX(f"{inst.opcode} reading special register {o.name}", inst.file, inst.line)
            return const(scalar(eng.symbol_address(o.name, inst), t))
        return eng.view(o.name, t).__getitem__
    if k == "imm":
        return const(scalar(o.value, t))
    if k == "fimm":
        if o.offset == 0:
            return const(scalar(o.value, t))
        return const(fbits_scalar(o.value, o.offset, t))
    if k == "sym":
        return const(scalar(eng.symbol_address(o.name, inst), t))
    if k == "vec":  # mov.b32 %r, {%h1, %h2}: packing is done by the mov builder
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    raise UnsupportedPTX(inst.opcode, inst.file, inst.line)


def put(eng, inst, o, t: str):
    """A callable (sel, value) writing operand o as type t; a sink '_' discards."""
    if o.kind == "sink":
        return lambda sel, v: None
    if o.kind != "reg":
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    return eng.view(o.name, t).__setitem__


def into(eng, inst, o, t: str, fn, srcs):
    """For box runs (boxes.py, where sel is always a basic 2-D slice): run(sel) that computes the
    ufunc fn straight into the destination register with out=, which saves a temporary and its
    copy. It falls back to put() when the result type is not the register view's (a narrower or
    wider store, which put converts). None where it does not apply."""
    if not getattr(eng, "box_runs", False) or not isinstance(fn, np.ufunc) or o.kind != "reg" \
            or o.name not in eng.regs or fn.nin != len(srcs):
        return None
    dv = eng.view(o.name, t)
    d = dv.__setitem__
    pred = fn.types[1].endswith("?")  # comparisons and logical_not: the result is a predicate
    if len(srcs) == 1:
        (a,) = srcs

        def run(sel):
            x = a(sel)
            r = dv[sel]
            if (np.bool_ if pred else np.result_type(x)) == r.dtype:
                fn(x, out=r)
            else:
                d(sel, fn(x))
        return run
    a, b = srcs

    def run(sel):
        x, y = a(sel), b(sel)
        r = dv[sel]
        if (np.bool_ if pred else np.result_type(x, y)) == r.dtype:
            fn(x, y, out=r)
        else:
            d(sel, fn(x, y))
    return run


def reg_view(storage: np.ndarray, t: str) -> np.ndarray:
    """The register's raw bits seen as PTX type t. A narrower or wider integer type is read and
    written at the register's width with t's signedness, so ld.s8 into a 32-bit register sign-
    extends and st.u8 of a 32-bit register truncates, as PTX defines."""
    want = np.dtype(NP[t])
    if storage.dtype == np.bool_ or want == storage.dtype:
        return storage if want == storage.dtype or storage.dtype == np.bool_ else storage.view(want)
    w = storage.dtype.itemsize * 8
    if want.itemsize == storage.dtype.itemsize:
        return storage.view(want)
    if want.kind in "iu" or t.startswith("b"):
        return storage.view(SINT[w] if want.kind == "i" else UINT[w])
    if want.kind == "f" and t == "f16" and w == 32:  # .f16 in a 32-bit register: low half
        return storage.view(np.float16)[..., ::2]  # per lane, also for (R, T) views
    return storage.view(UINT[w])


def unsupported(inst, what: str | None = None):
    def run(sel):
        raise UnsupportedPTX(what or inst.opcode, inst.file, inst.line)
    return PLAIN, run


def bind(eng, inst) -> None:
    """Attach kind and run to inst for this launch."""
    b = BUILDERS.get(inst.op)
    if b is None:
        inst.kind, inst.run = unsupported(inst)
        return
    try:
        inst.kind, inst.run = b(eng, inst)
    except UnsupportedPTX as exc:  # keep what the builder named: an operand, a form, a size
        inst.kind, inst.run = unsupported(inst, exc.opcode)
