"""ptxas's refusals turned into a message at the learner's line, with the limit and the fix.

NVVM accepts any amount of static shared memory; ptxas then refuses the entry with "uses too much
shared data (0x14000 bytes, 0xc000 max)", in hex, with no line. Here the `__shared__` declarations
of kernel.cu are found and sized, and the message names the largest one, the total, the limit and
the way past it (dynamic shared memory, requested by the launch plan).
"""
from __future__ import annotations

import re

_TOO_MUCH = re.compile(r"Entry function '(?P<entry>[^']+)' uses too much shared data "
                       r"\((?P<used>0x[0-9a-fA-F]+) bytes, (?P<max>0x[0-9a-fA-F]+) max\)")
_DECL = re.compile(r"__shared__\s+(?:__align__\(\d+\)\s+)?(?P<type>(?:unsigned\s+|signed\s+|const\s+|volatile\s+)*"
                   r"[A-Za-z_][\w:]*(?:\s+(?:long|int|short|char))*)\s+(?P<name>\w+)\s*(?P<dims>(?:\[[^\]]*\]\s*)+);")
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\s+\(?\s*([0-9][0-9xXa-fA-F]*)[uUlL]*\s*\)?\s*$")
_CONST = re.compile(r"\b(?:constexpr|const)\s+(?:int|unsigned|size_t|long)\s+(\w+)\s*=\s*([0-9][0-9xX]*)")
_SIZES = {"char": 1, "bool": 1, "short": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "int": 4,
          "unsigned": 4, "float": 4, "uint32_t": 4, "int32_t": 4, "double": 8, "long": 8, "size_t": 8,
          "uint64_t": 8, "int64_t": 8, "float2": 8, "int2": 8, "uint2": 8, "double2": 16, "float4": 16,
          "int4": 16, "uint4": 16, "long long": 8}
DYNAMIC_LIMIT = 227 * 1024  # the H200's dynamic shared memory per block, with the opt-in


def _element(type_text: str) -> int | None:
    words = [w for w in type_text.split() if w not in ("unsigned", "signed", "const", "volatile")]
    key = " ".join(words)
    if key in _SIZES:
        return _SIZES[key]
    return _SIZES.get(words[-1]) if words else 4  # "unsigned" alone is an int


def declarations(source: str) -> list[tuple[int, str, int | None]]:
    """(line, 'name[dims]', bytes or None) of every static __shared__ array in source."""
    names = {}
    for text in source.splitlines():
        for pat in (_DEFINE, _CONST):
            for m in pat.finditer(text):
                names[m.group(1)] = m.group(2)
    out = []
    for lineno, text in enumerate(source.splitlines(), start=1):
        for m in _DECL.finditer(text):
            if "extern" in text[:m.start()]:
                continue
            dims = re.findall(r"\[([^\]]*)\]", m["dims"])
            size = _element(m["type"])
            for d in dims:
                expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda w: names.get(w.group(0), "?"), d)
                if size is None or not re.fullmatch(r"[\d\s+\-*/()xXa-fA-F]*", expr) or "?" in expr or "**" in expr:
                    size = None
                    break
                try:
                    size *= int(eval(expr, {"__builtins__": {}}))  # digits and + - * / only
                except Exception:  # noqa: BLE001 - not a constant we can size
                    size = None
                    break
            out.append((lineno, f"{m['name']}{m['dims'].strip()}", size))
    return out


def explain(log: str, source: str | None, filename: str, diagnostic):
    """A Diagnostic for the first shared-memory refusal in ptxas's log, or None."""
    m = _TOO_MUCH.search(log)
    if m is None:
        return None
    used, limit = int(m["used"], 16), int(m["max"], 16)
    decls = declarations(source or "")
    sized = sorted((d for d in decls if d[2]), key=lambda d: -d[2])
    where = sized[0] if sized else (decls[0] if decls else None)
    listed = ", ".join(f"{name} at line {line}: {size} bytes" if size else f"{name} at line {line}"
                       for line, name, size in (sized or decls))
    message = (f"kernel {m['entry']} declares {used} bytes of static shared memory"
               + (f" ({listed})" if listed else "")
               + f"; a block may have at most {limit} bytes ({limit // 1024} KiB) of static shared memory. "
               f"Make the largest array dynamic: `extern __shared__ float {(where[1].split('[')[0] if where else 'smem')}[];` "
               f"in {filename} and shared=BYTES in launch.py's gpu.launch (up to {DYNAMIC_LIMIT} bytes on the H200), "
               "or use a smaller tile")
    return diagnostic(filename, where[0] if where else None, "error", message, None)
