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


class Reports:
    """The Sanitizer's reporting half; expects its _found, _grid, _block, _slot_of and _g."""

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
        sync = ("__syncwarp() (a warp's lanes do not run in lockstep since Volta)" if same_warp
                else "__syncthreads()")
        off = int(w[i]) * self._g
        text = template.format(off=off, here=here, there=there, sync=sync,
                               other=_fmt(other_xyz) if other_xyz else "")
        message = f"thread {_fmt(thread)} of block {_fmt(block)} {text}"
        finding = Finding(kind=kind, message=message, file=inst.file, line=inst.line, block=block,
                          thread=thread, address=off, space="shared", other_thread=other_xyz, other_line=ol)
        self._found[key] = [finding, count]


def _fmt(xyz: tuple[int, int, int]) -> str:
    return f"({xyz[0]},{xyz[1]},{xyz[2]})"
