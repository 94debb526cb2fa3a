"""The PTX loader: NVRTC's text → a Module of functions, variables and pre-decoded instructions.

Parsing happens once per module. Every instruction becomes an `Inst` carrying its opcode, its
operands already split and classified, and the learner's file:line (inlined header code is mapped
back through `.loc ... inlined_at` to the line of the learner's file that called it). Registers
are renamed `function::name` (and `name#scope` for ones declared inside `{ }` blocks, which inline
asm from cuda_fp16.h uses), so the engine can keep one flat register file for all functions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePath

from .findings import EmulatorError

SPECIALS = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
            "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock",
            "%clock64", "%globaltimer", "%dynamic_smem_size", "%total_smem_size", "%gridid")
TYPE_BITS = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
             "b32": 32, "u32": 32, "s32": 32, "f32": 32, "f16x2": 32, "bf16x2": 32, "b64": 64, "u64": 64,
             "s64": 64, "f64": 64, "b128": 128}


@dataclass(frozen=True)
class Param:
    name: str  # the PTX parameter name, e.g. reduce_param_0
    type: str  # "u64", "s32", "f32", ... or "b8" for a by-value struct (see size)
    size: int = 4  # bytes
    align: int = 4  # bytes
    offset: int = 0  # byte offset inside the packed parameter buffer


@dataclass(frozen=True)
class Var:
    """A named variable in a state space: .shared, .local, .const, .global or .param."""
    name: str
    space: str
    size: int  # bytes; 0 for extern dynamic shared
    align: int
    init: bytes | None = None  # initial bytes of .const/.global


class Operand:
    """One instruction operand, classified once. kind: reg, imm, fimm, sym, addr, vec, label, sink."""
    __slots__ = ("kind", "name", "value", "offset", "items", "pred")

    def __init__(self, kind, name=None, value=None, offset=0, items=(), pred=None):
        self.kind, self.name, self.value, self.offset, self.items, self.pred = kind, name, value, offset, items, pred

    def __repr__(self):
        return f"Operand({self.kind}, {self.name or self.value}, +{self.offset})"


class Inst:
    """A decoded instruction. `run`/`kind` are filled in by the ops layer when a launch binds it."""
    __slots__ = ("pc", "opcode", "op", "mods", "ops", "guard", "neg", "file", "line", "func", "text",
                 "kind", "run", "target", "aux", "gv")

    def __init__(self, pc, opcode, ops, guard, neg, file, line, func, text):
        self.pc, self.opcode, self.ops, self.guard, self.neg = pc, opcode, ops, guard, neg
        parts = opcode.split(".")
        self.op, self.mods = parts[0], tuple(parts[1:])
        self.file, self.line, self.func, self.text = file, line, func, text
        self.kind, self.run, self.target, self.aux, self.gv = 0, None, None, None, None

    def __repr__(self):
        return f"<{self.pc}: {self.text} @{self.file}:{self.line}>"


@dataclass
class Function:
    name: str
    entry: bool
    params: list[Param] = field(default_factory=list)
    rets: list[Param] = field(default_factory=list)
    regs: dict[str, str] = field(default_factory=dict)  # qualified register name -> PTX type
    vars: dict[str, Var] = field(default_factory=dict)  # .shared/.local/.param declared inside
    start: int = 0  # first pc
    end: int = 0  # one past the last pc
    callees: set[str] = field(default_factory=set)


@dataclass
class Module:
    filename: str
    version: str
    target: str
    functions: dict[str, Function]
    code: list[Inst]
    vars: dict[str, Var]  # module-level .global/.const/.shared
    files: dict[int, str]

    @property
    def kernels(self) -> dict[str, Function]:
        return {n: f for n, f in self.functions.items() if f.entry}


_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LABEL = re.compile(r"([$%\w.]+):")
_DECL = re.compile(r"\.(reg|shared|local|const|global|param)\b")
_REGRANGE = re.compile(r"^(%?[\w$.]+)<(\d+)>$")
_VARDECL = re.compile(r"(?:\.(?:extern|visible|weak)\s+)*\.(\w+)\s+(.*?)\s*(?:=\s*(.*))?$", re.S)
_LOCLINE = re.compile(r"\.(loc|file)\s")
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


def _split_top(text: str, sep: str = ",") -> list[str]:
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


def _match_brace(text: str, i: int) -> int:
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


def _parse_var(decl: str) -> Var:
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
        return Operand("vec", items=tuple(parse_operand(x, resolve) for x in _split_top(t[1:-1])))
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


class _Parser:
    def __init__(self, text: str, filename: str):
        self.text = _COMMENT.sub(lambda m: "\n" * m[0].count("\n"), text)
        self.filename = filename
        self.code: list[Inst] = []
        self.functions: dict[str, Function] = {}
        self.vars: dict[str, Var] = {}
        self.files: dict[int, str] = {}
        self.inlined: dict[tuple[int, int, int], tuple[int, int, int]] = {}
        self.locs: list[tuple[int, int, int]] = []  # per instruction (file, line, col)
        self.version = self.target = ""

    def parse(self) -> Module:
        t, i = self.text, 0
        while i < len(t):
            while i < len(t) and t[i].isspace():
                i += 1
            if i >= len(t):
                break
            if t.startswith(".section", i):
                i = _match_brace(t, t.index("{", i))
                continue
            head_end = min(x for x in (t.find(";", i), t.find("{", i), t.find("\n", i), len(t)) if x >= 0)
            head = t[i:head_end]
            if re.match(r"(\.(visible|extern|weak)\s+)*\.(entry|func)\b", head):
                body_start = t.find("{", i)
                semi = t.find(";", i)
                if body_start < 0 or 0 <= semi < body_start:  # a prototype without a body
                    i = semi + 1
                    continue
                # a .func's header may contain "(.param ...)" before the body brace; braces only open bodies
                j = _match_brace(t, body_start)
                self._function(t[i:body_start], t[body_start + 1:j - 1])
                i = j
                continue
            line_end = t.find("\n", i)
            line_end = len(t) if line_end < 0 else line_end
            if t.startswith((".version", ".target", ".address_size", ".file"), i):
                self._directive(t[i:line_end].strip())
                i = line_end
                continue
            end = t.find(";", i)
            stmt = t[i:end if end >= 0 else len(t)]
            i = (end + 1) if end >= 0 else len(t)
            if _DECL.search(stmt.split("=")[0]):
                v = _parse_var(stmt)
                self.vars[v.name] = v
        learner = self._learner_file()
        for inst, loc in zip(self.code, self.locs):
            inst.file, inst.line = self._resolve_loc(loc, learner)
        return Module(self.filename, self.version, self.target, self.functions, self.code, self.vars, self.files)

    def _directive(self, line: str) -> None:
        words = line.split()
        if words[0] == ".version":
            self.version = words[1]
        elif words[0] == ".target":
            self.target = words[1].rstrip(",")
        elif words[0] == ".file":
            self.files[int(words[1])] = line.split('"')[1] if '"' in line else words[2]

    def _learner_file(self) -> int | None:
        base = PurePath(self.filename).name
        for k, path in self.files.items():
            if PurePath(path).name == base:
                return k
        return 1 if 1 in self.files else None

    def _resolve_loc(self, loc, learner) -> tuple[str | None, int | None]:
        if loc is None:
            return self.filename, None
        seen = 0
        while loc[0] != learner and loc in self.inlined and seen < 64:
            loc, seen = self.inlined[loc], seen + 1
        if loc[0] == learner:
            return self.filename, loc[1]
        return PurePath(self.files.get(loc[0], "?")).name, loc[1]

    def _function(self, header: str, body: str) -> None:
        entry = ".entry" in header
        m = re.search(r"\.(?:entry|func)\s*(\((?:[^()]*)\))?\s*([\w$]+)\s*(\((.*?)\))?", header, re.S)
        if not m:
            raise EmulatorError(f"cannot parse function header {header.strip()[:80]}")
        fn = Function(m[2], entry)
        for group, dest in ((m[1], fn.rets), (m[4], fn.params)):
            if not group:
                continue
            inner = group[1:-1] if group.startswith("(") else group
            offset = 0
            for decl in _split_top(inner):
                v = _parse_var(decl.replace(".ptr", "").replace(".global", "").replace(".shared", ""))
                words = decl.split()
                typ = next((w[1:] for w in words if w.startswith(".") and w[1:] in TYPE_BITS), "b8")
                offset = (offset + v.align - 1) // v.align * v.align
                dest.append(Param(v.name, typ, v.size, v.align, offset))
                offset += v.size
        if m[2] in self.functions and self.functions[m[2]].end > 0:
            raise EmulatorError(f"function {m[2]} defined twice")
        if not body.strip() and not entry:  # a prototype (.extern .func) without a body
            self.functions.setdefault(m[2], fn)
            return
        self.functions[m[2]] = fn
        fn.start = len(self.code)
        self._body(fn, body)
        fn.end = len(self.code)

    def _body(self, fn: Function, body: str) -> None:
        scopes: list[dict[str, str]] = [{}]
        for p in fn.params + fn.rets:
            scopes[0][p.name] = f"{fn.name}::{p.name}"
            fn.vars[scopes[0][p.name]] = Var(scopes[0][p.name], "param", p.size, p.align)
        counter = [0]
        labels: dict[str, int] = {}
        loc = None
        pending: list[Inst] = []

        def resolve(name: str) -> str:
            for s in reversed(scopes):
                if name in s:
                    return s[name]
            return name

        i, n = 0, len(body)
        while i < n:
            ch = body[i]
            if ch.isspace():
                i += 1
                continue
            if ch == "{":
                scopes.append({})
                counter[0] += 1
                i += 1
                continue
            if ch == "}":
                scopes.pop()
                i += 1
                continue
            if _LOCLINE.match(body, i):
                e = body.find("\n", i)
                e = n if e < 0 else e
                if (m := _LOC.match(body, i)) is not None:
                    loc = (int(m[1]), int(m[2]), int(m[3]))
                    if m[4]:
                        self.inlined[loc] = (int(m[4]), int(m[5]), int(m[6]))
                i = e
                continue
            if m := _LABEL.match(body, i):
                labels[m[1]] = len(self.code)
                i = m.end()
                continue
            e = body.find(";", i)
            e = n if e < 0 else e
            stmt = " ".join(body[i:e].split())
            i = e + 1
            if not stmt or stmt.startswith((".pragma", ".maxntid", ".reqntid", ".minnctapersm", ".maxnreg")):
                continue
            if _DECL.match(stmt):
                self._declare(fn, stmt, scopes[-1], len(scopes) > 1 and f"#{counter[0]}")
                continue
            inst = self._instruction(fn, stmt, resolve, loc)
            pending.append(inst)
        for inst in pending:
            if inst.op in ("bra", "brx") and inst.ops and inst.ops[0].kind in ("sym", "reg"):
                name = inst.ops[0].name
                if name not in labels:
                    raise EmulatorError(f"branch to unknown label {name} in {fn.name}")
                inst.target = labels[name]
            if inst.op == "call":
                fn.callees.add(inst.aux[1])

    def _declare(self, fn: Function, stmt: str, scope: dict, suffix) -> None:
        words = stmt.split()
        if words[0] == ".reg":
            typ = words[1][1:]
            rest = " ".join(words[2:])
            for name in (x.strip() for x in rest.split(",")):
                m = _REGRANGE.match(name)
                names = [f"{m[1]}{k}" for k in range(int(m[2]))] if m else [name]
                for r in names:
                    q = f"{fn.name}::{r}{suffix or ''}"
                    scope[r] = q
                    fn.regs[q] = typ
            return
        v = _parse_var(stmt)
        if v.space == "param" or v.space == "local":
            q = f"{fn.name}::{v.name}{suffix or ''}"
            scope[v.name] = q
            fn.vars[q] = Var(q, v.space, v.size, v.align, v.init)
        else:  # .shared/.const/.global inside a function body are module-wide statics
            self.vars[v.name] = v

    def _instruction(self, fn: Function, stmt: str, resolve, loc) -> Inst:
        guard = neg = None
        if stmt.startswith("@"):
            g, stmt = stmt.split(None, 1)
            neg = g.startswith("@!")
            guard = resolve(g[2:] if neg else g[1:])
        parts = stmt.split(None, 1)
        opcode, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        aux = None
        if opcode.startswith("call"):
            # call[.uni] (ret, ...), name, (args, ...)  — the return list is optional
            items = _split_top(rest)
            rets: list[str] = []
            if items and items[0].startswith("("):
                rets = [resolve(x) for x in _split_top(items.pop(0)[1:-1])]
            target = items.pop(0).strip()
            args = [resolve(x) for x in _split_top(items.pop(0)[1:-1])] if items else []
            aux = (rets, target, args)
            ops: list[Operand] = []
        else:
            ops = [parse_operand(x, resolve) for x in _split_top(rest)] if rest.strip() else []
        inst = Inst(len(self.code), opcode, ops, guard, neg, None, None, fn.name, stmt)
        inst.aux = aux
        self.code.append(inst)
        self.locs.append(loc)
        return inst


def load_ptx(text: str, filename: str = "kernel.cu") -> Module:
    """Parse PTX from NVRTC (12.x or 13.x). Raises EmulatorError on text it cannot read."""
    if ".entry" not in text and ".func" not in text:
        raise EmulatorError("this does not look like PTX: no .entry or .func")
    return _Parser(text, filename).parse()
