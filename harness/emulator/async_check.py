"""The sanitizer's check of asynchronous copies: a read of shared memory a cp.async is still
copying into (its thread has not waited for the group yet) is `cp-async-unwaited`.

On a GPU the bytes land at some moment before the wait returns, so such a read sees old or new
data by timing; the emulator lands them exactly at the wait (ops_async.py), so the kernel
computes with stale bytes here, and this finding says why, naming the copy's line. Shadow
state: per resident block and 4-byte word, how many copies are in flight and the line and
thread of the latest; the copy's landing (an on_memory store by the cp.async itself) clears it.
Ordering between the landing and other threads' reads is the race check's business (sanitizer).
"""
from __future__ import annotations

import numpy as np

from .findings import Finding
from .observer import Observer

_WORD = 4
_MAX_SHARED = 256 * 1024  # wild offsets are the engine's out-of-bounds finding, not shadowed here


class AsyncCopyCheck(Observer):
    def __init__(self) -> None:
        self._found: dict[tuple, list] = {}
        self.on_kernel_start("", (1, 1, 1), (1, 1, 1), 0)

    @property
    def findings(self) -> list[Finding]:
        return [Finding(**{**f.__dict__, "count": n}) for f, n in self._found.values()]

    def on_kernel_start(self, kernel, grid, block, shared_bytes) -> None:
        self._grid = tuple(int(v) for v in (tuple(grid) + (1, 1, 1))[:3])
        self._block = tuple(int(v) for v in (tuple(block) + (1, 1, 1))[:3])
        self._found = {}
        self._rows: dict[int, int] = {}  # block -> row of the shadow arrays
        self._free: list[int] = []
        self._count = np.zeros((0, 0), np.int32)  # copies in flight per (row, word)
        self._line = np.zeros((0, 0), np.int32)
        self._tid = np.zeros((0, 0), np.int32)
        self._live = 0  # words with a copy in flight, over all blocks: 0 makes every check free

    def _row(self, b: int, words: int) -> int:
        r = self._rows.get(b)
        if r is None:
            r = self._free.pop() if self._free else len(self._rows) + len(self._free)
            self._rows[b] = r
        rows, cols = self._count.shape
        if r >= rows or words > cols:
            # grow only the axis that is short (a block whose copies land at ever higher words
            # once doubled the rows on every growth: 2.4 GiB for one Triton matmul block)
            shape = (max(r + 1, 2 * rows) if r >= rows else rows,
                     max(words, 2 * cols, 64) if words > cols else cols)
            for name in ("_count", "_line", "_tid"):
                grown = np.zeros(shape, np.int32)
                grown[:rows, :cols] = getattr(self, name)
                setattr(self, name, grown)
        return r

    def _words(self, addrs, size):
        w = np.asarray(addrs, np.int64) // _WORD
        n = max(1, (int(size) + _WORD - 1) // _WORD)
        return (w[:, None] + np.arange(n)).reshape(len(w), n)

    def _by_block(self, blocks, words):
        """The distinct blocks (sorted), each lane's index into them, and the top word (of all
        blocks: it only sizes the shadow)."""
        ub, inv = np.unique(blocks, return_inverse=True)
        return ub, inv.reshape(-1), np.full(ub.size, int(words.max()), np.int64)

    def _add(self, r, words, delta: int) -> None:
        """count[r, words] += delta, once per occurrence (two lanes may name one word)."""
        flat = (r * self._count.shape[1] + words).ravel()
        u, n = np.unique(flat, return_counts=True)
        self._count.reshape(-1)[u] += (n * delta).astype(np.int32)

    def on_async_copy(self, inst, blocks, tids, addrs, size) -> None:
        blocks, tids, addrs = _tame(blocks, tids, addrs)
        if blocks.size == 0:
            return
        words = self._words(addrs, size)
        ub, inv, top = self._by_block(blocks, words)
        rows = np.array([self._row(b, w + 1) for b, w in zip(ub.tolist(), top.tolist())], np.int64)
        r = np.broadcast_to(rows[inv][:, None], words.shape)
        self._add(r, words, 1)
        self._line[r, words] = -1 if inst.line is None else int(inst.line)
        self._tid[r, words] = np.broadcast_to(tids[:, None], words.shape)  # per row, the last lane wins
        self._live += words.size

    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None) -> None:
        if space != "shared" or self._live <= 0 or len(tids) == 0:
            return
        blocks, tids, addrs = _tame(blocks, tids, addrs)
        if blocks.size == 0:
            return
        words = self._words(addrs, size)
        landing = op == "st" and inst.opcode.startswith("cp.async")
        if not landing and op == "st":
            return
        ub, inv, top = self._by_block(blocks, words)
        rows = np.array([self._rows.get(b, -1) for b in ub.tolist()], np.int64)
        for b, w, r in zip(ub.tolist(), top.tolist(), rows.tolist()):
            if r >= 0 and w >= self._count.shape[1]:
                self._row(b, w + 1)
        lr = rows[inv]
        tracked = lr >= 0  # lanes of blocks with no copy ever: nothing to check
        if not tracked.all():
            lr, words, tids, inv = lr[tracked], words[tracked], tids[tracked], inv[tracked]
            if lr.size == 0:
                return
        r = np.broadcast_to(lr[:, None], words.shape)
        if landing:
            self._add(r, words, -1)
            self._live -= words.size
            return
        hit = (self._count[r, words] > 0).any(axis=1)
        if hit.any():  # reported block by block, in block order, as the first hit names the finding
            for k in np.unique(inv[hit]).tolist():
                m = inv == k
                self._report(inst, int(ub[k]), tids[m], words[m], hit[m], int(rows[k]))

    def on_block_end(self, blocks) -> None:
        for b in np.unique(np.asarray(blocks, np.int64)).tolist():
            r = self._rows.pop(b, None)
            if r is not None:
                self._live -= int(self._count[r].sum())
                self._count[r] = 0
                self._free.append(r)

    def _report(self, inst, b, tids, w, hit, r) -> None:
        key = (inst.file, inst.line)
        n = int(hit.sum())
        if key in self._found:
            self._found[key][1] += n
            return
        i = int(np.argmax(hit))
        word = int(w[i][np.argmax(self._count[r][w[i]] > 0)])
        line, other = int(self._line[r, word]), int(self._tid[r, word])
        thread, block = _coords(int(tids[i]), self._block), _coords(b, self._grid)
        here = f"{inst.file or '?'}:{inst.line if inst.line is not None else '?'}"
        there = f"{inst.file or '?'}:{line if line >= 0 else '?'}"
        msg = (f"thread {_fmt(thread)} of block {_fmt(block)} reads shared memory at byte offset "
               f"{word * _WORD} ({here}) while the cp.async at {there} by thread {_fmt(_coords(other, self._block))} "
               "is still copying into it: wait for the copy first (cp.async.wait_group / "
               "__pipeline_wait_prior / cuda::pipeline wait), then __syncthreads() if other threads read it")
        f = Finding(kind="cp-async-unwaited", message=msg, file=inst.file, line=inst.line, block=block,
                    thread=thread, address=word * _WORD, space="shared",
                    other_thread=_coords(other, self._block), other_line=line if line >= 0 else None)
        self._found[key] = [f, n]


def _tame(blocks, tids, addrs):
    blocks, tids, addrs = np.asarray(blocks, np.int64), np.asarray(tids, np.int64), np.asarray(addrs, np.uint64)
    keep = addrs < _MAX_SHARED
    if not keep.all():
        blocks, tids, addrs = blocks[keep], tids[keep], addrs[keep]
    return blocks, tids, addrs


def _coords(linear: int, dims) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return (int(linear % x), int((linear // x) % y), int(linear // (x * y)))


def _fmt(xyz) -> str:
    return f"({xyz[0]},{xyz[1]},{xyz[2]})"
