"""Triton → PTX and cubin for the grading GPU (sm_90), with no driver: `triton.compile(ASTSource)`.

A Triton kernel is specialised at launch: its constexprs, num_warps and num_stages come from the
launch plan, so it is compiled in the worker when the plan launches it (harness/backends/dialect.py
caches each specialisation). The PTX's `.loc` lines point at kernel.py, so the emulator's findings
and counters name the learner's lines as they do for CUDA C; compile errors are mapped there too.

Facts of the compiled kernel the launch must honour: block = 32 * num_warps (the PTX says
`.reqntid`), the dynamic shared memory the compiler reports (metadata.shared), and the two trailing
scratch pointers Triton 3.x appends to every kernel (global and profile scratch, null when their
size is 0, else a buffer of size * programs).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from harness.frontends import languages
from harness.frontends.python_source import (CompiledKernel, FrontendUnavailable, KernelCompileError, def_line,
                                             source_line)

ARCH = 90
#: numpy dtype name → Triton's signature type
_TYPES = {"float32": "fp32", "float16": "fp16", "float64": "fp64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
          "bool": "i1"}
_REQNTID = re.compile(r"\.reqntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?")


def _triton():
    # Fused multiply-add on, as Triton 3.9 does by default (and says so in a warning each compile).
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError as exc:
        raise FrontendUnavailable(f"Triton is not installed: run `{languages.get('triton').install}`") from exc
    return triton, ASTSource, GPUTarget


def kernels(module) -> dict:
    """{name: JITFunction} of a loaded kernel.py."""
    triton, _, _ = _triton()
    return {name: obj for name, obj in vars(module).items() if isinstance(obj, triton.runtime.JITFunction)}


def param_names(fn) -> list[str]:
    return list(fn.arg_names)


def constexpr_names(fn) -> list[str]:
    return [p.name for p in fn.params if p.is_constexpr]


def signature_type(kind: str, dtype: str) -> str:
    """kind: pointer | int | float; dtype: numpy name."""
    if kind == "pointer":
        return "*" + _TYPES.get(dtype, "u8")
    return _TYPES.get(dtype, "i32" if kind == "int" else "fp32")


def compile_kernel(fn, path: Path, types: dict[str, str], constexprs: dict, divisible: tuple[int, ...],
                   num_warps: int, num_stages: int) -> CompiledKernel:
    """Compile one specialisation. types: {runtime param: signature type}; constexprs: {name: value};
    divisible: indices of params known to be multiples of 16 (aligned pointers, ints)."""
    triton, ASTSource, GPUTarget = _triton()
    signature = {name: ("constexpr" if name in constexprs else types[name]) for name in fn.arg_names}
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
    try:
        src = ASTSource(fn, signature=signature, constexprs=dict(constexprs), attrs=attrs)
        compiled = triton.compile(src, target=GPUTarget("cuda", ARCH, 32),
                                  options=dict(num_warps=int(num_warps), num_stages=int(num_stages)))
    except Exception as exc:
        raise _compile_error(exc, fn, path) from None
    ptx = inline_asm_lines(compiled.asm["ptx"])
    meta = compiled.metadata
    entry = re.search(r"\.entry\s+([\w$]+)", ptx)[1]
    m = _REQNTID.search(ptx)
    threads = None
    if m:
        threads = 1
        for g in m.groups():
            threads *= int(g or 1)
    scratch = (int(getattr(meta, "global_scratch_size", 0) or 0), int(getattr(meta, "profile_scratch_size", 0) or 0))
    return CompiledKernel(entry, ptx, compiled.asm.get("cubin"), threads, int(meta.shared or 0), scratch)


def _compile_error(exc: Exception, fn, path: Path) -> KernelCompileError:
    """Triton's CompilationError says `at L:C` relative to the function whose source it quotes:
    mapped to kernel.py's line (a callee's error quotes the callee)."""
    path = Path(path)
    name = path.name
    node = getattr(exc, "node", None)
    message = getattr(exc, "error_message", None) or str(exc).strip().splitlines()[-1]
    inner = exc
    while getattr(inner, "__cause__", None) is not None and getattr(inner, "node", None) is not None:
        # a nested call's error: the innermost CompilationError holds the real place
        nxt = inner.__cause__
        if getattr(nxt, "node", None) is None:
            break
        inner = nxt
    node = getattr(inner, "node", node)
    message = getattr(inner, "error_message", None) or message
    if node is None or not hasattr(node, "lineno"):
        return KernelCompileError(f"Triton could not compile {fn.__name__}: {message}", name)
    owner = _function_of(inner, fn)
    start = def_line(path, owner.fn.__code__.co_firstlineno) if owner is not None else None
    line = start + node.lineno - 1 if start else None
    return KernelCompileError(str(message), name, line, source_line(path, line))


def _function_of(exc, fn):
    """The jit function whose source the error quotes (fn itself, or a jit function it calls)."""
    src = getattr(exc, "src", None)
    if src is None or getattr(fn, "src", None) == src:
        return fn
    triton, _, _ = _triton()
    module = __import__("sys").modules.get(fn.fn.__module__)
    for obj in vars(module).values() if module is not None else ():
        if isinstance(obj, triton.runtime.JITFunction) and obj.src == src:
            return obj
    return fn


def inline_asm_lines(ptx: str) -> str:
    """Inside an inline-asm block LLVM numbers each asm line from the statement's line on
    (`.loc 1 17`, `1 18`, ... for one tl.load at line 16), pointing findings at lines below the
    learner's statement: only the block's first `.loc` is kept, the statement's own."""
    out, inside, seen = [], False, False
    for line in ptx.splitlines():
        text = line.strip()
        if text.startswith("// begin inline asm"):
            inside, seen = True, False
        elif text.startswith("// end inline asm"):
            inside = False
        elif inside and text.startswith(".loc"):
            if seen:
                continue
            seen = True
        out.append(line)
    return "\n".join(out) + "\n"
