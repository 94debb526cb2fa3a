"""Races on global memory within one launch, for the sanitizer (sanitizer.py).

The shadow covers only the bytes the launch has written (a growing window from the lowest to the
highest address written, one entry per 4 bytes until a narrower store refines it), so a kernel that
reads large inputs and writes a small output pays for the output only. Each entry holds the last
write: block, thread, line, the block's barrier epoch and the warp's sync epoch, a launch-wide
time, and whether it was an atomic.

Two accesses of one address are ordered when they come from one thread; from one block, when a
__syncthreads() of that block came between (or, for lanes of one warp, a __syncwarp()); from two
blocks, when the writer ran a fence after its write and the reader's block then ran an atomic, a
fence or a volatile load (the pattern of the CUDA sample threadFenceReduction: write, fence,
atomic ticket). Plain reads are recorded too (the last reader of each word: block, thread, line,
time, epochs), so a plain write after an unordered thread's read is race-war; a read of bytes
outside the window waits in a bounded log (READ_LOG lanes, the first ones of the launch) and is
entered when a write grows the window over it (an in-place update reads before anything is
written). Only a store of a value computed from a global load (an in-place update, found by
reading the registers backwards) is checked against the readers: a label or flag made from
indices and parameters (a BFS's level, a `found` flag) is a publish whose readers take the old
value or the new one by design. An unordered read of another thread's plain write is
reported when those bytes held garbage before the launch (the initcheck's unwritten marks: a
poisoned output, an empty buffer): an early reader gets the garbage. Over a defined value it sees
the old value or the new one, which some kernels accept on purpose (a BFS's labels), so it is left
alone; reads of words other threads update atomically are always reported (a total read while
others still add). Atomics never race with atomics; stores of the bytes already there, and several
lanes of one store writing the same value, are legal, unless that value is computed from a global
load (`x[i] += v` in lockstep, found by reading the registers backwards): a lost update.
"""
from __future__ import annotations

import numpy as np

from .global_reads import Reads
from .memory import GLOBAL_BASE

_SYNC_LOADS = ("volatile", "relaxed", "acquire")  # loads meant to see other threads' writes


