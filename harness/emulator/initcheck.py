"""Global memory a kernel reads before anything wrote it (compute-sanitizer's initcheck).

A host program marks buffers whose bytes are garbage on a GPU (a fresh cudaMalloc, an output the
grader filled with poison) with Emulator.mark_unwritten; host writes and memsets count as writes.
The shadow is one bool per byte of each marked allocation (True: never written), kept across
launches, so an output written by one kernel and read by the next is fine. Only marked ranges
cost anything: inputs, zeroed buffers and module globals are never tracked.
"""
from __future__ import annotations

import numpy as np


class GlobalInit:
    def __init__(self) -> None:
        self.ranges: dict[int, np.ndarray] = {}  # start address -> per-byte "never written"

    def mark_unwritten(self, ptr: int, nbytes: int) -> None:
        if nbytes <= 0:
            return
        self._forget_overlaps(ptr, nbytes)
        self.ranges[int(ptr)] = np.ones(int(nbytes), bool)

    def written(self, ptr: int, nbytes: int) -> None:
        """A host write or memset: those bytes are initialised."""
        for start, shadow in list(self.ranges.items()):
            lo, hi = max(start, ptr), min(start + shadow.size, ptr + nbytes)
            if lo < hi:
                shadow[lo - start:hi - start] = False
                if not shadow.any():
                    del self.ranges[start]

    def _forget_overlaps(self, ptr: int, nbytes: int) -> None:
        for start, shadow in list(self.ranges.items()):
            if start < ptr + nbytes and ptr < start + shadow.size:
                del self.ranges[start]

    def unwritten(self, addrs, size: int):
        """Per lane, whether any of its bytes is still marked never written (None: none tracked)."""
        if not self.ranges:
            return None
        a = np.asarray(addrs, np.uint64)
        out = np.zeros(a.size, bool)
        lo, hi = int(a.min()), int(a.max()) + int(size)
        for start, shadow in self.ranges.items():
            end = start + shadow.size
            if hi <= start or lo >= end:
                continue
            lanes = np.flatnonzero((a >= np.uint64(start)) & (a < np.uint64(end)))
            idx = np.minimum((a[lanes] - np.uint64(start)).astype(np.int64)[:, None] + np.arange(int(size)),
                             shadow.size - 1)
            out[lanes] = shadow[idx].any(axis=1)
        return out

    def access(self, sanitizer, inst, op, blocks, tids, addrs, size) -> None:
        """One global access of an issued group: loads and atomics of never-written bytes are
        reported through the sanitizer; stores and atomics mark their bytes written."""
        if not self.ranges:
            return
        a = np.asarray(addrs, np.uint64)
        lo, hi = int(a.min()), int(a.max()) + int(size)
        for start, shadow in list(self.ranges.items()):
            end = start + shadow.size
            if hi <= start or lo >= end:
                continue
            inside = (a >= np.uint64(start)) & (a < np.uint64(end))
            lanes = np.flatnonzero(inside)
            off = (a[lanes] - np.uint64(start)).astype(np.int64)
            idx = off[:, None] + np.arange(int(size))
            idx = np.minimum(idx, shadow.size - 1)
            if op != "st":
                bad = shadow[idx].any(axis=1)
                if bad.any():
                    i = int(lanes[np.argmax(bad)])
                    sanitizer.report_global_uninit(inst, int(bad.sum()), blocks, tids, i, int(a[i]),
                                                   int(a[i]) - start)
            if op != "ld":  # the range stays tracked when fully written: checking costs a pass
                shadow[idx.ravel()] = False
