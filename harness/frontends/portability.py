"""What clang accepts but NVRTC rejects: the portability check of the clang front end.

clang compiles CUDA with a host C/C++ environment around it (libc, libc++, their macros), NVRTC
with none: `INFINITY`, `FLT_MAX`, `M_PI`, `std::max` and `#include <cmath>` compile under clang and
fail under NVRTC, the compiler of every GPU machine (NVRTC 13.5 rejects each name below). A kernel
graded on a Mac must still compile there, so each use is reported as an error at its line, with
what to write instead.
"""
from __future__ import annotations

import re
from pathlib import Path

from .nvrtc import Diagnostic

from .host_names import HOST_NAMES  # noqa: F401 - re-exported: the table lives where NVRTC's messages use it too

_M_CONSTANT = re.compile(r"\bM_(?:PI|PI_2|PI_4|E|LN2|LN10|LOG2E|LOG10E|SQRT2|SQRT1_2|1_PI|2_PI|2_SQRTPI)\b")
_PREDEFINED = re.compile(r"\b__(?:FLT|DBL|LDBL|INT|LONG|SCHAR|SHRT|SIZE|UINT\d*|INT\d*)_[A-Z_]*__\b")
_STD = re.compile(r"(?<![\w:])(?:::)?std::(\w+)")
_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]", re.M)
_NAME = re.compile(r"\b[A-Z_][A-Z0-9_]*\b")
_STRIP = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)

_NVRTC = "NVRTC, the compiler on a GPU machine,"


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m[0])


def check(source: str, filename: str, include_dirs: list[Path]) -> tuple[Diagnostic, ...]:
    """Errors for the host-only names and headers in `source`; () when NVRTC would accept them."""
    out: list[Diagnostic] = []
    text = _STRIP.sub(_blank, source)  # comments and strings blanked, lines and columns kept
    lines = source.splitlines()

    def add(pos: int, message: str) -> None:
        line = text.count("\n", 0, pos) + 1
        out.append(Diagnostic(filename, line, "error", message, lines[line - 1] if line <= len(lines) else None))

    for m in _INCLUDE.finditer(source):
        header = m[1]
        if "#" not in text[m.start():m.start(1)]:  # an #include inside a comment
            continue
        if not any((d / header).is_file() for d in include_dirs):
            add(m.start(1), f"#include <{header}>: a host header; {_NVRTC} has no host C/C++ library "
                            f"and cannot open it (CUDA's own headers and <cuda/std/...> work)")
    code = _INCLUDE.sub(_blank, text)
    defined = set(re.findall(r"#[ \t]*define[ \t]+(\w+)", code))
    for m in _NAME.finditer(code):
        name = m[0]
        if name in defined:
            continue
        if name in HOST_NAMES:
            header, instead = HOST_NAMES[name]
            add(m.start(), f"{name} comes from the host header <{header}>, which {_NVRTC} does not have: "
                           f"use {instead}")
        elif _M_CONSTANT.fullmatch(name) or _PREDEFINED.fullmatch(name):
            add(m.start(), f"{name} is a host compiler's constant that {_NVRTC} does not define: "
                           "write the value (CUDART_* names in <math_constants.h>)")
    for m in _STD.finditer(code):
        add(m.start(), f"std::{m[1]}: {_NVRTC} has no C++ standard library: use the CUDA function "
                       f"(fmaxf, sqrtf, ...) or cuda::std::{m[1]} from <cuda/std/...>")
    return tuple(sorted(out, key=lambda d: d.line or 0))