class GlobalRaces(Reads):
    """The shadow of one launch's global writes. `report(kind, inst, here, other, why, count)` is
    the sanitizer's callback: here = (block, tid, byte offset from GLOBAL_BASE) of the access,
    other = (block, tid, line, atomic) of the earlier one, why = global | same-instruction |
    lost-update."""

    def __init__(self, mem, report, code=None) -> None:
        self.mem, self.report = mem, report
        self.code = code  # the module's instructions: whether a stored value came from a load (_derived)
        self._derived_cache: dict[int, bool] = {}
        self.start(1, 1)

    def start(self, nblocks: int, threads: int) -> None:
        self.lo = self.hi = 0  # byte window [lo, hi) of the shadow, relative to GLOBAL_BASE
        self.g = 4
        self.cols: dict[str, np.ndarray] = {}
        self.clock = 0
        self.threads = threads
        size = min(max(nblocks, 1), 1 << 16)
        self.fences: dict[int, list[int]] = {}  # per linear block: the times of its fences
        self.acquired = np.zeros(size, np.int64)  # per linear block: its last atomic, fence or volatile load
        self.last_load = np.zeros(0, np.int64)  # per (block slot, thread): the last word it loaded + 1
        self.read_log: list[tuple] = []  # (offsets, blocks, tids, line, time, epochs, wsyncs) outside the window
        self.logged = 0
        self.read_any = False  # whether the read columns hold a read (else a store checks no race-war)

    # ---- ordering events ------------------------------------------------------------------
    def _cover(self, blocks: np.ndarray) -> None:
        top = int(blocks.max()) + 1
        if top > self.acquired.size:
            n = max(top, 2 * self.acquired.size)
            self.acquired = np.concatenate([self.acquired, np.zeros(n - self.acquired.size, np.int64)])

    def fence(self, blocks) -> None:
        blocks = np.asarray(blocks, np.int64)
        if blocks.size:
            self.clock += 1
            self._cover(blocks)
            self.acquired[blocks] = self.clock
            for b in blocks.tolist():
                self.fences.setdefault(b, []).append(self.clock)

    def _published(self, writers: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Per write, the time of its block's first fence after it (0: none yet)."""
        out = np.zeros(writers.size, np.int64)
        for b in np.unique(writers).tolist():
            log = self.fences.get(b)
            if log:
                m = writers == b
                log = np.asarray(log, np.int64)
                k = np.searchsorted(log, times[m], side="right")
                out[m] = np.where(k < log.size, log[np.minimum(k, log.size - 1)], 0)
        return out

    def block_end(self, slots) -> None:
        slots = np.asarray(slots, np.int64)
        rows = self.last_load.size // max(self.threads, 1)
        slots = slots[slots < rows]
        if slots.size:
            self.last_load.reshape(rows, self.threads)[slots] = 0

    # ---- the window -------------------------------------------------------------------------
    def _grow(self, lo: int, hi: int) -> None:
        g = self.g
        lo, hi = lo // g * g, -(-hi // g) * g
        if self.cols and lo >= self.lo and hi <= self.hi:
            return
        if self.cols:
            lo, hi = min(lo, self.lo), max(hi, self.hi)
        n = (hi - lo) // g
        fresh = {"block": np.full(n, -1, np.int64), "tid": np.zeros(n, np.int32), "line": np.zeros(n, np.int32),
                 "time": np.zeros(n, np.int64), "epoch": np.zeros(n, np.int64), "wsync": np.zeros(n, np.int64),
                 "atomic": np.zeros(n, bool), "fresh": np.zeros(n, bool),
                 "r_block": np.full(n, -1, np.int64), "r_tid": np.zeros(n, np.int32),
                 "r_line": np.zeros(n, np.int32), "r_time": np.zeros(n, np.int64),
                 "r_epoch": np.zeros(n, np.int64), "r_wsync": np.zeros(n, np.int64)}
        if self.cols:
            at = (self.lo - lo) // g
            for k, col in self.cols.items():
                fresh[k][at:at + col.size] = col
        self.cols, self.lo, self.hi = fresh, lo, hi
        if self.read_log:
            self._replay_reads()

    def _refine(self, addrs: np.ndarray, size: int) -> None:
        low = int(np.bitwise_or.reduce(addrs)) | int(size) | self.g | self.lo
        g = low & -low
        if g >= self.g:
            return
        factor = self.g // g
        self.cols = {k: np.repeat(c, factor) for k, c in self.cols.items()}
        self.g = g

    def _words(self, off: np.ndarray, size: int):
        """Shadow indices of each lane's words (lanes inside the window only) and those lanes."""
        inside = np.flatnonzero((off >= self.lo) & (off < self.hi))
        if inside.size == 0:
            return None, None
        nw = max(1, size // self.g)
        w = (off[inside] - self.lo) // self.g
        if nw > 1:
            w = (w[:, None] + np.arange(nw)).ravel()
            inside = np.repeat(inside, nw)
        keep = w < self.cols["block"].size
        return w[keep], inside[keep]

    # ---- accesses ---------------------------------------------------------------------------
    def access(self, inst, op, blocks, tids, addrs, size, values, slots, epochs, wsyncs, fresh=None) -> None:
        """fresh: per lane of a store or atomic, whether its bytes held garbage before it (the
        initcheck's unwritten marks), or None when nothing is marked."""
        blocks = np.asarray(blocks, np.int64)
        tids = np.asarray(tids, np.int64)
        off = np.asarray(addrs, np.uint64).astype(np.int64) - GLOBAL_BASE
        self.clock += 1
        self._cover(blocks)
        if op == "ld":
            self._remember_loads(slots, tids, off)
            if any(m in inst.mods for m in _SYNC_LOADS):
                self.acquired[blocks] = self.clock
                return
            if self.cols and int(off.max()) >= self.lo and int(off.min()) < self.hi:
                self._check(inst, "race-raw", blocks, tids, off, size, slots, epochs, wsyncs, plain_only=False)
            self._record_reads(inst, blocks, tids, off, size, epochs, wsyncs)
            return
        if op != "st":  # an atomic: acquires, and never races with another atomic
            self.acquired[blocks] = self.clock
        if size < self.g or int(np.bitwise_or.reduce(off)) & (self.g - 1):
            self._refine(off, size)
        if op == "st":
            keep = self._changing(off, size, values)
            if keep is not None:
                blocks, tids, off, slots, epochs, wsyncs = (v[keep] for v in (blocks, tids, off, slots, epochs, wsyncs))
                fresh = None if fresh is None else fresh[keep]
                values = None if values is None else [v if np.ndim(v) == 0 else np.asarray(v)[keep] for v in values]
                if off.size == 0:
                    return
            self._same_instruction(inst, blocks, tids, off, slots, values, size)
        self._grow(int(off.min()), int(off.max()) + int(size))
        self._check(inst, "race-waw", blocks, tids, off, size, slots, epochs, wsyncs, plain_only=op != "st")
        if op == "st" and self.read_any and self._derived(inst):
            self._check(inst, "race-war", blocks, tids, off, size, slots, epochs, wsyncs, plain_only=False)
        w, lanes = self._words(off, size)
        c = self.cols
        c["block"][w], c["tid"][w] = blocks[lanes], tids[lanes]
        c["line"][w] = -1 if inst.line is None else int(inst.line)
        c["time"][w], c["epoch"][w], c["wsync"][w] = self.clock, epochs[lanes], wsyncs[lanes]
        c["atomic"][w] = op != "st"
        # garbage before this launch's first write stays garbage for a reader that comes too early
        c["fresh"][w] = c["fresh"][w] | (False if fresh is None else fresh[lanes])

    def _remember_loads(self, slots, tids, off) -> None:
        """Per thread, the last global word it loaded: a store of that word by several threads
        in one instruction is then a read-modify-write (a lost update), not a broadcast."""
        need = (int(slots.max()) + 1) * self.threads
        if need > self.last_load.size:
            grown = np.zeros(max(need, 2 * self.last_load.size), np.int64)
            grown[: self.last_load.size] = self.last_load
            self.last_load = grown
        self.last_load[slots * self.threads + tids] = off // 4 + 1

    def _changing(self, off, size, values):
        """Lanes whose store changes memory (None: all of them). A store of the bytes already
        there is invisible to every reader, so it races with nothing."""
        if values is None or not values:
            return None
        n = off.size
        w = int(size) // len(values)
        comps = []
        for v in values:
            a = np.asarray(v)
            if a.dtype.itemsize != w:
                a = a.astype(f"{'f' if a.dtype.kind == 'f' else 'u'}{w}")
            comps.append(np.ascontiguousarray(np.broadcast_to(a, (n,))).view(np.uint8).reshape(n, w))
        new = comps[0] if len(comps) == 1 else np.concatenate(comps, axis=1)
        buf = self.mem.buf
        idx = off[:, None] + np.arange(int(size))
        if int(off.min()) < 0 or int(idx.max()) >= buf.size:
            return None
        same = (buf[idx] == new).all(axis=1)
        return None if not same.any() else ~same

    def _same_instruction(self, inst, blocks, tids, off, slots, values, size) -> None:
        """Two threads storing to one word in one instruction: different values, or a value each
        computed from what it read there (a lost update), are a race."""
        if off.size < 2 or (off[1:] > off[:-1]).all():
            return
        order = np.lexsort((tids, blocks, off))
        o, b, t = off[order], blocks[order], tids[order]
        dup = np.flatnonzero((o[1:] == o[:-1]) & ((b[1:] != b[:-1]) | (t[1:] != t[:-1])))
        if dup.size == 0:
            return
        differ = np.zeros(dup.size, bool)
        for v in values or ():
            a = np.asarray(v)
            if a.ndim:
                a = a[order]
                differ |= a[dup] != a[dup + 1]
        rmw = np.zeros(dup.size, bool)
        for k in range(min(dup.size, 64) if self._derived(inst) else 0):
            i, j = order[dup[k]], order[dup[k] + 1]
            rmw[k] = (self._loaded(slots[i], tids[i]) == off[i] // 4 + 1) and \
                     (self._loaded(slots[j], tids[j]) == off[j] // 4 + 1)
        hit = np.flatnonzero(differ | rmw)
        if hit.size:
            k = int(hit[0])
            i, j = int(order[dup[k] + 1]), int(order[dup[k]])
            line = -1 if inst.line is None else int(inst.line)
            why = "lost-update" if rmw[k] else "same-instruction"
            self.report("race-waw", inst, (int(blocks[i]), int(tids[i]), int(off[i])),
                        (int(blocks[j]), int(tids[j]), line, False), why, int(hit.size))

    def _loaded(self, slot, tid) -> int:
        k = int(slot) * self.threads + int(tid)
        return int(self.last_load[k]) if k < self.last_load.size else -1

    def _check(self, inst, kind, blocks, tids, off, size, slots, epochs, wsyncs, plain_only) -> None:
        w, lanes = self._words(off, size)
        if w is None or w.size == 0:
            return
        c = self.cols
        if kind == "race-war":  # the earlier access is the word's last plain read
            c = {k[2:]: v for k, v in c.items() if k.startswith("r_")}
            c["atomic"] = np.zeros(0, bool)
        wb = c["block"][w]
        live = wb >= 0
        if plain_only:
            live &= ~c["atomic"][w]
        elif kind == "race-raw":
            # a plain write over a defined value: an early reader sees the old value or the new one,
            # which a kernel may accept (a BFS's labels); over garbage it may see the garbage
            live &= c["atomic"][w] | c["fresh"][w]
        rb, rt = blocks[lanes], tids[lanes]
        live &= (wb != rb) | (c["tid"][w] != rt)
        if not live.any():
            return
        k = np.flatnonzero(live)
        w, lanes, wb, rb, rt = w[k], lanes[k], wb[k], rb[k], rt[k]
        wt = c["time"][w]
        same = wb == rb
        # one block: a barrier since (the epoch moved), or one warp's lanes with a __syncwarp since
        ordered = same & ((epochs[lanes] != c["epoch"][w]) |
                          ((rt // 32 == c["tid"][w] // 32) & (wsyncs[lanes] > c["wsync"][w])))
        # two blocks: the writer fenced after writing and the reader's block acquired after that
        other = ~same
        if other.any():
            f = self._published(wb[other], wt[other])
            ordered[other] = (f > 0) & (self.acquired[rb[other]] > f)
            if kind == "race-waw":  # a store after atomics its own block's atomic came after
                at = c["atomic"][w[other]]
                ordered[other] |= at & (self.acquired[rb[other]] >= wt[other])
        bad = np.flatnonzero(~ordered)
        if bad.size == 0:
            return
        # the pair to name: another block's first, else another warp's (the wider barrier is missing)
        cross = bad[~same[bad]]
        if cross.size == 0:
            cross = bad[(rt[bad] // 32) != (c["tid"][w[bad]] // 32)]
        pick = int(cross[0]) if cross.size else int(bad[0])
        x = int(w[pick])
        self.report(kind, inst, (int(rb[pick]), int(rt[pick]), int(off[lanes[pick]])),
                    (int(wb[pick]), int(c["tid"][x]), int(c["line"][x]), kind != "race-war" and bool(c["atomic"][x])),
                    "global", int(bad.size))
