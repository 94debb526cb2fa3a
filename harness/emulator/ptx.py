"""The PTX loader: NVRTC's text → a Module of functions, variables and pre-decoded instructions.

It is longer than ~300 lines: directives, parameters and both compilers' .loc conventions
(NVRTC's inlined_at, clang's inlining comments) share one parse state and are read in one pass.

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
from .ptx_syntax import (SPECIALS, TYPE_BITS, Operand, Var, match_brace, parse_operand, parse_var,  # noqa: F401
                         split_top)

@dataclass(frozen=True)
class Param:
    name: str  # the PTX parameter name, e.g. reduce_param_0
    type: str  # "u64", "s32", "f32", ... or "b8" for a by-value struct (see size)
    size: int = 4  # bytes
    align: int = 4  # bytes
    offset: int = 0  # byte offset inside the packed parameter buffer


class Inst:
    """A decoded instruction. `run`/`kind` are filled in by the ops layer when a launch binds it."""
    __slots__ = ("pc", "opcode", "op", "mods", "ops", "guard", "neg", "file", "line", "func", "text",
                 "kind", "run", "target", "aux", "gv", "run2", "gv2", "batch", "cost")

    def __init__(self, pc, opcode, ops, guard, neg, file, line, func, text):
        self.pc, self.opcode, self.ops, self.guard, self.neg = pc, opcode, ops, guard, neg
        parts = opcode.split(".")
        self.op, self.mods = parts[0], tuple(parts[1:])
        self.file, self.line, self.func, self.text = file, line, func, text
        self.kind, self.run, self.target, self.aux, self.gv = 0, None, None, None, None
        self.run2, self.gv2 = None, None  # the run and guard for box-shaped lane sets (boxes.py)
        self.batch = None  # (run, offset) when it starts or continues a fused run (fused.py)
        self.cost = 1  # emulated work per active lane, relative to plain arithmetic (engine.LANE_COST)

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
    cluster: tuple[int, int, int] = (1, 1, 1)  # .reqnctapercluster (__cluster_dims__): blocks per cluster


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
# PTX identifiers have no dots, and "::" belongs to an opcode (fence.proxy.async.shared::cta)
_LABEL = re.compile(r"([$%\w]+):(?!:)")
_DECL = re.compile(r"\.(reg|shared|local|const|global|param)\b")
_REGRANGE = re.compile(r"^(%?[\w$.]+)<(\d+)>$")
_LOCLINE = re.compile(r"\.(loc|file)\s")
_POINTEE = re.compile(r"\.ptr(?:\s+\.(?:global|shared|const|local))?(?:\s+\.align\s+\d+)?")
# clang writes the inlining chain only in the .loc line's comment: `// a.h:92:27 @[ kernel.cu:5:24 ]`
_CLANG_LOC = re.compile(r"^([ \t]*\.loc\s[^\n/]*)//[^\n@]*(@\[[^\n]*)$", re.M)
_CHAIN = re.compile(r"\bchain=(\S+)")


def _chain_marker(chain: str) -> str:
    """`@[ /x/kernel.cu:5:24 @[ ... ] ]` → ` chain=kernel.cu:5|...`, innermost caller first, outside the comment."""
    return " chain=" + "|".join(f"{PurePath(p).name.replace(' ', '_')}:{ln}"
                                    for p, ln in re.findall(r"@\[\s*(.+?):(\d+):\d+", chain))


_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")


class _Parser:
    def __init__(self, text: str, filename: str):
        text = _CLANG_LOC.sub(lambda m: m[1] + _chain_marker(m[2]), text)
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
                i = match_brace(t, t.index("{", i))
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
                j = match_brace(t, body_start)
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
                v = parse_var(stmt)
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
        base = PurePath(self.filename).name.replace(" ", "_")  # clang's chain: the first caller in the learner's file
        line = next((ln for name, ln in loc[3] if loc[0] != learner and name == base), None)
        if line is not None:
            return self.filename, line
        loc = loc[:3]
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
        if c := re.search(r"\.reqnctapercluster\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", header):
            fn.cluster = (int(c[1]), int(c[2] or 1), int(c[3] or 1))
        for group, dest in ((m[1], fn.rets), (m[4], fn.params)):
            if not group:
                continue
            inner = group[1:-1] if group.startswith("(") else group
            offset = 0
            for decl in split_top(inner):
                # `.ptr .global .align N` describes the pointee (N: its alignment), not the parameter:
                # read as the parameter's, `.align 1` would pack an 8-byte pointer at a misaligned offset
                v = parse_var(_POINTEE.sub("", decl))
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
                # line 0 (clang: code of no one line, e.g. merged from two) keeps the line before it
                if (m := _LOC.match(body, i)) is not None and m[2] != "0":
                    c = _CHAIN.search(body, i, e)
                    loc = (int(m[1]), int(m[2]), int(m[3]), tuple(
                        (name, int(line)) for name, line in (x.rsplit(":", 1) for x in c[1].split("|"))) if c else ())
                    if m[4]:
                        self.inlined[loc[:3]] = (int(m[4]), int(m[5]), int(m[6]))
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
        v = parse_var(stmt)
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
            items = split_top(rest)
            rets: list[str] = []
            if items and items[0].startswith("("):
                rets = [resolve(x) for x in split_top(items.pop(0)[1:-1])]
            target = items.pop(0).strip()
            args = [resolve(x) for x in split_top(items.pop(0)[1:-1])] if items else []
            aux = (rets, target, args)
            ops: list[Operand] = []
        else:
            ops = [parse_operand(x, resolve) for x in split_top(rest)] if rest.strip() else []
        inst = Inst(len(self.code), opcode, ops, guard, neg, None, None, fn.name, stmt)
        inst.aux = aux
        self.code.append(inst)
        self.locs.append(loc)
        return inst


_PARSED: dict[tuple[str, str], Module] = {}  # the last few modules: a worker runs one PTX many times


def load_ptx(text: str, filename: str = "kernel.cu") -> Module:
    """Parse PTX from NVRTC (12.x or 13.x). Raises EmulatorError on text it cannot read.
    A module is immutable between launches (each launch binds its instructions afresh), so the
    same text parsed again returns the module parsed before."""
    key = (text, filename)
    if key in _PARSED:
        return _PARSED[key]
    if ".entry" not in text and ".func" not in text:
        raise EmulatorError("this does not look like PTX: no .entry or .func")
    module = _Parser(text, filename).parse()
    if len(_PARSED) >= 4:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[key] = module
    return module
