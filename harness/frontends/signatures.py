"""The C types of each kernel's parameters, read from kernel.cu (PTX says only "u64" for a pointer).

The launch plan uses them for one check the PTX cannot make: a `double*` parameter handed the kata's
float32 buffer reads 8-byte values from 4-byte data, which the emulator would call out-of-bounds
("check the index") and the GPU would just get wrong. That is a type mismatch, and is said so.
"""
from __future__ import annotations

import re

_ENTRY = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(\w+)\s*\(([^)]*)\)", re.S)
_FLOATS = {"float": "float32", "double": "float64", "half": "float16", "__half": "float16"}


def pointer_types(source: str) -> dict[str, list[tuple[str | None, str, int]]]:
    """kernel name -> per parameter (pointee C type or None for non-pointers, parameter text, line)."""
    out: dict[str, list] = {}
    for m in _ENTRY.finditer(source or ""):
        params, line = [], source.count("\n", 0, m.start(2)) + 1
        for text in m.group(2).split(","):
            where = line + m.group(2)[:m.group(2).find(text)].count("\n") if text else line
            clean = " ".join(text.replace("__restrict__", "").replace("const", "").split())
            pointee = clean.split("*")[0].strip().split()[-1] if "*" in clean and clean.split("*")[0].strip() else None
            params.append((pointee, " ".join(text.split()), where))
        out[m.group(1)] = params
    return out


def mismatch(pointee: str | None, dtype) -> str | None:
    """The float dtype a pointee type reads when it is another floating type than `dtype`'s, else None."""
    import numpy as np

    want = _FLOATS.get(pointee or "")
    have = np.dtype(dtype)
    if want is None or have.kind != "f" or np.dtype(want) == have:
        return None
    return want
