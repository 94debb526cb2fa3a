"""How the sanitizer (sanitizer.py) words its findings: one Finding per (kind, file, line),
describing the first occurrence, with a count of the rest."""
from __future__ import annotations

import numpy as np

from .findings import Finding

def _coords(linear: int, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return (int(linear % x), int((linear // x) % y), int(linear // (x * y)))


# Kinds the per-lane kernel reports, in the order of its `hits` rows, and what each says.
_KINDS = ("uninitialized-read", "race-raw", "race-waw", "race-war")
_TEXT = {
    "uninitialized-read": "reads shared memory at byte offset {off} ({here}) that no thread of this block "
                          "has written: shared memory holds garbage when a block starts",
    "race-raw": "reads shared memory at byte offset {off} ({here}), which thread {other} wrote at {there} "
                "with no {sync} between",
    "race-waw": "writes shared memory at byte offset {off} ({here}), which thread {other} wrote at {there} "
                "with no {sync} between, so which value survives is undefined",
    "race-war": "writes shared memory at byte offset {off} ({here}), which thread {other} read at {there} "
                "with no {sync} between, so the reader may see either value",
}


# The fixes a message names, in each kernel language (numba.cuda, Triton); CUDA C is the key.
_FIXES = {
    "numba": {"__syncthreads()": "cuda.syncthreads()", "__syncwarp()": "cuda.syncwarp()",
              "atomicAdd()": "cuda.atomic.add()", "atomicMin()": "cuda.atomic.min()",
              "atomicMax()": "cuda.atomic.max()", "__threadfence()": "cuda.threadfence()"},
    "triton": {"__syncthreads()": "tl.debug_barrier()", "__syncwarp()": "tl.debug_barrier()",
               "atomicAdd()": "tl.atomic_add()", "atomicMin()": "tl.atomic_min()",
               "atomicMax()": "tl.atomic_max()", "__threadfence()": "a second kernel"},
}


def fix(name: str, language: str) -> str:
    """A CUDA C barrier, fence or atomic as the kernel's language spells it."""
    return _FIXES.get(language, {}).get(name, name)


def language_of(file: str | None, kernel: str) -> str:
    """cuda | numba | triton, from the source's name and the entry's: numba mangles its entries
    (_ZN<module>...), Triton keeps the function's name."""
    if file and str(file).endswith(".py"):
        return "numba" if kernel.startswith("_ZN") else "triton"
    return "cuda"


class Reports:
    """The Sanitizer's reporting half; expects its _found, _grid, _block, _slot_of and _g."""

    def _language(self, inst) -> str:
        return language_of(inst.file, getattr(self, "_kernel", ""))

    def _global_race(self, kind, inst, here, other, why, count) -> None:
        """global_shadow.GlobalRaces found an unordered pair: here = (block, tid, offset) of this
        access, other = (block, tid, line, atomic) of the earlier one."""
        key = (kind, inst.file, inst.line)
        if kind == "race-war" and ("race-waw", inst.file, inst.line) in self._found:
            return  # `x += v` from many threads: the lost update at this store already says it
        if key in self._found:
            self._found[key][1] += count
            return
        from .memory import GLOBAL_BASE

        lang = self._language(inst)
        block, thread = _coords(here[0], self._grid), _coords(here[1], self._block)
        oblock, othread = _coords(other[0], self._grid), _coords(other[1], self._block)
        addr = GLOBAL_BASE + here[2]
        f = inst.file or "?"
        at = f"{f}:{inst.line if inst.line is not None else '?'}"
        there = f"{f}:{other[2] if other[2] >= 0 else '?'}"
        me = f"thread {_fmt(thread)} of block {_fmt(block)}"
        them = f"thread {_fmt(othread)} of block {_fmt(oblock)}"
        blocks_differ = here[0] != other[0]
        if why == "lost-update":
            text = (f"{me} and {them} both read global memory at {addr:#x} and stored it back ({at}) with "
                    f"nothing ordering them: a read-modify-write by several threads loses updates. Use "
                    f"{fix('atomicAdd()', lang)} (or another atomic) for a sum from many threads")
        elif why == "same-instruction":
            text = (f"{me} stores a different value than {them} to global memory at {addr:#x} ({at}) in the "
                    f"same instruction: which one lands is undefined. Combine them with an atomic "
                    f"({fix('atomicAdd()', lang)}, {fix('atomicMin()', lang)}, {fix('atomicMax()', lang)}) "
                    "or let one thread store")
        elif kind == "race-raw" and other[3]:
            text = (f"{me} reads global memory at {addr:#x} ({at}), which {them} updates atomically at "
                    f"{there}, with nothing ordering the read after every update: the value read depends on "
                    f"the order of {'blocks' if blocks_differ else 'threads'}. Read the total in a second kernel "
                    "launched after this one" + ("" if blocks_differ else
                                                 f", or after a {fix('__syncthreads()', lang)}"))
        else:
            verb = "reads" if kind == "race-raw" else "writes"
            done = "read" if kind == "race-war" else "updated atomically" if other[3] else "wrote"
            if blocks_differ:
                order = (f"nothing orders two blocks of one launch ({fix('__syncthreads()', lang)} orders its own "
                         "block only). Use the value in a second kernel launched after this one, or publish it "
                         f"with {fix('__threadfence()', lang)} before an atomic flag or ticket the reader "
                         f"checks; for a sum from many blocks use {fix('atomicAdd()', lang)}")
            elif here[1] // 32 != other[1] // 32:
                order = (f"the threads are in different warps: add {fix('__syncthreads()', lang)} between them, or "
                         f"use {fix('atomicAdd()', lang)} for a sum")
            else:
                order = (f"a warp's lanes do not run in lockstep since Volta: add {fix('__syncwarp()', lang)} "
                         "between them")
            text = f"{me} {verb} global memory at {addr:#x} ({at}), which {them} {done} at {there} with no ordering " \
                   f"between: {order}"
        finding = Finding(kind=kind, message=text, file=inst.file, line=inst.line, block=block, thread=thread,
                          address=addr, space="global", other_thread=othread,
                          other_line=other[2] if other[2] >= 0 else None, other_block=oblock)
        self._found[key] = [finding, count]

    def report_global_uninit(self, inst, count, blocks, tids, i, addr, offset) -> None:
        """initcheck.GlobalInit found lane i reading global bytes nothing has written."""
        key = ("uninitialized-read", inst.file, inst.line)
        if key in self._found:
            self._found[key][1] += count
            return
        block = _coords(int(np.asarray(blocks)[i]), self._grid)
        thread = _coords(int(np.asarray(tids)[i]), self._block)
        here = f"{inst.file or '?'}:{inst.line if inst.line is not None else '?'}"
        message = (f"thread {_fmt(thread)} of block {_fmt(block)} reads global memory at {addr:#x} ({here}), "
                   f"byte {offset} of a buffer nothing has written yet: on a GPU it holds garbage (an output "
                   "holds only what the kernel writes; the grader fills outputs with poison). Write it "
                   "before reading it, or start from zeros on purpose (gpu.zeros in launch.py)")
        self._found[key] = [Finding(kind="uninitialized-read", message=message, file=inst.file, line=inst.line,
                                    block=block, thread=thread, address=addr, space="global"), count]

    def _report(self, kind, inst, count, ctx, i, other, other_line, template) -> None:
        key = (kind, inst.file, inst.line)
        if key in self._found:
            self._found[key][1] += count
            return
        s, t, w = ctx[0], ctx[1], ctx[2]
        owners = np.flatnonzero(self._slot_of == s[i])
        block = _coords(int(owners[0]) if owners.size else 0, self._grid)
        thread = _coords(int(t[i]), self._block)
        here = f"{inst.file or '?'}:{inst.line if inst.line is not None else '?'}"
        other_xyz = _coords(other, self._block) if other is not None else None
        ol = other_line if other_line is not None and other_line >= 0 else None
        there = f"{inst.file or '?'}:{ol if ol is not None else '?'}"
        same_warp = other is not None and other // 32 == int(t[i]) // 32
        lang = self._language(inst)
        sync = (f"{fix('__syncwarp()', lang)} (a warp's lanes do not run in lockstep since Volta)" if same_warp
                else fix('__syncthreads()', lang))
        off = int(w[i]) * self._g
        text = template.format(off=off, here=here, there=there, sync=sync,
                               other=_fmt(other_xyz) if other_xyz else "")
        message = f"thread {_fmt(thread)} of block {_fmt(block)} {text}"
        finding = Finding(kind=kind, message=message, file=inst.file, line=inst.line, block=block,
                          thread=thread, address=off, space="shared", other_thread=other_xyz, other_line=ol,
                          other_block=block if other_xyz else None)
        self._found[key] = [finding, count]


def _fmt(xyz: tuple[int, int, int]) -> str:
    return f"({xyz[0]},{xyz[1]},{xyz[2]})"
